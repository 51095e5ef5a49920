import Foundation
import Logging
import NIOCore
import PostgresNIO
import ReplicaCore

/// What a sync session and the HTTP client read from a PostgreSQL replica besides rows: the
/// client's records (validators, cursors, page keys), shared by every service of the database.
extension PostgresReplica {
    package func clientCacheEntry(for url: String) async throws -> ClientCache.Entry? {
        do {
            return try await connections.withConnection { connection in
                try await ClientCacheTable.entry(for: url, on: connection, logger: self.logger)
            }
        } catch {
            throw SyncError(.database, PostgresStoreError.from(error, url: self.url, doing: "cannot read the client's records").description,
                            source: url, underlying: error)
        }
    }

    package func sendingOutbox<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T? {
        let logger = self.logger
        let url = self.url
        // A connection of its own holds the lock for the whole push: the server drops it with the
        // session should the process die (and `withConnection` closes a connection whose body threw).
        return try await connections.withConnection { connection -> T? in
            var taken = false
            do {
                for try await held in try await connection.query(
                    PostgresSQL.query("SELECT pg_try_advisory_lock(\(OutboxTable.sendingLockKey))"), logger: logger).decode(Bool.self) {
                    taken = held
                }
            } catch {
                throw SyncError(.database, PostgresStoreError.from(error, url: url, doing: "cannot take the outbox's sending lock").description,
                                underlying: error)
            }
            guard taken else { return nil }
            let result = try await body()
            _ = try await connection.query(PostgresSQL.query("SELECT pg_advisory_unlock(\(OutboxTable.sendingLockKey))"),
                                           logger: logger).collect()
            return result
        }
    }

    package func readOutbox(_ sql: String, _ arguments: [AttributeValue], types: [AttributeType]) async throws -> [[AttributeValue]] {
        do {
            return try await connections.withConnection { connection in
                var rows: [[AttributeValue]] = []
                for try await row in try await connection.query(PostgresSQL.query(sql, arguments), logger: self.logger) {
                    var values: [AttributeValue] = []
                    for (index, cell) in row.enumerated() where index < types.count {
                        values.append(try PostgresSQL.value(cell, type: types[index]))
                    }
                    rows.append(values)
                }
                return rows
            }
        } catch {
            throw SyncError(.database, PostgresStoreError.from(error, url: self.url, doing: "cannot read the outbox").description,
                            underlying: error)
        }
    }
}

/// The HTTP client's records in PostgreSQL: table `replica_http_cache`, created when the
/// replica is opened, written in the transaction of the rows they describe.
enum ClientCacheTable {
    static let columns = "etag, last_modified, cursor, next_url, keys, paged"

    static func entry(for url: String, on connection: PostgresConnection, logger: Logger) async throws -> ClientCache.Entry? {
        let query = PostgresSQL.query("SELECT \(columns) FROM \(ClientCache.table.quotedIdentifier) WHERE url = ?", [.string(url)])
        var found: ClientCache.Entry?
        let rows = try await connection.query(query, logger: logger)
        for try await (etag, modified, cursor, next, keys, paged)
                in rows.decode((String?, String?, String?, String?, ByteBuffer?, Bool).self) {
            var entry = ClientCache.Entry(etag: etag, lastModified: modified, cursor: cursor, next: next)
            entry.encodedKeys = keys.map { Array($0.readableBytesView) }
            entry.paged = paged
            found = entry
        }
        return found
    }

    /// Upserts `records` inside the session's transaction.
    static func write(_ records: [ClientCache.Record], on session: PostgresWriteSession) async throws {
        for (url, entry) in records {
            var bindings = PostgresBindings(capacity: 7)
            bindings.append(url)
            bindings.append(entry.etag)
            bindings.append(entry.lastModified)
            bindings.append(entry.cursor)
            bindings.append(entry.next)
            bindings.append(entry.encodedKeys.map { ByteBuffer(bytes: $0) })
            bindings.append(entry.paged)
            let sql = "INSERT INTO \(ClientCache.table.quotedIdentifier) (url, \(columns)) VALUES ($1, $2, $3, $4, $5, $6, $7) "
                + (entry.onlyCursor
                    ? "ON CONFLICT (url) DO UPDATE SET cursor = excluded.cursor"
                    : "ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified, "
                        + "cursor = excluded.cursor, next_url = excluded.next_url, keys = excluded.keys, paged = excluded.paged")
            _ = try await session.connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: session.logger).collect()
        }
    }
}
