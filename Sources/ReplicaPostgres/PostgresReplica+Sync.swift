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

    /// The job's statements inside its transaction, as the write driver runs them; with when
    /// the first table lock was taken.
    private static func write(_ job: WriteJob, in session: PostgresWriteSession, frontEnd: SyncFrontEnd,
                              origin: String) async throws -> (WriteOutcome, ContinuousClock.Instant?) {
        let transaction = PostgresTransaction(session: session, origin: origin)
        let outcome = try await job.run(in: transaction, frontEnd: frontEnd)
        // From the merge's first table lock to the commit: what other writers of those tables waited.
        return (outcome, session.lockedSince)
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

/// The PostgreSQL replica's transaction for the write driver: a write session on one connection.
/// Rows are copied into stage tables (locking nothing) and merged when the driver settles them;
/// the change set is announced with `NOTIFY`, delivered only if the transaction commits.
final class PostgresTransaction: StoreTransaction {
    let session: PostgresWriteSession
    let origin: String
    /// What the merge and the deletions changed so far.
    private var changes: [String: EntityChanges] = [:]

    init(session: PostgresWriteSession, origin: String) {
        self.session = session
        self.origin = origin
    }

    func write(_ stream: ParsedStream, patience: Double?, source: String) async throws -> ReaderSummary {
        try await session.stage(stream)
    }

    func write(_ staged: UncheckedBox<StagedRows>) async throws {
        try await session.stage(staged.value)
    }

    func write(_ live: LiveTransaction, source: String) async throws -> LiveTransaction.Ending {
        try await session.stage(live, source: source)
    }

    func settle(_ deletions: [StaleDeletion]) async throws {
        changes = try await session.merge(deletions)
    }

    func delete(entity: Int, key: AttributeValue) async throws {
        session.record(try await session.delete(entity: entity, key: key), of: entity, into: &changes)
        PostgresWriteSession.normalize(&changes)
    }

    func delete(_ tombstones: Tombstones) async throws {
        for key in tombstones.keys {
            let deletion = try await session.delete(entity: tombstones.entity, key: key, scope: tombstones.scope)
            session.record(deletion, of: tombstones.entity, into: &changes)
        }
        PostgresWriteSession.normalize(&changes)
    }

    func write(_ records: [ClientCache.Record]) async throws {
        try await ClientCacheTable.write(records, on: session)
    }

    func writtenKeys(of entity: Int) async throws -> PrimaryKeys {
        session.stagedTopKeys(of: entity)
    }

    func changesSoFar() async throws -> [String: EntityChanges] { changes }

    var dialect: SQLDialect { .postgres }

    func execute(_ sql: String, _ arguments: [AttributeValue]) async throws {
        try await session.execute(sql, arguments)
    }

    func select(_ sql: String, _ arguments: [AttributeValue], types: [AttributeType]) async throws -> [[AttributeValue]] {
        var rows: [[AttributeValue]] = []
        for try await row in try await session.connection.query(PostgresSQL.query(sql, arguments), logger: session.logger) {
            var values: [AttributeValue] = []
            for (index, cell) in row.enumerated() where index < types.count {
                values.append(try PostgresSQL.value(cell, type: types[index]))
            }
            rows.append(values)
        }
        return rows
    }

    func changeSet(folding rebase: RebaseChanges) async throws -> ChangeSet {
        if !rebase.isEmpty {
            rebase.fold(into: &changes)
            PostgresWriteSession.normalize(&changes)
        }
        var sequence: UInt64 = 0
        if !changes.isEmpty { sequence = try await ChangeAnnouncement.announce(changes, origin: origin, on: session) }
        return ChangeSet(sequence: sequence, entities: changes)
    }
}
