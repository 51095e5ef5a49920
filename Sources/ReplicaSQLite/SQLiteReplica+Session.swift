import Foundation
import GRDB
import ReplicaCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    package func sendingOutbox<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T? {
        // An in-memory store has one process by nature.
        guard let path = store.path else { return try await body() }
        // `flock` on a file beside the database: held by this open file description, dropped by
        // the kernel when the process ends however it ends.
        let lockPath = path + "-outbox-lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw SyncError(.database, "\(location): cannot open \(lockPath) to send the outbox: \(String(cString: strerror(errno)))")
        }
        defer { closeDescriptor(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            if errno == EWOULDBLOCK { return nil }
            throw SyncError(.database, "\(location): cannot lock \(lockPath) to send the outbox: \(String(cString: strerror(errno)))")
        }
        defer { flock(descriptor, LOCK_UN) }
        return try await body()
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

/// `close(2)`, which `SQLiteReplica.close()` hides inside its extensions.
private func closeDescriptor(_ descriptor: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(descriptor)
    #elseif canImport(Darwin)
    _ = Darwin.close(descriptor)
    #endif
}
