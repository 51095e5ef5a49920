import Foundation
import GRDB
import Logging

/// The local SQLite replica: tables made from a ``Schema``, opened through GRDB.
///
/// A file store uses a `DatabasePool` (WAL: readers run while the one writer
/// writes); an in-memory store uses a `DatabaseQueue`. The schema the database
/// was created with is recorded inside it, so a later open can migrate
/// additively or run with no schema at all.
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

    /// Opens (creating if needed) the store at `path`.
    ///
    /// - Parameters:
    ///   - path: The SQLite file.
    ///   - schema: The schema; `nil` uses the one recorded in the database. A schema with a
    ///     higher version than the recorded one is applied additively (new entities, attributes, indexes).
    /// - Throws: ``StoreError`` (`missingSchema`, `incompatibleSchema` leaving the file untouched, `sqlite`).
    public convenience init(path: String, schema: Schema? = nil) throws {
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: Store.configuration())
        } catch {
            throw StoreError(.sqlite, "cannot open database: \(Store.describe(error))", path: path)
        }
        try self.init(database: pool, path: path, schema: schema)
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
        return try Store(database: queue, path: nil, schema: schema)
    }

    init(database: any DatabaseWriter, path: String?, schema: Schema?) throws {
        self.database = database
        self.path = path
        do {
            self.schema = try database.write { db in
                try StoreMigrator(path: path).prepare(db, schema: schema)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.sqlite, Store.describe(error), path: path)
        }
    }

    static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.label = "Replica"
        configuration.prepareDatabase { db in
            // WAL with synchronous=NORMAL is durable across application crashes and much faster
            // than FULL; a power loss may lose the last transactions but never corrupts the file.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
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
