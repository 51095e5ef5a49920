import Dispatch
import Foundation
import GRDB
import GRDBSQLite
import ReplicaCore

/// Checkpoints a store's write-ahead log on a connection and queue of its own, after the commit
/// that grew it, instead of inside that commit.
///
/// SQLite checkpoints automatically when a commit leaves 1,000 pages or more in the WAL, and it
/// does so in the committing call: a transaction that rewrote a 60 MB table returns only once those
/// pages are copied into the database file and synced again (a tenth of a second here for 10,000
/// updated rows spread over a million, as long as the updates themselves). A file store installs
/// this checkpointer as its writer's WAL hook instead: the commit returns, observers hear of it and
/// the next sync begins while the same PASSIVE checkpoint runs beside them. A PASSIVE checkpoint
/// takes no lock that readers or writers wait for (in this process or another), copies what no
/// reader still needs, and leaves the rest to the next one, as SQLite's own does.
///
/// Every write on the store's writer connection counts, Replica's and a caller's own through
/// ``Store/database``. Checkpoints are coalesced: commits made while one is scheduled share it.
/// Nothing is lost if the process ends first: the WAL holds every committed transaction and the
/// next connection to open the file uses it. When the store is released, ``retire()`` closes this
/// connection first, so that the store's last connection closes the file (copying what is left and
/// removing the WAL) before the release returns, as it would without a checkpointer.
///
/// ```swift
/// let checkpointer = WALCheckpointer(path: "people.sqlite")
/// var configuration = Configuration()
/// configuration.prepareDatabase { db in checkpointer.install(on: db) }
/// ```
final class WALCheckpointer: @unchecked Sendable {
    // @unchecked: the checkpoint connection is an `OpaquePointer` (never Sendable), used only while `checkpointing` is held.

    /// WAL pages past which a commit schedules a checkpoint: the threshold of SQLite's automatic ones.
    static let threshold: Int32 = 1000

    /// The database file.
    let path: String
    private let queue: DispatchQueue
    /// Whether a checkpoint is scheduled, and whether the store has gone.
    private let flags = Locked((scheduled: false, retired: false))
    /// This checkpointer's own connection (opened by the first checkpoint) and the checkpoints run
    /// so far; held for the whole of a checkpoint, so that ``retire()`` can wait for the one under way.
    private let checkpointing = Locked((connection: OpaquePointer?.none, count: 0))

    /// - Parameters:
    ///   - path: The database file.
    ///   - queue: Where checkpoints run (a serial queue); tests pass an inactive one.
    init(path: String, queue: DispatchQueue = DispatchQueue(label: "Replica.WALCheckpointer", qos: .utility)) {
        self.path = path
        self.queue = queue
    }

    deinit {
        if let connection = checkpointing.withLock({ $0.connection }) { sqlite3_close_v2(connection) }
    }

    /// Makes `db`'s commits schedule a checkpoint here rather than run one; replaces its automatic
    /// checkpoints. The connection must not outlive this object: the store's configuration, which
    /// every connection of its pool keeps, holds it.
    func install(on db: Database) {
        guard let handle = db.sqliteConnection else { return }
        sqlite3_wal_hook(handle, { context, handle, name, frames in
            if frames >= WALCheckpointer.threshold, let context {
                Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(handle, name)
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// A commit on `handle` left the WAL past the threshold: schedules a checkpoint, or, once
    /// retired, runs SQLite's own automatic one on `handle`.
    private func committed(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?) {
        let (retired, first) = flags.withLock { flags in
            defer { flags.scheduled = true }
            return (flags.retired, !flags.scheduled)
        }
        if retired {
            // What SQLite's default WAL hook does: a PASSIVE checkpoint inside the committing call.
            sqlite3_wal_checkpoint(handle, name)
            return
        }
        guard first else { return }
        queue.async { [self] in
            // Commits from now on schedule the next one: this one may start before they end.
            flags.withLock { $0.scheduled = false }
            checkpoint()
        }
    }

    /// Waits until the checkpoints scheduled so far have run; returns how many have run in all.
    ///
    /// ```swift
    /// let count = await checkpointer.settle()
    /// ```
    @discardableResult
    func settle() async -> Int {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            queue.async { [self] in continuation.resume(returning: checkpointing.withLock { $0.count }) }
        }
    }

    /// Ends checkpoints beside the writer, when the store goes away: waits for the one under way,
    /// drops those scheduled and closes this connection, so that the store's own connections close
    /// the file as SQLite does when they are the last (copying what is left and removing the WAL)
    /// before the store's release returns. Commits on connections that outlive the store (a caller
    /// still holding ``Store/database``) checkpoint inside the commit from then on, as SQLite does
    /// by default.
    func retire() {
        flags.withLock { $0.retired = true }
        checkpointing.withLock { checkpointing in
            if let connection = checkpointing.connection { sqlite3_close_v2(connection) }
            checkpointing.connection = nil
        }
    }

    /// One PASSIVE checkpoint, on the queue, unless retired. Failures are left for the next commit's
    /// checkpoint (or the last connection's close): a checkpoint only moves committed pages into the file.
    private func checkpoint() {
        checkpointing.withLock { checkpointing in
            guard !flags.withLock({ $0.retired }) else { return }
            if checkpointing.connection == nil {
                var handle: OpaquePointer?
                let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
                if sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK {
                    // As the store's connections: a checkpoint syncs the WAL before and the file after.
                    sqlite3_exec(handle, "PRAGMA synchronous = NORMAL", nil, nil, nil)
                    checkpointing.connection = handle
                } else {
                    sqlite3_close_v2(handle)
                    return
                }
            }
            sqlite3_wal_checkpoint_v2(checkpointing.connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            checkpointing.count += 1
        }
    }
}
