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
        let maps = mapping.maps
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
        return try await store.database.writeWithoutTransaction { db in
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
                    let (written, publishing) = try Self.write(job, in: db, maps: maps, frontEnd: frontEnd,
                                                               sequence: sequence, clock: clock, trace: trace)
                    try guarded.allowCommit(db, source: job.source)
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
    }

    /// The job's statements inside its transaction: rows, stale deletions, a deleted row, the
    /// client's records; returns the outcome and the trace its change set is published with.
    private static func write(_ job: WriteJob, in db: Database, maps: [PropertyMap], frontEnd: SyncFrontEnd,
                              sequence: SequenceCounter, clock: ContinuousClock,
                              trace: WriteTrace?) throws -> (WriteOutcome, WriteTrace?) {
        let started = clock.now
        if Task.isCancelled { throw SyncError(.cancelled, "cancelled; nothing was written", source: job.source) }
        let writer = try RowWriter(db: db, mapping: frontEnd.mapping, trackSeen: job.tracked)
        var summary: ReaderSummary?
        var job = job
        switch job.rows {
        case .none: break
        case .stream(let stream, let patience): summary = try stream.consume(source: job.source, patience: patience) { try writer.write($0) }
        case .staged(let staged): try staged.value.replay { try writer.write($0) }
        case .live(let live):
            let ending = try live.consume(source: job.source) { try writer.write($0) }
            job.end(with: ending)
        }
        // A live session's commit came in another task: its trace is known only now.
        var publishing = trace
        if case .live(let live) = job.rows { publishing = live.trace }
        let (deletions, skipped) = job.deletions(after: summary, frontEnd: frontEnd)
        for deletion in deletions {
            try writer.deleteStale(entity: deletion.entity, scope: deletion.scope,
                                   keeping: deletion.keysToKeep(written: writer.seenKeys(of: deletion.entity)),
                                   allStored: deletion.allWritten)
        }
        if let row = job.deletedRow { try writer.delete(entity: row.entity, key: row.key) }
        for tombstones in job.tombstones {
            try writer.delete(entity: tombstones.entity, keys: tombstones.keys, scope: tombstones.scope)
        }
        try ClientCache.write(job.records, in: db)
        let changes = ChangeSet(sequence: sequence.next(), entities: writer.entityChanges())
        return (WriteOutcome(changes: changes, summary: summary, skipped: skipped,
                             reportedKeys: job.reportedEntity.map { writer.seenKeys(of: $0) } ?? PrimaryKeys(),
                             writeLockDuration: started.duration(to: clock.now)), publishing)
    }

    /// What SQLite objected to, in the user's terms (``Store/describe(_:)``).
    package func describe(_ error: any Error) -> String {
        Store.describe(error)
    }
}
