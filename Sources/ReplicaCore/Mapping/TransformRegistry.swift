/// Custom value transforms that schema files can name in an attribute's `transform`.
///
/// A transform turns a non-null JSON value into the attribute's value; it
/// never sees JSON `null` (that is `.null`, or an error for a non-null
/// attribute). It may also say how to turn the value back into JSON for
/// request bodies; without that, ``PropertyMap``'s `encode` uses the attribute type's default encoding.
///
/// ```swift
/// var transforms = TransformRegistry()
/// transforms.register("cents", encode: { value in
///     if case .integer(let cents) = value { return .double(Double(cents) / 100) } else { return value.jsonValue }
/// }) { json in
///     guard let amount = json.doubleValue else { throw MappingError(.invalidValue, "expected an amount") }
///     return .integer(Int64((amount * 100).rounded()))
/// }
/// let mapping = try SchemaMapping(schema: schema, transforms: transforms)
/// ```
///
/// A registered name takes precedence over a built-in transform of the same name.
public struct TransformRegistry: Sendable {
    /// Turns a non-null JSON value into an attribute value.
    public typealias Decode = @Sendable (JSONValue) throws -> AttributeValue
    /// Turns a non-null attribute value back into JSON.
    public typealias Encode = @Sendable (AttributeValue) -> JSONValue

    /// One registered transform.
    public struct Transform: Sendable {
        /// The name schema files use.
        public let name: String
        /// JSON → attribute value.
        public let decode: Decode
        /// Attribute value → JSON, or `nil` for the attribute type's default.
        public let encode: Encode?
    }

    private var transforms: [String: Transform] = [:]
    /// Takes a name that is neither registered nor built in for a transform that fails when it
    /// runs: what checking a schema for a store needs, which cannot know the replica's transforms.
    package var acceptsUnregisteredNames = false

    /// An empty registry: only the built-in transforms are available.
    ///
    /// ```swift
    /// let transforms = TransformRegistry()
    /// ```
    public init() {}

    /// Registers (or replaces) the transform `name`.
    ///
    /// ```swift
    /// transforms.register("upper") { json in .string(json.stringValue?.uppercased() ?? "") }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The name attributes use in `transform`.
    ///   - encode: How to turn a value back into JSON for request bodies; `nil` for the type's default.
    ///   - decode: How to turn a non-null JSON value into the attribute's value. It may throw any
    ///     error; the mapper reports it as ``MappingError/Code/invalidValue`` with the entity,
    ///     attribute and pointer (a thrown ``MappingError`` keeps its code and message).
    public mutating func register(_ name: String, encode: Encode? = nil, _ decode: @escaping Decode) {
        transforms[name] = Transform(name: name, decode: decode, encode: encode)
    }

    /// A copy of this registry with one more transform.
    ///
    /// ```swift
    /// let transforms = TransformRegistry().registering("upper") { .string($0.stringValue?.uppercased() ?? "") }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The name attributes use in `transform`.
    ///   - encode: How to turn a value back into JSON; `nil` for the type's default.
    ///   - decode: How to turn a non-null JSON value into the attribute's value.
    /// - Returns: The extended registry.
    public func registering(_ name: String, encode: Encode? = nil, _ decode: @escaping Decode) -> TransformRegistry {
        var copy = self
        copy.register(name, encode: encode, decode)
        return copy
    }

    /// The transform registered as `name`, or `nil`.
    ///
    /// ```swift
    /// transforms["cents"]?.name   // "cents"
    /// ```
    ///
    /// - Parameters:
    ///   - name: The transform name.
    /// - Returns: The transform, or `nil` when none has that name.
    public subscript(name: String) -> Transform? { transforms[name] }

    /// The registered names, sorted.
    public var names: [String] { transforms.keys.sorted() }
}
