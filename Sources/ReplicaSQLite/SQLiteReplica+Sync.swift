import Foundation
import GRDB
import GRDBSQLite
import ReplicaCore

/// The SQLite replica's write transaction: one GRDB write on the single writer's queue, where
/// the row writer upserts the job's rows as they come, deletes its stale rows and writes the
/// client's records; the change set is published right after the commit, on that queue, so
/// observers receive commits in order.
extension SQLiteReplica: StoreBackend {
    /// Rows parsed as a body streams in are written inside the single writer's transaction.
    package var stagingHoldsWriteLock: Bool { true }

    /// A file's pool reads beside its writer; an in-memory queue does not.
    package var readsBesideWrites: Bool { store.database is DatabasePool }

    package func perform(_ job: WriteJob) async throws -> WriteOutcome {
        let observers = self.observers
        let sequence = self.sequence
        let frontEnd = self.frontEnd
        if case .stream(let stream, let patience?) = job.rows, patience > 0 {
            // A body that streams in: the transaction starts once its first rows (or its end) are there.
            await stream.awaitFirstMessage()
        }
        let clock = ContinuousClock()
        let store = self.store
        if store.options.readOnly {
            throw SyncError(.database, "\(location): the store was opened read-only (StoreOptions.readOnly); nothing was written",
                            source: job.source)
        }
        let timeout = job.busyTimeout ?? store.options.busyTimeout
        // Read in the task: the publication on the writer's queue is the trace's notify span.
        let trace = WriteTrace.current
        // The write driver runs in a task of its own, sending each step to the writer's queue.
        let pump = ThreadPump()
        return try await withTaskCancellationHandler {
            try await store.database.writeWithoutTransaction { db in
                // This job's busy timeout for its BEGIN IMMEDIATE, the store's again afterwards.
                sqlite3_busy_timeout(db.sqliteConnection, StoreOptions.milliseconds(timeout))
                defer { sqlite3_busy_timeout(db.sqliteConnection, store.options.busyTimeoutMilliseconds) }
                let waiting = clock.now
                var outcome: WriteOutcome?
                // No statement of the job commits but its transaction's COMMIT (SQLiteCommitGuard).
                let guarded = SQLiteCommitGuard()
                db.add(transactionObserver: guarded, extent: .observerLifetime)
                defer { db.remove(transactionObserver: guarded) }
                do {
                    try db.inTransaction(.immediate) {
                        let started = clock.now
                        let writer = try RowWriter(db: db, mapping: frontEnd.mapping, trackSeen: job.tracked)
                        // Finalized here, on the writer's queue: the job's task may let go of it later, elsewhere.
                        defer { writer.close() }
                        let transaction = SQLiteTransaction(pump: pump, confined: UncheckedBox((db, writer)), sequence: sequence)
                        var written = try pump.serve { try await job.run(in: transaction, frontEnd: frontEnd) }
                        written.writeLockDuration = started.duration(to: clock.now)
                        try guarded.allowCommit(db, source: job.source)
                        // A live session's commit came in another task: its trace is known only now.
                        let publishing: WriteTrace?
                        if case .live(let live) = job.rows { publishing = live.trace } else { publishing = trace }
                        // Published once committed, never for a transaction that did not.
                        let changes = written.changes
                        if !changes.isEmpty { db.afterNextTransaction { _ in observers.publish(changes, trace: publishing) } }
                        outcome = written
                        return .commit
                    }
                } catch let error as DatabaseError where error.resultCode.primaryResultCode == .SQLITE_BUSY && outcome == nil {
                    // Another process's write lock outlasted the busy timeout: nothing was written.
                    throw SyncError(.busy, "\(store.path ?? ":memory:"): "
                                    + StoreError.lockWaitMessage(waited: waiting.duration(to: clock.now), timeout: timeout)
                                    + "; nothing was written", source: job.source, underlying: error)
                }
                guard let outcome else { throw SyncError(.database, "the write transaction ended without an outcome", source: job.source) }
                return outcome
            }
        } onCancel: {
            pump.cancel()
        }
    }

