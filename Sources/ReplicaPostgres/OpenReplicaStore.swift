import Foundation
import ReplicaCore
import ReplicaSQLite

/// Opens the store a URL names, as the `replica` tool's `--db` does: `postgres://…` (or
/// `postgresql://…`) a ``PostgresReplica``, `sqlite:PATH`, `file:PATH` or a plain path an SQLite
/// ``ReplicaSQLite/SQLiteReplica`` (the file is created when missing).
///
/// ```swift
/// let store = try await openReplicaStore(url: ProcessInfo.processInfo.environment["REPLICA_DB"] ?? "cache.sqlite",
///                                        schema: schema)
/// _ = try await store.importFile("people.json", into: .entity("Person"), options: SyncOptions())
/// await store.close()
/// ```
///
/// - Parameters:
///   - url: The database.
///   - schema: The schema; `nil` uses the one the database records.
///   - transforms: Custom transforms named by the schema's attributes.
/// - Throws: ``PostgresStoreError`` or ``ReplicaCore/StoreError`` naming the database (a URL
///   without its password).
public func openReplicaStore(url: String, schema: Schema? = nil, transforms: TransformRegistry = TransformRegistry())
async throws -> any ReplicaStore {
    if PostgresURL.isPostgres(url) {
        return try await PostgresReplica.open(url: url, schema: schema, transforms: transforms)
    }
    var path = url
    for prefix in ["sqlite://", "sqlite:", "file://", "file:"] where path.hasPrefix(prefix) {
        path = String(path.dropFirst(prefix.count))
        break
    }
    return try SQLiteReplica(path: path, schema: schema, transforms: transforms)
}
