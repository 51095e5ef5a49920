/// Composite primary keys as values.
///
/// The key of a row whose entity has a composite primary key (``Entity/primaryKeyNames`` of two
/// or more attributes) is one ``AttributeValue``: the `.json` array of its parts in key order.
/// Change sets (``PrimaryKeys``), live result set diffs, ``EntityRow/primaryKey`` and the
/// client's `find`/`delete` all carry and take it, so a tuple key goes wherever a single key goes.
///
/// ```swift
/// let key = AttributeValue.compositeKey([.string("octocat"), .string("Hello-World"), .string("refs/heads/main")])
/// key.description          // ["octocat","Hello-World","refs/heads/main"]
/// key.compositeKeyParts    // [.string("octocat"), .string("Hello-World"), .string("refs/heads/main")]
/// changes["Ref"]?.inserted.contains(key)
/// ```
extension AttributeValue {
    /// The key made of `parts` (a composite primary key's values, in ``Entity/primaryKeyNames`` order).
    ///
    /// ```swift
    /// let key = AttributeValue.compositeKey([.string("octocat"), .string("Hello-World"), .string("refs/heads/main")])
    /// ```
    ///
    /// - Parameter parts: The key's values (integers or strings).
    /// - Returns: The `.json` array of the parts.
    public static func compositeKey(_ parts: [AttributeValue]) -> AttributeValue {
        .json(.array(parts.map(\.keyPartJSON)))
    }

    /// The parts of a composite key made by ``compositeKey(_:)``, or `nil` for any other value.
    ///
    /// ```swift
    /// AttributeValue.compositeKey([.integer(1), .string("a")]).compositeKeyParts   // [.integer(1), .string("a")]
    /// AttributeValue.integer(7).compositeKeyParts                                  // nil
    /// ```
    public var compositeKeyParts: [AttributeValue]? {
        guard case .json(.array(let items)) = self else { return nil }
        return items.map(AttributeValue.init(keyPart:))
    }

    /// A key part as JSON (key parts are integers or strings; others keep their JSON form).
    package var keyPartJSON: JSONValue {
        switch self {
        case .integer(let value): return .int(value)
        case .string(let value): return .string(value)
        default: return jsonValue
        }
    }

    /// A key part back from JSON.
    package init(keyPart json: JSONValue) {
        switch json {
        case .null: self = .null
        case .int(let value): self = .integer(value)
        case .string(let value): self = .string(value)
        case .double(let value): self = .double(value)
        case .bool(let value): self = .bool(value)
        default: self = .json(json)
        }
    }
}