    /// What SQLite objected to, in the user's terms (``Store/describe(_:)``).
    package func describe(_ error: any Error) -> String {
        Store.describe(error)
    }
}

/// The SQLite replica's transaction for the write driver: its row writer inside one GRDB
/// transaction. Every step runs on the writer's queue, sent there by the pump that queue serves.
struct SQLiteTransaction: StoreTransaction {
    let pump: ThreadPump
    /// The connection and its row writer: touched only by work the pump runs on the writer's queue.
    let confined: UncheckedBox<(db: Database, writer: RowWriter)>
    let sequence: SequenceCounter

    func write(_ stream: ParsedStream, patience: Double?, source: String) async throws -> ReaderSummary {
        let confined = self.confined
        return try await pump.perform {
            try stream.consume(source: source, patience: patience) { try confined.value.writer.write($0) }
        }
    }

    func write(_ staged: UncheckedBox<StagedRows>) async throws {
        let confined = self.confined
        try await pump.perform { try staged.value.replay { try confined.value.writer.write($0) } }
    }

    func write(_ live: LiveTransaction, source: String) async throws -> LiveTransaction.Ending {
        let confined = self.confined
        return try await pump.perform { try live.consume(source: source) { try confined.value.writer.write($0) } }
    }

    func settle(_ deletions: [StaleDeletion]) async throws {
        guard !deletions.isEmpty else { return }
        let confined = self.confined
        try await pump.perform {
            let writer = confined.value.writer
            for deletion in deletions {
                try writer.deleteStale(entity: deletion.entity, scope: deletion.scope,
                                       keeping: deletion.keysToKeep(written: writer.seenKeys(of: deletion.entity)),
                                       allStored: deletion.allWritten)
            }
        }
    }

    func delete(entity: Int, key: AttributeValue) async throws {
        let confined = self.confined
        try await pump.perform { try confined.value.writer.delete(entity: entity, key: key) }
    }

    func delete(_ tombstones: Tombstones) async throws {
        let confined = self.confined
        try await pump.perform {
            try confined.value.writer.delete(entity: tombstones.entity, keys: tombstones.keys, scope: tombstones.scope)
        }
    }

    func write(_ records: [ClientCache.Record]) async throws {
        let confined = self.confined
        try await pump.perform { try ClientCache.write(records, in: confined.value.db) }
    }

    func writtenKeys(of entity: Int) async throws -> PrimaryKeys {
        let confined = self.confined
        return try await pump.perform { confined.value.writer.seenKeys(of: entity) }
    }

    func changeSet(folding rebase: RebaseChanges) async throws -> ChangeSet {
        let confined = self.confined
        let sequence = self.sequence
        return try await pump.perform {
            var entities = confined.value.writer.entityChanges()
            rebase.fold(into: &entities)
            return ChangeSet(sequence: sequence.next(), entities: entities)
        }
    }

    func changesSoFar() async throws -> [String: EntityChanges] {
        let confined = self.confined
        return try await pump.perform { confined.value.writer.entityChanges() }
    }

    var dialect: SQLDialect { .sqlite }

    func execute(_ sql: String, _ arguments: [AttributeValue]) async throws {
        let confined = self.confined
        try await pump.perform { try confined.value.db.execute(sql: sql, arguments: StatementArguments(arguments)) }
    }

    func select(_ sql: String, _ arguments: [AttributeValue], types: [AttributeType]) async throws -> [[AttributeValue]] {
        let confined = self.confined
        return try await pump.perform {
            try Row.fetchAll(confined.value.db, sql: sql, arguments: StatementArguments(arguments)).map { row in
                types.indices.map { index in
                    let stored = AttributeValue.fromDatabaseValue(row[index] as DatabaseValue) ?? .null
                    return stored.isNull ? .null : AttributeValue(stored: stored, type: types[index])
                }
            }
        }
    }
}
