/// A store that cannot be opened, migrated or read as asked: what and where.
///
/// ```swift
/// do {
///     _ = try Store(path: "blog.sqlite", schema: newSchema)
/// } catch let error as StoreError where error.code == .incompatibleSchema {
///     print(error)   // blog.sqlite: entity 'User', attribute 'age': type changed from integer to string ...
/// }
/// ```
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let rawValue: String
        public var description: String { rawValue }

        /// The database records no schema and none was given.
        public static let missingSchema = Code(rawValue: "missingSchema")
        /// The given schema cannot be applied to the recorded one safely; nothing was changed.
        public static let incompatibleSchema = Code(rawValue: "incompatibleSchema")
        /// The recorded schema could not be read.
        public static let corruptMetadata = Code(rawValue: "corruptMetadata")
        /// A query named an entity the schema does not define.
        public static let unknownEntity = Code(rawValue: "unknownEntity")
        /// A query named an attribute the entity does not define.
        public static let unknownAttribute = Code(rawValue: "unknownAttribute")
        /// SQLite refused a statement (bad where-clause, wrong argument count, I/O error).
        public static let sqlite = Code(rawValue: "sqlite")
        /// A row could not be decoded into the requested type.
        public static let decoding = Code(rawValue: "decoding")
        /// PostgreSQL refused a statement (bad where-clause, wrong argument count) or could not be
        /// reached: `.sqlite`'s counterpart for a `PostgresReplica`.
        public static let database = Code(rawValue: "database")
        /// Opening had to create or migrate tables, and another process held the write lock for
        /// longer than ``StoreOptions/busyTimeout``; nothing was changed.
        public static let busy = Code(rawValue: "busy")
        /// A store opened with ``StoreOptions/readOnly`` was asked to write (to record or migrate a
        /// schema), or cannot read a database in WAL mode from a read-only directory.
        public static let readOnly = Code(rawValue: "readOnly")
        /// The schema given to create or migrate tables fails ``Schema/checkOpening(in:transforms:)``
        /// (its property maps cannot be built, or it exceeds the database's limits); nothing was changed.
        public static let invalidSchema = Code(rawValue: "invalidSchema")
    }

    /// The kind of problem.
    public var code: Code
    /// What is wrong, in words.
    public var message: String
    /// The database file (`nil` for an in-memory store), or a PostgreSQL URL without its password.
    public var path: String?

    public init(_ code: Code, _ message: String, path: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
    }

    public var description: String {
        if let path { return "\(path): \(message)" }
        return message
    }
}

extension StoreError {
    /// Why a write gave up on a lock, and after how long: `another process holds the write
    /// lock; gave up after waiting 30.0 s (busy timeout 30 s)`.
    package static func lockWaitMessage(holder: String = "another process holds the write lock", waited: Duration,
                                        timeout: Double) -> String {
        let seconds = Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18
        let limit = timeout == timeout.rounded() && abs(timeout) < 1e9 ? String(Int(timeout)) : String(timeout)
        return holder + "; gave up after waiting "
            + String(format: "%.1f", seconds) + " s (busy timeout \(limit) s)"
    }
}
