import Foundation
import GRDB
import GRDBSQLite
import Logging
import ReplicaCore

/// The local SQLite replica: tables made from a ``Schema``, opened through GRDB.
///
/// A file store uses a `DatabasePool` (WAL: readers run while the one writer
/// writes); an in-memory store uses a `DatabaseQueue`. The schema the database
/// was created with is recorded inside it, so a later open can migrate
/// additively or run with no schema at all.
///
/// Several processes may open one file. Opening reads the recorded schema and takes the
/// write lock only when it must create or migrate tables; readers never wait for writers,
/// and writers wait for each other up to ``StoreOptions/busyTimeout``.
///
/// A commit returns before SQLite copies the write-ahead log into the database file: the store
/// checkpoints right after it, on a connection and queue of its own, so a large write's commit (and
/// the observers it notifies) does not wait for the copy. Releasing the store closes the file as
/// SQLite does: the checkpointer finishes first, and the store's last connection copies what is
/// left and removes the WAL before the release returns.
///
/// ```swift
/// let schema = try Schema(contentsOf: URL(fileURLWithPath: "Schemas/blog.json"))
/// let store = try Store(path: "blog.sqlite", schema: schema)
/// let users = try store.rows("User", where: "name LIKE ?", arguments: [.string("A%")], sort: [.ascending("name")])
/// ```
public final class Store: Sendable {
    /// The schema in force: the one given, or the one recorded in the database.
    public let schema: Schema
    /// The GRDB connection: a `DatabasePool` for files, a `DatabaseQueue` in memory.
    /// Write through Replica's sync engine so that observers see every change.
    public let database: any DatabaseWriter
    /// The database file, or `nil` in memory.
    public let path: String?
    /// How the store was opened: its busy timeout, and whether it is read-only.
    public let options: StoreOptions
    /// Checkpoints the WAL after commits, beside the writer (a file store opened for writing).
    let checkpointer: WALCheckpointer?

    deinit {
        // Before the pool's connections close: they, not the checkpointer's, close the file last.
        checkpointer?.retire()
    }

    /// Opens (creating if needed) the store at `path`.
    ///
    /// - Parameters:
    ///   - path: The SQLite file.
    ///   - schema: The schema; `nil` uses the one recorded in the database. A schema with a
    ///     higher version than the recorded one is applied additively (new entities, attributes, indexes).
    ///   - options: The busy timeout, and whether to open for reading only.
    /// - Throws: ``StoreError`` (`missingSchema`, `incompatibleSchema` leaving the file untouched,
    ///   `busy` when a migration waited longer than the busy timeout, `readOnly`, `invalidSchema` for a
    ///   schema that could not sync (``Schema/checkOpening(in:transforms:)``; nothing is created then), `sqlite`).
    public convenience init(path: String, schema: Schema? = nil, options: StoreOptions = StoreOptions()) throws {
        if options.readOnly, !FileManager.default.fileExists(atPath: path) {
            throw StoreError(.sqlite, "cannot open database: no such file (a read-only store opens an existing one)", path: path)
        }
        if let schema, !FileManager.default.fileExists(atPath: path) {
            // A new file is created only for a schema that can open it.
            do {
                try schema.checkOpening(in: .sqlite, transforms: nil)
            } catch {
                throw StoreError(.invalidSchema, "the schema cannot open a store: \(error)", path: path)
            }
        }
        let clock = ContinuousClock()
        let opening = clock.now
        let checkpointer = options.readOnly ? nil : WALCheckpointer(path: path)
        let pool: DatabasePool
        do {
            pool = try Store.openPool(path: path, options: options, checkpointer: checkpointer)
        } catch let error as DatabaseError where error.resultCode.primaryResultCode == .SQLITE_BUSY {
            throw StoreError(.busy, "cannot open database: "
                             + StoreError.lockWaitMessage(waited: opening.duration(to: clock.now), timeout: options.busyTimeout), path: path)
        } catch {
            throw (options.readOnly ? Store.readOnlyDirectoryError(path: path) : nil)
                ?? StoreError(.sqlite, "cannot open database: \(Store.describe(error))", path: path)
        }
        do {
            try self.init(database: pool, path: path, schema: schema, options: options, checkpointer: checkpointer)
        } catch let error as StoreError where options.readOnly {
            throw Store.readOnlyDirectoryError(path: path) ?? error
        }
    }

