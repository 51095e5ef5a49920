import Foundation
import GRDB
import ReplicaCore

/// What a sync session and the HTTP client read from an SQLite replica besides rows: the
/// client's records (validators, cursors, page keys), kept in the `replica_http_cache` table
/// and written in the transaction of the rows they describe.
extension SQLiteReplica {
    package func clientCacheEntry(for url: String) async throws -> ClientCache.Entry? {
        do {
            return try await store.database.read { db in try ClientCache.entry(for: url, in: db) }
        } catch {
            throw SyncError(.database, "\(location): cannot read the client's records: \(Store.describe(error))", source: url,
                            underlying: error)
        }
    }

    package func readOutbox(_ sql: String, _ arguments: [AttributeValue], types: [AttributeType]) async throws -> [[AttributeValue]] {
        do {
            return try await store.database.read { db in
                // A file that never queued a local write has no outbox yet.
                guard try db.replicaTableExists(OutboxTable.name) else { return [] }
                return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).map { row in
                    types.indices.map { index in
                        let stored = AttributeValue.fromDatabaseValue(row[index] as DatabaseValue) ?? .null
                        return stored.isNull ? .null : AttributeValue(stored: stored, type: types[index])
                    }
                }
            }
        } catch {
            throw SyncError(.database, "\(location): cannot read the outbox: \(Store.describe(error))", underlying: error)
        }
    }
}
