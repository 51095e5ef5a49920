import Foundation
import Logging
import Replica
import ReplicaHTTP
import ServiceLifecycle
import UnixSignals

/// README "Running in a service": a replica kept live by a ``ReplicaService`` under a
/// `ServiceGroup`, beside the service's own services, until SIGTERM or SIGINT.
///
/// - Parameters:
///   - schema: The schema (its routes may declare `incremental` and `push`).
///   - databasePath: The SQLite file.
///   - apiURL: The API's base URL.
///   - otherServices: The service's own services (its HTTP server, say), run in the same group.
///   - signals: The signals that shut the group down gracefully: `[.sigterm, .sigint]` in a service;
///     none in a test process (a handled signal is ignored by every child process spawned after).
///   - logger: Where statuses and failures go.
public func serviceExample(schema: Schema, databasePath: String, apiURL: URL, otherServices: [any Service],
                           signals: [UnixSignal], logger: Logger) async throws {
    // README: service
    let store = try Store(path: databasePath, schema: schema)   // or openReplicaStore(url: "postgres://…?sslmode=verify-full&…")
    let client = ReplicaClient(engine: try SQLiteReplica(store: store),
                               configuration: ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: apiURL]))
    let replica = try ReplicaService(client: client, syncs: [
        .init("/people", every: .seconds(30)),                  // incremental and pushed when the route says so
        .init("/people/1/cars", every: .seconds(300)),
    ], logger: logger)
    let statusLog = Task {
        for await status in replica.statuses() where status.phase == .waiting {
            logger.info("\(status)")                            // /people: ok 0.0 s ago (incremental, 1 page, …), next in 30.0 s
        }
    }
    // Your webhook handler: client.poke("/people/7") syncs /people now.
    let group = ServiceGroup(configuration: .init(services: [replica] + otherServices,
                                                  gracefulShutdownSignals: signals, logger: logger))   // [.sigterm, .sigint]
    try await group.run()                                       // until SIGTERM: the sync under way commits, the store closes
    await statusLog.value
    // README: end
}
