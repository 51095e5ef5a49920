import Foundation
import Logging
import Replica

/// README "Writing": a service's handler writes locally, whether the API can be reached or not,
/// and pushes the outbox; rejected writes are logged and dropped.
///
/// ```swift
/// let pushed = try await writingExample(client: client, logger: logger)   // 2 confirmed, 0 rejected, 0 still pending
/// ```
///
/// - Parameters:
///   - client: A client of a people API (`Schemas/people.json`) whose store holds Person 7.
///   - logger: Where the queued and rejected writes are logged.
/// - Returns: What the push did.
public func writingExample(client: ReplicaClient, logger: Logger) async throws -> PushResult {
    // README: writing
    let store = client.store
    let ann = try await store.saveLocally("Person", ["name": .string("Ann"), "numberOfKids": .integer(2)])
    logger.info("\(ann)")                                               // #1 create Person -1 (name, numberOfKids)
    try await store.deleteLocally("Person", key: .integer(7))           // gone from queries at once
    let pushed = try await client.push()                                // 2 confirmed, 0 rejected, 0 still pending
    for rejected in try await store.outbox(.rejected) {                 // the API said no: its answer is kept
        logger.warning("\(rejected): \(rejected.rejection?.body ?? "")")
        try await store.discardMutation(rejected.id)                    // or retryMutation(rejected.id, changes: …)
    }
    // README: end
    return pushed
}