    /// Creates an empty in-memory store for `schema`.
    ///
    /// ```swift
    /// let store = try Store.inMemory(schema: schema)
    /// ```
    ///
    /// - Throws: ``StoreError``.
    public static func inMemory(schema: Schema) throws -> Store {
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(configuration: configuration())
        } catch {
            throw StoreError(.sqlite, "cannot open in-memory database: \(describe(error))")
        }
        return try Store(database: queue, path: nil, schema: schema, options: StoreOptions())
    }

    init(database: any DatabaseWriter, path: String?, schema: Schema?, options: StoreOptions,
         checkpointer: WALCheckpointer? = nil) throws {
        self.database = database
        self.path = path
        self.options = options
        self.checkpointer = checkpointer
        let migrator = StoreMigrator(path: path)
        do {
            // Read first: a store whose recorded schema is the one given opens without the write lock.
            let plan = try database.read { db in try migrator.plan(db, schema: schema) }
            if plan.changesNothing {
                self.schema = plan.schema
                return
            }
            do {
                // Nothing is created or recorded for a schema that could not sync (a JSON key collision, a column limit).
                try plan.schema.checkOpening(in: .sqlite, transforms: nil)
            } catch {
                throw StoreError(.invalidSchema, "the schema cannot open a store: \(error)", path: path)
            }
            if options.readOnly {
                throw StoreError(.readOnly, plan.recordsSchema && plan.statements.isEmpty
                                 ? "opened read-only: the given schema would have to be recorded; open it for writing"
                                 : "opened read-only: schema '\(plan.schema.name)' version \(plan.schema.version) would create "
                                 + "or migrate tables; open it for writing", path: path)
            }
            let clock = ContinuousClock()
            let waiting = clock.now
            do {
                // As a writer, planned again: another process may have migrated in the meantime. The
                // lock is taken first (BEGIN IMMEDIATE, waiting up to the busy timeout): a deferred
                // transaction that read the schema before another process created its tables could
                // not write at all (SQLITE_BUSY at once, with no wait).
                self.schema = try database.writeWithoutTransaction { db in
                    var prepared: Schema?
                    try db.inTransaction(.immediate) {
                        prepared = try migrator.prepare(db, schema: schema)
                        return .commit
                    }
                    guard let prepared else { throw StoreError(.sqlite, "the schema was not prepared", path: path) }
                    return prepared
                }
            } catch let error as DatabaseError where error.resultCode.primaryResultCode == .SQLITE_BUSY {
                throw StoreError(.busy, StoreError.lockWaitMessage(waited: waiting.duration(to: clock.now), timeout: options.busyTimeout)
                                 + " to create or migrate tables; nothing was changed", path: path)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.sqlite, Store.describe(error), path: path)
        }
    }

    /// Why a read-only store could not read `path`, when it is that its directory is read-only: a
    /// database in WAL mode is read through its shared-memory file (`PATH-shm`), which SQLite
    /// must create beside it when no process has it open. `nil` otherwise.
    static func readOnlyDirectoryError(path: String) -> StoreError? {
        let directory = (path as NSString).deletingLastPathComponent
        let folder = directory.isEmpty ? "." : directory
        guard !FileManager.default.fileExists(atPath: path + "-shm"), access(folder, W_OK) != 0 else { return nil }
        return StoreError(.readOnly, "cannot read the database: it is in WAL mode and SQLite must create "
                          + "\((path as NSString).lastPathComponent)-shm beside it, but the directory \(folder) is read-only "
                          + "(for this user); make the directory writable, or copy the file into one that is", path: path)
    }

    /// Opens the pool at `path`, retrying while another process holds a lock its setting up
    /// needs, until the store's busy timeout has passed.
    ///
    /// Creating a file, switching it to WAL and making its WAL file write once, outside any
    /// transaction that SQLite's busy handler would wait for: two processes opening one new file
    /// at the same moment see `SQLITE_BUSY` at once (no wait) in one of them. Opening is retried
    /// with short pauses (1 ms doubling up to 50 ms), as SQLite's busy handler waits for a lock.
    ///
    /// - Throws: GRDB's `DatabaseError`: `SQLITE_BUSY` once the busy timeout has passed, any other at once.
    static func openPool(path: String, options: StoreOptions, checkpointer: WALCheckpointer?) throws -> DatabasePool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(Int64(options.busyTimeoutMilliseconds)))
        var pause = 0.001
        while true {
            do {
                return try DatabasePool(path: path, configuration: Store.configuration(options, checkpointer: checkpointer))
            } catch let error as DatabaseError
                        where [.SQLITE_BUSY, .SQLITE_LOCKED].contains(error.resultCode.primaryResultCode) && clock.now < deadline {
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 0.05)
            }
        }
    }

    /// - Parameter checkpointer: Takes over the WAL checkpoints of the pool's writer (its
    ///   connections keep it, through this configuration, for as long as they are open).
    static func configuration(_ options: StoreOptions = StoreOptions(), checkpointer: WALCheckpointer? = nil) -> Configuration {
        var configuration = Configuration()
        configuration.label = "Replica"
        configuration.readonly = options.readOnly
        configuration.busyMode = .timeout(Double(options.busyTimeoutMilliseconds) / 1000)
        let milliseconds = options.busyTimeoutMilliseconds
        configuration.prepareDatabase { db in
            // WAL with synchronous=NORMAL is durable across application crashes and much faster
            // than FULL; a power loss may lose the last transactions but never corrupts the file.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Every connection, the pool's readers too (GRDB gives those 10 s of their own).
            sqlite3_busy_timeout(db.sqliteConnection, milliseconds)
            // Commits return before the WAL is copied into the file: see WALCheckpointer.
            checkpointer?.install(on: db)
        }
        return configuration
    }

    /// One line for a GRDB or other error.
    /// A database error in the user's terms: what SQLite objected to, without GRDB's advice to
    /// programmers (`use Database.execute(sql:)`) or bare result codes.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DatabaseError else { return String(describing: error) }
        let message = error.message ?? ""
        if message.hasPrefix("Multiple statements found") {
            return "more than one SQL statement (a ';' separates them); give a single expression"
        }
        if message.hasPrefix("wrong number of statement arguments") {
            return "the values given do not match the ? placeholders (" + message + ")"
        }
        switch error.resultCode.primaryResultCode {
        case .SQLITE_CONSTRAINT: return "constraint failed: " + message
        case .SQLITE_BUSY, .SQLITE_LOCKED: return "the database is busy (another connection holds a lock): " + message
        case .SQLITE_READONLY: return "the database is read-only: " + message
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: return "the file is not a valid database: " + message
        case .SQLITE_FULL: return "the disk is full: " + message
        case .SQLITE_CANTOPEN: return "the database cannot be opened: " + message
        default: return message.isEmpty ? "database error \(error.resultCode.rawValue)" : "invalid SQL: " + message
        }
    }
}
