/// One stored object: its entity and its attribute values, in the entity's attribute order.
///
/// Rows are values: they can be kept, compared and sent across threads.
///
/// ```swift
/// let row = try store.rows("User", where: "userID = ?", arguments: [.integer(3)])[0]
/// row["name"]        // .string("Ann")
/// row.primaryKey     // .integer(3)
/// ```
public struct EntityRow: Sendable, Hashable, CustomStringConvertible {
    /// The entity name.
    public let entity: String
    /// The attribute names, in order.
    public let names: [String]
    /// The values, parallel to ``names``.
    public var values: [AttributeValue]
    /// The position of the primary key in ``names``.
    let primaryKeyIndex: Int

    public init(entity: String, names: [String], values: [AttributeValue], primaryKeyIndex: Int) {
        self.entity = entity
        self.names = names
        self.values = values
        self.primaryKeyIndex = primaryKeyIndex
    }

    /// The value of attribute `name`, or `nil` when the entity has no such attribute.
    public subscript(name: String) -> AttributeValue? {
        get {
            guard let index = names.firstIndex(of: name) else { return nil }
            return values[index]
        }
        set {
            guard let index = names.firstIndex(of: name) else { return }
            values[index] = newValue ?? .null
        }
    }

    /// The primary key value.
    public var primaryKey: AttributeValue { values[primaryKeyIndex] }

    /// The row as a JSON object keyed by attribute name (dates in ISO 8601, data in base64).
    public var jsonObject: JSONObject {
        JSONObject(zip(names, values).map { ($0, $1.jsonValue) })
    }

    public var description: String {
        "\(entity)(" + zip(names, values).map { "\($0): \($1)" }.joined(separator: ", ") + ")"
    }
}
