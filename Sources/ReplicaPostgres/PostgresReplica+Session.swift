import Foundation
import Logging
import NIOCore
import PostgresNIO
import Replica

extension PostgresReplica: SessionBackend {
    /// Starts a sync session for `path`: its pages are parsed and staged outside the database
    /// (a slow page holds no connection and no lock), then committed together in one
    /// transaction: `COPY` into temporary tables, one merge per entity under the collection's
    /// advisory lock, stale-row deletion, and one announced change set.
    ///
    /// ```swift
    /// let session = try replica.session(.get, "/people")
    /// _ = try await session.stage(body: page1)
    /// _ = try await session.stage(body: page2)
    /// let result = try await session.commit(complete: true)
    /// ```
    ///
    /// - Throws: ``Replica/SyncError`` when no route matches.
    public func session(_ method: HTTPMethod = .get, _ path: String, options: SyncOptions = SyncOptions()) throws -> SyncSession {
        try startSession(.route(method, path), source: "\(method) \(path)", options: options)
    }

    /// Starts a sync session writing into `target`.
    ///
    /// ```swift
    /// let session = try replica.session(.entity("Person"), source: "people feed")
    /// ```
    ///
    /// - Throws: ``Replica/SyncError`` when the target is unknown.
    public func session(_ target: ImportTarget, source: String = "input", options: SyncOptions = SyncOptions()) throws -> SyncSession {
        try startSession(target, source: source, options: options)
    }

    /// Deletes one row (after the API deleted its object) under its table's advisory lock, and
    /// announces the change set.
    ///
    /// ```swift
    /// try await replica.delete("Post", key: .integer(7))
    /// ```
    ///
    /// - Throws: ``Replica/SyncError`` (unknown entity, a database error naming the URL).
    @discardableResult
    public func delete(_ entity: String, key: AttributeValue) async throws -> ChangeSet {
        guard let index = frontEnd.mapping.maps.firstIndex(where: { $0.entity.name == entity }) else {
            throw SyncError(.unknownEntity, "unknown entity '\(entity)'")
        }
        let (changes, _) = try await transaction(source: "delete \(entity) \(key)") { session in
            try await session.delete(entity: index, key: key, origin: self.origin)
        }
        return changes
    }

    package func commitSession(_ commit: SessionCommit) async throws -> (changes: ChangeSet, writeLockDuration: Duration?) {
        try await transaction(source: commit.source) { session in
            // Staging takes no lock on the replica's tables: the merge below takes them.
            try await session.stage(commit.staged)
            return try await session.merge(plan: commit.plan, deleting: commit.deleting, keeping: { commit.keeping($0) },
                                           origin: self.origin)
        } alsoWriting: { session in
            try await ClientCacheTable.write(commit.records, on: session)
        }
    }

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

    /// Runs `body` then `alsoWriting` in one transaction, then publishes the change set `body`
    /// returned; returns it with how long the transaction held the replica's locks (from the
    /// end of staging, when the merge takes them, to the commit).
    ///
    /// - Throws: ``Replica/SyncError`` naming `source` (a database error names the URL); the
    ///   transaction is then rolled back.
    private func transaction(source: String, _ body: @escaping @Sendable (PostgresWriteSession) async throws -> ChangeSet,
                             alsoWriting: (@Sendable (PostgresWriteSession) async throws -> Void)? = nil)
    async throws -> (changes: ChangeSet, writeLockDuration: Duration?) {
        let maps = frontEnd.mapping.maps
        let logger = self.logger
        let url = self.url
        let result: (ChangeSet, Duration?)
        do {
            result = try await connections.withConnection { connection in
                let session = PostgresWriteSession(connection: connection, maps: maps, logger: logger, url: url)
                try await session.execute("BEGIN")
                do {
                    let changes = try await body(session)
                    try await alsoWriting?(session)
                    try await session.execute("COMMIT")
                    return (changes, session.lockedSince.map { $0.duration(to: ContinuousClock.now) })
                } catch {
                    try? await session.execute("ROLLBACK")
                    throw error
                }
            }
        } catch let error as SyncError {
            throw error
        } catch {
            if Task.isCancelled || error is CancellationError {
                throw SyncError(.cancelled, "cancelled; nothing was written", source: source)
            }
            throw SyncError(.database, PostgresStoreError.from(error, url: url).description, source: source, underlying: error)
        }
        if !result.0.isEmpty { observers.publish(result.0) }
        return result
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
                + "ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified, "
                + "cursor = excluded.cursor, next_url = excluded.next_url, keys = excluded.keys, paged = excluded.paged"
            _ = try await session.connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: session.logger).collect()
        }
    }
}
