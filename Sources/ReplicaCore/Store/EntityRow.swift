/// One stored object: its entity and its attribute values, in the entity's attribute order.
///
/// Rows are values: they can be kept, compared and sent across threads.
///
/// ```swift
/// let row = try store.rows("User", where: "userID = ?", arguments: [.integer(3)])[0]
/// row["name"]        // .string("Ann")
/// row.primaryKey     // .integer(3)
/// ```
///
/// The key of a row whose entity has a composite key is the tuple of its parts
/// (``AttributeValue/compositeKey(_:)``): `.compositeKey([.string("octocat"), .string("Hello-World"), .string("refs/heads/main")])`.
public struct EntityRow: Sendable, Hashable, CustomStringConvertible {
    /// The entity name.
    public let entity: String
    /// The attribute names, in order.
    public let names: [String]
    /// The values, parallel to ``names``.
    public var values: [AttributeValue]
    /// The position of the primary key in ``names`` (a composite key's first part).
    let primaryKeyIndex: Int
    /// The positions of a composite key's parts in ``names``; empty for a single-column key.
    let compositeKeyIndexes: [Int]

    /// A row whose primary key is the value at `primaryKeyIndex`.
    public init(entity: String, names: [String], values: [AttributeValue], primaryKeyIndex: Int) {
        self.entity = entity
        self.names = names
        self.values = values
        self.primaryKeyIndex = primaryKeyIndex
        self.compositeKeyIndexes = []
    }

    /// A row whose primary key is the values at `primaryKeyIndexes` (one position, or a
    /// composite key's parts in key order).
    ///
    /// ```swift
    /// let row = EntityRow(entity: "Ref", names: ["owner", "repo", "ref", "sha"],
    ///                     values: [.string("octocat"), .string("Hello-World"), .string("refs/heads/main"), .string("aa21")],
    ///                     primaryKeyIndexes: [0, 1, 2])
    /// row.primaryKey   // .compositeKey([.string("octocat"), .string("Hello-World"), .string("refs/heads/main")])
    /// ```
    public init(entity: String, names: [String], values: [AttributeValue], primaryKeyIndexes: [Int]) {
        self.entity = entity
        self.names = names
        self.values = values
        self.primaryKeyIndex = primaryKeyIndexes.first ?? 0
        self.compositeKeyIndexes = primaryKeyIndexes.count > 1 ? primaryKeyIndexes : []
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

    /// The primary key value; for a composite key, the ``AttributeValue/compositeKey(_:)`` of its parts.
    public var primaryKey: AttributeValue {
        compositeKeyIndexes.isEmpty ? values[primaryKeyIndex] : .compositeKey(compositeKeyIndexes.map { values[$0] })
    }

    /// The row as a JSON object keyed by attribute name (dates in ISO 8601, data in base64).
    public var jsonObject: JSONObject {
        JSONObject(zip(names, values).map { ($0, $1.jsonValue) })
    }

    public var description: String {
        "\(entity)(" + zip(names, values).map { "\($0): \($1)" }.joined(separator: ", ") + ")"
    }
}
