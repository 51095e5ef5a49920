/// An invalid schema: what is wrong, and where (file and JSON pointer).
///
/// ```swift
/// do {
///     _ = try Schema(contentsOf: url)
/// } catch let error as SchemaError where error.code == .unknownType {
///     print(error)   // blog.json: /entities/User/attributes/name/type: unknown type 'strng' ...
/// }
/// ```
public struct SchemaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let rawValue: String
        public var description: String { rawValue }

        /// The file could not be read.
        public static let unreadableFile = Code(rawValue: "unreadableFile")
        /// The file is not valid JSON.
        public static let invalidJSON = Code(rawValue: "invalidJSON")
        /// A value has the wrong JSON type or an invalid value.
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// A required key is missing.
        public static let missingKey = Code(rawValue: "missingKey")
        /// A key the format does not know (usually a typo).
        public static let unknownKey = Code(rawValue: "unknownKey")
        /// A key given twice in one JSON object (two entities or attributes of one name): JSON
        /// parsers disagree on which value wins, so a schema file may not depend on it.
        public static let duplicateKey = Code(rawValue: "duplicateKey")
        /// An attribute type that does not exist.
        public static let unknownType = Code(rawValue: "unknownType")
        /// A reference to an entity the schema does not define.
        public static let unknownEntity = Code(rawValue: "unknownEntity")
        /// A reference to an attribute the entity does not define.
        public static let unknownAttribute = Code(rawValue: "unknownAttribute")
        /// Two things share a name that must be unique.
        public static let duplicateName = Code(rawValue: "duplicateName")
        /// Two entities share a table name.
        public static let duplicateTable = Code(rawValue: "duplicateTable")
        /// The primary key attribute is missing, nullable or of a type that cannot be a key.
        public static let invalidPrimaryKey = Code(rawValue: "invalidPrimaryKey")
        /// A relationship is inconsistent (foreign key type, inverse).
        public static let invalidRelationship = Code(rawValue: "invalidRelationship")
        /// A route is invalid.
        public static let invalidRoute = Code(rawValue: "invalidRoute")
        /// The property maps cannot be built: two attributes (or a key path and an attribute)
        /// on one JSON key, or a transform that does not exist or does not fit its attribute.
        public static let invalidMapping = Code(rawValue: "invalidMapping")
        /// Samples a schema cannot be inferred from (no object, objects without any key).
        public static let cannotInfer = Code(rawValue: "cannotInfer")
        /// A sample could not be fetched from a live API (a connection error, or a status other than 2xx).
        public static let fetchFailed = Code(rawValue: "fetchFailed")
        /// An OpenAPI document that does not parse (YAML or JSON), is no OpenAPI 3 document
        /// (Swagger 2.0, say), or breaks the OpenAPI format.
        public static let invalidOpenAPI = Code(rawValue: "invalidOpenAPI")
    }

    /// The kind of problem.
    public var code: Code
    /// What is wrong, in words.
    public var message: String
    /// The schema file, when the schema came from one.
    public var file: String?
    /// Where in the schema file format the bad value is.
    public var pointer: JSONPointer?
    /// The 0-based offset in the file's bytes of what is wrong, when it is known: for
    /// ``Code/duplicateKey``, where the key is given the second time.
    public var byteOffset: Int?

    /// An error; the schema loader makes these, tests and schema builders may too.
    ///
    /// ```swift
    /// let error = SchemaError(.unknownType, "unknown type 'strng'", file: "blog.json",
    ///                         pointer: JSONPointer("/entities/User/attributes/name/type"))
    /// ```
    ///
    /// - Parameters:
    ///   - code: The kind of problem.
    ///   - message: What is wrong, in words (with the byte offset, when there is one).
    ///   - file: The schema file, when the schema came from one.
    ///   - pointer: Where in the schema the bad value is.
    ///   - byteOffset: Where in the file's bytes, when known.
    public init(_ code: Code, _ message: String, file: String? = nil, pointer: JSONPointer? = nil, byteOffset: Int? = nil) {
        self.code = code
        self.message = message
        self.file = file
        self.pointer = pointer
        self.byteOffset = byteOffset
    }

    /// `file: /pointer: message`, leaving out what is unknown.
    public var description: String {
        var parts: [String] = []
        if let file { parts.append(file) }
        if let pointer { parts.append(pointer.components.isEmpty ? "/" : pointer.description) }
        parts.append(message)
        return parts.joined(separator: ": ")
    }
}
