/// A JSON value that does not fit the schema, or a schema whose JSON mapping is inconsistent.
///
/// Conversion errors name the entity, the attribute, the JSON pointer of the
/// offending value inside the response and the value itself (truncated when long):
///
/// ```swift
/// do {
///     _ = try map.map(object, at: JSONPointer("/users/17")!)
/// } catch let error as MappingError where error.code == .invalidValue {
///     print(error)   // User.age at /users/17/age: cannot convert "abc" to integer
/// }
/// ```
///
/// Errors are cheap to throw: nothing is formatted until a conversion fails.
/// What to do with one (fail the whole response or skip the object) is the
/// sync engine's decision.
public struct MappingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let rawValue: String
        public var description: String { rawValue }

        /// A JSON value cannot be converted to the attribute's type (`"abc"` for an integer).
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// An explicit JSON `null` for an attribute that is not nullable.
        public static let nullNotAllowed = Code(rawValue: "nullNotAllowed")
        /// An object has no value for the entity's primary key.
        public static let missingPrimaryKey = Code(rawValue: "missingPrimaryKey")
        /// An attribute names a transform that is neither built in nor registered.
        public static let unknownTransform = Code(rawValue: "unknownTransform")
        /// A built-in transform applied to an attribute of a type it cannot produce (`percentage` on a string).
        public static let invalidTransform = Code(rawValue: "invalidTransform")
        /// Two attributes or relationships of one entity map to the same JSON key.
        public static let collidingKeys = Code(rawValue: "collidingKeys")
        /// A response lacks a key of its envelope (`data` in `data.users`).
        public static let missingEnvelopeKey = Code(rawValue: "missingEnvelopeKey")
        /// A response lacks the entity's namespace (`post` / `posts`).
        public static let missingNamespace = Code(rawValue: "missingNamespace")
        /// An object was expected (an entity object, a key path step, an envelope level).
        public static let notAnObject = Code(rawValue: "notAnObject")
        /// An array was expected (a to-many relationship, a collection namespace).
        public static let notAnArray = Code(rawValue: "notAnArray")
        /// An entity name the schema does not define.
        public static let unknownEntity = Code(rawValue: "unknownEntity")
    }

    /// The kind of problem.
    public var code: Code
    /// What is wrong, in words, including the offending value when there is one.
    public var message: String
    /// The entity being mapped, when known.
    public var entity: String?
    /// The attribute or relationship concerned, when known.
    public var attribute: String?
    /// Where the offending value is inside the response, when the error is about a response.
    public var pointer: JSONPointer?
    /// A short rendering of the offending JSON value (at most about 60 characters), when there is one.
    public var value: String?

    /// Creates an error.
    ///
    /// ```swift
    /// MappingError(.invalidValue, "cannot convert \"abc\" to integer",
    ///              entity: "User", attribute: "age", pointer: JSONPointer("/users/17/age"), value: "\"abc\"")
    /// ```
    ///
    /// - Parameters:
    ///   - code: The kind of problem.
    ///   - message: What is wrong; ``description`` prefixes the entity, attribute and pointer.
    ///   - entity: The entity name.
    ///   - attribute: The attribute or relationship name.
    ///   - pointer: The location inside the response.
    ///   - value: A short rendering of the offending value.
    public init(_ code: Code, _ message: String, entity: String? = nil, attribute: String? = nil,
                pointer: JSONPointer? = nil, value: String? = nil) {
        self.code = code
        self.message = message
        self.entity = entity
        self.attribute = attribute
        self.pointer = pointer
        self.value = value
    }

    /// `Entity.attribute at /pointer: message`, leaving out what is unknown.
    public var description: String {
        var subject = ""
        if let entity { subject = entity }
        if let attribute { subject += subject.isEmpty ? attribute : "." + attribute }
        if let pointer {
            let where_ = pointer.components.isEmpty ? "/" : pointer.description
            subject += subject.isEmpty ? "at " + where_ : " at " + where_
        }
        return subject.isEmpty ? message : subject + ": " + message
    }
}
