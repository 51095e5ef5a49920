import Foundation

/// What a store does for a ``SyncSession`` and a ``ReplicaClient``: it parses pages through
/// its front end (the same parser, routes and maps for every store), commits a session's
/// staged pages in one transaction with the client's validators, reads them back, and deletes
/// one row after the API deleted its object.
///
/// The SQLite ``SyncEngine`` and `PostgresReplica` (in `ReplicaPostgres`) conform. The session
/// and the client are the same code on both: staging, 304 vouching, traversal and stale-row
/// rules live in them, and only the transaction is the store's own.
package protocol SessionBackend: ReplicaStore {
    /// The routes, property maps and parser every page goes through.
    var frontEnd: SyncFrontEnd { get }

    /// The entity named `name`, or a ``StoreError`` naming the store.
    func requireEntity(_ name: String) throws -> Entity

    /// Writes a session's staged rows, deletes its stale rows and writes its validators, in one
    /// transaction, then publishes the change set (announces it, where other processes listen).
    ///
    /// - Returns: The change set and how long the store's write lock was held.
    /// - Throws: ``SyncError``, or the database's own error; nothing is written then.
    func commitSession(_ commit: SessionCommit) async throws -> (changes: ChangeSet, writeLockDuration: Duration?)

    /// What the client recorded for a request URL (validators, cursor, a page's keys), if anything.
    func clientCacheEntry(for url: String) async throws -> ClientCache.Entry?
}

/// What a ``SyncSession`` hands its store to commit.
package struct SessionCommit: @unchecked Sendable {
    /// The staged pages' rows, in staging order. `@unchecked Sendable`: the session is busy
    /// (no other call touches them) until the commit returns.
    package let staged: StagedRows
    package let plan: SyncPlan
    /// The entities whose stale rows go (complete collections the route deletes stale rows of), sorted.
    package let deleting: [Int]
    /// The keys that count as seen, by entity index: staged top-level objects, skipped ones, vouched pages.
    package let seen: [PrimaryKeys]
    /// Whether every seen key names a staged top-level row (nothing vouched for, nothing skipped).
    package let seenAllStaged: Bool
    /// The client's records (validators, cursors, page keys) to write in the same transaction.
    package let records: [ClientCache.Record]
    /// What is synced, for errors.
    package let source: String

    /// The keys a store that knows its staged top-level rows must also keep: all seen keys
    /// when some of them were vouched for or skipped, else none.
    package func keeping(_ entity: Int) -> PrimaryKeys {
        seenAllStaged ? PrimaryKeys() : seen[entity]
    }
}

extension SyncEngine: SessionBackend {
    /// The entity named `name`, or a ``StoreError`` naming the database file.
    package func requireEntity(_ name: String) throws -> Entity {
        try store.requireEntity(name)
    }

    package func commitSession(_ commit: SessionCommit) async throws -> (changes: ChangeSet, writeLockDuration: Duration?) {
        let maps = mapping.maps
        let observers = self.observers
        let sequence = self.sequence
        let clock = ContinuousClock()
        return try await store.database.write { db in
            let started = clock.now
            if Task.isCancelled { throw SyncError(.cancelled, "cancelled; nothing was written", source: commit.source) }
            let writer = try RowWriter(db: db, maps: maps, trackSeen: [])
            try commit.staged.replay { batch in try writer.write(batch) }
            for entity in commit.deleting {
                try writer.deleteStale(entity: entity, scope: entity == commit.plan.targetEntity ? commit.plan.scope : nil,
                                       keeping: commit.seen[entity], allStored: commit.seenAllStaged)
            }
            try ClientCache.write(commit.records, in: db)
            let changes = ChangeSet(sequence: sequence.next(), entities: writer.entityChanges())
            if !changes.isEmpty { db.afterNextTransaction { _ in observers.publish(changes) } }
            return (changes, started.duration(to: clock.now))
        }
    }

    package func clientCacheEntry(for url: String) async throws -> ClientCache.Entry? {
        try await store.database.read { db in try ClientCache.entry(for: url, in: db) }
    }
}
