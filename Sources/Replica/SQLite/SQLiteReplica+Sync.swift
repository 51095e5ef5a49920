import Foundation
import GRDB

/// The SQLite replica's write transaction: one GRDB write on the single writer's queue, where
/// the row writer upserts the job's rows as they come, deletes its stale rows and writes the
/// client's records; the change set is published right after the commit, on that queue, so
/// observers receive commits in order.
extension SQLiteReplica: StoreBackend {
    /// Rows parsed as a body streams in are written inside the single writer's transaction.
    package var stagingHoldsWriteLock: Bool { true }

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
        return try await store.database.write { db in
            let started = clock.now
            if Task.isCancelled { throw SyncError(.cancelled, "cancelled; nothing was written", source: job.source) }
            let writer = try RowWriter(db: db, maps: maps, trackSeen: job.tracked)
            var summary: ReaderSummary?
            switch job.rows {
            case .none: break
            case .stream(let stream, let patience): summary = try stream.consume(source: job.source, patience: patience) { try writer.write($0) }
            case .staged(let staged): try staged.replay { try writer.write($0) }
            }
            let (deletions, skipped) = job.deletions(after: summary, frontEnd: frontEnd)
            for deletion in deletions {
                try writer.deleteStale(entity: deletion.entity, scope: deletion.scope,
                                       keeping: deletion.keysToKeep(written: writer.seenKeys(of: deletion.entity)),
                                       allStored: deletion.allWritten)
            }
            if let row = job.deletedRow { try writer.delete(entity: row.entity, key: row.key) }
            try ClientCache.write(job.records, in: db)
            let changes = ChangeSet(sequence: sequence.next(), entities: writer.entityChanges())
            if !changes.isEmpty { db.afterNextTransaction { _ in observers.publish(changes) } }
            return WriteOutcome(changes: changes, summary: summary, skipped: skipped,
                                reportedKeys: job.reportedEntity.map { writer.seenKeys(of: $0) } ?? PrimaryKeys(),
                                writeLockDuration: started.duration(to: clock.now))
        }
    }

    /// What SQLite objected to, in the user's terms (``Store/describe(_:)``).
    package func describe(_ error: any Error) -> String {
        Store.describe(error)
    }
}
