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

/// README "Writing": a service that sends its outbox on its own, with a conflict policy per
/// entity, and logs the outbox's status after each push.
///
/// ```swift
/// let service = try writingServiceExample(store: store, transport: transport, base: base, logger: logger)
/// ```
///
/// - Parameters:
///   - store: A store of the people API (`Schemas/people.json`).
///   - transport: The HTTP transport.
///   - base: The API's base URL.
///   - logger: Where the outbox's statuses are logged.
/// - Returns: The service, to run in a `ServiceGroup`.
public func writingServiceExample(store: any ReplicaStore, transport: any Transport, base: URL,
                                  logger: Logger) throws -> ReplicaService {
    // README: writing-service
    var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: base])
    configuration.conflictPolicies["Person"] = .mergeFields          // on a 412 or 409: the attributes changed here win
    configuration.conflictPolicies["Car"] = .resolve { conflict in   // or decide on the API's row as it is now
        conflict.server?["color"] == .string("red") ? .serverWins : .clientWins
    }
    let client = ReplicaClient(store: store, configuration: configuration)
    let service = try ReplicaService(client: client, syncs: [.init("/people", every: .seconds(60))],
                                     outbox: .init(every: .seconds(5)))   // and at once after each local write
    Task {
        for await status in service.outboxStatuses() {
            logger.info("outbox: \(status)")                           // 1 pending (oldest 12 s), 0 rejected; last error: …
        }
    }
    // README: end
    return service
}
