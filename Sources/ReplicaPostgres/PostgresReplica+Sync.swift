import Foundation
import Logging
import NIOCore
import PostgresNIO
import ReplicaCore

/// The PostgreSQL replica's write transaction: on one connection, inside postgres-nio's
/// `withTransaction`, the job's rows stream into temporary stage tables with `COPY … FROM STDIN`
/// (locking nothing), one merge statement per entity upserts them under the tables' advisory
/// locks, stale rows go, the client's records are written, and the change set is announced with
/// `NOTIFY`, which PostgreSQL sends only when the transaction commits.
extension PostgresReplica: StoreBackend {
    /// Stage tables are the connection's own: a body that streams in slowly holds no lock.
    package var stagingHoldsWriteLock: Bool { false }

    /// Every transaction has a connection of its own.
    package var readsBesideWrites: Bool { true }

    package func perform(_ job: WriteJob) async throws -> WriteOutcome {
        let frontEnd = self.frontEnd
        let origin = self.origin
        let outcome: (WriteOutcome, ContinuousClock.Instant?)
        do {
            outcome = try await transaction { session in
                if let timeout = job.busyTimeout { try await session.limitLockWait(seconds: timeout) }
                return try await Self.write(job, in: session, frontEnd: frontEnd, origin: origin)
            }
        } catch let timeout as PostgresWriteSession.LockTimeout {
            throw SyncError(.busy, "\(url): " + StoreError.lockWaitMessage(holder: "another writer holds a lock on the tables",
                                                                       waited: timeout.waited, timeout: job.busyTimeout ?? 0)
                            + "; nothing was written", source: job.source)
        }
        var result = outcome.0
        result.writeLockDuration = outcome.1.map { $0.duration(to: ContinuousClock.now) }
        if !result.changes.isEmpty { observers.publish(result.changes, trace: job.trace) }
        return result
    }

    /// The job's statements inside its transaction: stage, merge, stale deletions, a deleted
    /// row, the client's records, the announcement; with when the first table lock was taken.
    private static func write(_ job: WriteJob, in session: PostgresWriteSession, frontEnd: SyncFrontEnd,
                              origin: String) async throws -> (WriteOutcome, ContinuousClock.Instant?) {
        var summary: ReaderSummary?
        var job = job
        switch job.rows {
        case .none: break
        case .stream(let stream, _): summary = try await session.stage(stream)
        case .staged(let staged): try await session.stage(staged.value)
        case .live(let live): job.end(with: try await session.stage(live, source: job.source))
        }
        let (deletions, skipped) = job.deletions(after: summary, frontEnd: frontEnd)
        var changes = try await session.merge(deletions)
        if let row = job.deletedRow {
            session.record(try await session.delete(entity: row.entity, key: row.key), of: row.entity, into: &changes)
            PostgresWriteSession.normalize(&changes)
        }
        for tombstones in job.tombstones where !tombstones.keys.isEmpty {
            for key in tombstones.keys {
                let deletion = try await session.delete(entity: tombstones.entity, key: key, scope: tombstones.scope)
                session.record(deletion, of: tombstones.entity, into: &changes)
            }
            PostgresWriteSession.normalize(&changes)
        }
        try await ClientCacheTable.write(job.records, on: session)
        var sequence: UInt64 = 0
        if !changes.isEmpty { sequence = try await ChangeAnnouncement.announce(changes, origin: origin, on: session) }
        let reported = job.reportedEntity.map { session.stagedTopKeys(of: $0) } ?? PrimaryKeys()
        // From the merge's first table lock to the commit: what other writers of those tables waited.
        return (WriteOutcome(changes: ChangeSet(sequence: sequence, entities: changes), summary: summary, skipped: skipped,
                             reportedKeys: reported, writeLockDuration: nil), session.lockedSince)
    }

    /// A PostgreSQL error in the user's terms, naming the replica's URL (without its password).
    package func describe(_ error: any Error) -> String {
        PostgresStoreError.from(error, url: url).description
    }

    /// Runs `body` with a write session in one transaction on a connection of the replica's own
    /// (postgres-nio's `withTransaction`: `BEGIN`, then `COMMIT`, or `ROLLBACK` when it throws).
    ///
    /// - Throws: What `body` threw (unwrapped from postgres-nio's transaction error), or the
    ///   error of `BEGIN` or `COMMIT`; nothing is written then.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresWriteSession) async throws -> T) async throws -> T {
        let mapping = frontEnd.mapping
        let logger = self.logger
        let url = self.url
        return try await connections.withConnection { connection in
            try await connection.transaction(logger: logger) { connection in
                try await body(PostgresWriteSession(connection: connection, mapping: mapping, logger: logger, url: url))
            }
        }
    }
}

extension PostgresConnection {
    /// Runs `body` in one transaction (`BEGIN`, then `COMMIT`, or `ROLLBACK` when it throws):
    /// every transaction of the replica goes through here.
    ///
    /// A connection that closed in the middle (dropped by the network, terminated by the server)
    /// took its transaction with it: PostgreSQL rolls back a session's open transaction when the
    /// session ends. No `ROLLBACK` is sent on it then: postgres-nio's `withTransaction` sent one,
    /// and on a connection that closed during a `COPY` it never returned, so the sync hung.
    ///
    /// - Throws: What `body` threw, or the error of `BEGIN` or `COMMIT`; nothing is written then.
    func transaction<T: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await query("BEGIN;", logger: logger)
        do {
            let value = try await body(self)
            try await query("COMMIT;", logger: logger)
            return value
        } catch {
            if !isClosed { _ = try? await query("ROLLBACK;", logger: logger) }
            throw error
        }
    }
}
