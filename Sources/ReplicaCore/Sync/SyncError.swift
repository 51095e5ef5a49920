/// A sync or import that failed; the transaction was rolled back and the store is as before.
///
/// ```swift
/// do {
///     try await engine.importFile("people.json", into: .entity("Person"))
/// } catch let error as SyncError where error.code == .malformedJSON {
///     print(error)   // people.json: byte 1837 (line 40, column 3): expected ',' or ']' after array element
/// }
/// ```
public struct SyncError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let rawValue: String
        public var description: String { rawValue }

        /// The response is not valid JSON (the error carries byte offset, line and column).
        public static let malformedJSON = Code(rawValue: "malformedJSON")
        /// An object could not be mapped (wrong type, null in a non-null attribute) under the `fail` policy.
        public static let invalidObject = Code(rawValue: "invalidObject")
        /// The envelope or namespace the route expects is missing.
        public static let unexpectedShape = Code(rawValue: "unexpectedShape")
        /// No route matches, or a path variable is invalid.
        public static let noRoute = Code(rawValue: "noRoute")
        /// An entity the target names does not exist.
        public static let unknownEntity = Code(rawValue: "unknownEntity")
        /// A key that does not fit the entity's primary key: a single value for a composite key
        /// (which takes ``AttributeValue/compositeKey(_:)`` of all its parts), or a tuple for a single one.
        public static let invalidKey = Code(rawValue: "invalidKey")
        /// SQLite refused a write (a constraint, the disk).
        public static let database = Code(rawValue: "database")
        /// Another process held the database's write lock for longer than the busy timeout
        /// (``SyncOptions/busyTimeout``, ``StoreOptions/busyTimeout``); nothing was written.
        public static let busy = Code(rawValue: "busy")
        /// The sync was cancelled.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The input could not be read (file, stream).
        public static let input = Code(rawValue: "input")
        /// Under ``SyncOptions/strictKeys``: a key matched no attribute, a MANY collection no
        /// entity, or an object gave a key twice.
        public static let ignoredKey = Code(rawValue: "ignoredKey")
        /// A local write (``ReplicaStore/saveLocally(_:_:)``) names an attribute the entity does not
        /// have, gives a value its attribute cannot hold, or gives no key; or an outbox call names a
        /// mutation that is not there. Nothing was written.
        public static let invalidWrite = Code(rawValue: "invalidWrite")
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong, and where.
    public var message: String
    /// The file, or the method and path, of the input.
    public var source: String?
    /// The JSON parse error or mapping error behind it, when there is one.
    public var underlying: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, source: String? = nil, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.source = source
        self.underlying = underlying
    }

    /// `source: message`.
    public var description: String {
        if let source { return "\(source): \(message)" }
        return message
    }
}
