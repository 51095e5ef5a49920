import ReplicaClientKit
import ReplicaCore
import ReplicaSQLite

/// A client over an SQLite replica.
extension ReplicaClient {
    /// A client syncing into an SQLite engine.
    ///
    /// ```swift
    /// let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(
    ///     transport: HTTPTransport(), baseURLs: [.production: api]))
    /// ```
    public convenience init(engine: SQLiteReplica, configuration: ClientConfiguration) {
        self.init(store: engine, configuration: configuration)
    }
}
