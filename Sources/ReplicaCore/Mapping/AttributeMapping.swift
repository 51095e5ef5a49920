/// How one attribute appears in JSON: its key (or key path) and its conversion.
///
/// ```swift
/// let age = map.attributes[map.index(ofAttribute: "age")!]
/// age.jsonKey    // "age"
/// age.jsonPath   // ["age"]
/// ```
public struct AttributeMapping: Sendable {
    /// The attribute name (and column).
    public let name: String
    /// The attribute type.
    public let type: AttributeType
    /// Whether JSON `null` is accepted.
    public let isNullable: Bool
    /// The JSON key path, one element per nesting level (`["address", "geo", "lat"]`).
    public let jsonPath: [String]
    /// The transform named in the schema, or `nil`.
    public let transform: String?
    /// The resolved conversion.
    let converter: ValueConverter

    /// The JSON key, with nesting levels joined by dots (`address.geo.lat`).
    public var jsonKey: String { jsonPath.joined(separator: ".") }
}

/// How one relationship appears in JSON: the key of its nested object(s) or id.
///
/// ```swift
/// let author = map.relationships[0]
/// author.jsonKey          // "author"
/// author.foreignKeyIndex  // index of "userID" in map.attributes
/// ```
public struct RelationshipMapping: Sendable {
    /// The relationship name.
    public let name: String
    /// To-one or to-many.
    public let kind: Relationship.Kind
    /// The destination entity's name.
    public let destination: String
    /// The JSON key path of the nested value.
    public let jsonPath: [String]
    /// For to-one: the index in ``PropertyMap/attributes`` of the foreign-key attribute.
    public let foreignKeyIndex: Int?
    /// For to-one: the key path of the destination's id inside a nested object
    /// (the destination's primary-key JSON key), used to fill the foreign key.
    public let destinationIDPath: [String]?

    /// The JSON key, with nesting levels joined by dots.
    public var jsonKey: String { jsonPath.joined(separator: ".") }
}
