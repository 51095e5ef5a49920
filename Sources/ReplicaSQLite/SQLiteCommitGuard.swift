import GRDB
import ReplicaCore

/// Refuses every commit on the writer's connection while a write job runs, except the job's own.
///
/// After some errors (a full disk, an I/O error, no memory, a busy lock, an interrupt) SQLite may
/// roll the whole transaction back by itself and leave the connection in autocommit mode, where
/// each statement that follows commits on its own. The row writer stops at such an error; this
/// guard makes sure of it whatever code runs in the job: a statement that would commit outside
/// the job's transaction is vetoed (SQLite rolls it back and its step fails), so a failed sync
/// never leaves part of itself in the file.
///
/// ```swift
/// let guarded = SQLiteCommitGuard()
/// db.add(transactionObserver: guarded, extent: .observerLifetime)
/// defer { db.remove(transactionObserver: guarded) }
/// try db.inTransaction(.immediate) {
///     try writeRows(db)
///     try guarded.allowCommit(db)
///     return .commit
/// }
/// ```
///
/// Confined to the writer's queue (GRDB calls its observers there), like the job it guards.
final class SQLiteCommitGuard: TransactionObserver {
    private var committing = false

    /// Allows the commit that follows, when `db` is still inside the job's transaction.
    ///
    /// - Throws: ``SyncError`` `.database` when SQLite ended the transaction on its own: the job
    ///   is rolled back, nothing of it is in the file.
    func allowCommit(_ db: Database, source: String) throws {
        guard db.isInsideTransaction else {
            throw SyncError(.database, "SQLite rolled the write transaction back after an error; nothing was written",
                            source: source)
        }
        committing = true
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }

    func databaseDidChange(with event: DatabaseEvent) {}

    func databaseWillCommit() throws {
        guard committing else {
            throw DatabaseError(resultCode: .SQLITE_ABORT,
                                message: "a statement would have committed outside its write transaction (refused)")
        }
    }

    func databaseDidCommit(_ db: Database) {
        committing = false
    }

    func databaseDidRollback(_ db: Database) {
        committing = false
    }
}
