/// One JSON object mapped onto an entity: per attribute a value or "absent",
/// per relationship the nested value, and the keys that were ignored.
///
/// An absent attribute (its key was not in the JSON) must leave the stored
/// value untouched on update; an explicit JSON `null` is the value `.null`.
///
/// ```swift
/// let mapped = try map.map(["user_id": 7, "email": nil, "shoe": 44], at: .root)
/// mapped["userID"]          // .integer(7)
/// mapped["email"]           // .null
/// mapped["name"]            // nil: absent, keep the stored name
/// mapped.unknownKeys        // ["shoe"]
/// ```
public struct MappedObject: Sendable, Hashable {
    /// Per attribute, in ``PropertyMap/attributes`` order: the value, or `nil` when the JSON lacked the key.
    public var values: [AttributeValue?]
    /// Per relationship, in ``PropertyMap/relationships`` order: the nested value, or `nil` when absent.
    public var relationships: [RelationshipValue?]
    /// How many keys matched no attribute or relationship (keys the entity ignores or keeps,
    /// ``UnmappedKeyPolicy``, are not counted).
    public var unknownKeyCount: Int
    /// The keys that matched nothing, in document order; keys inside key-path objects are dot-joined
    /// (`address.zip`). Ignored and kept keys are not listed.
    public var unknownKeys: [String]
    /// The attribute names, parallel to ``values`` (shared with the property map, not copied).
    public let attributeNames: [String]
    /// The relationship names, parallel to ``relationships``.
    public let relationshipNames: [String]
    /// The index of the primary key in ``values`` (a composite key's first part).
    public let primaryKeyIndex: Int
    /// The indexes of the primary key's attributes in ``values``: one, or the parts of a composite key.
    public let primaryKeyIndexes: [Int]

    /// The value of attribute `name`, or `nil` when it was absent from the JSON (or is not an attribute).
    ///
    /// ```swift
    /// mapped["email"]   // .null for "email": null, nil for a missing key
    /// ```
    ///
    /// - Parameters:
    ///   - name: The attribute name.
    /// - Returns: The value, or `nil` when absent.
    public subscript(name: String) -> AttributeValue? {
        guard let index = attributeNames.firstIndex(of: name) else { return nil }
        return values[index]
    }

    /// Whether the JSON had a key (possibly `null`) for attribute `name`.
    ///
    /// ```swift
    /// mapped.contains("email")   // true for "email": null
    /// ```
    ///
    /// - Parameters:
    ///   - name: The attribute name.
    /// - Returns: `true` when present.
    public func contains(_ name: String) -> Bool {
        self[name] != nil
    }

    /// The nested value of relationship `name`, or `nil` when absent.
    ///
    /// ```swift
    /// if case .object(let author, let pointer) = mapped.relationship("author") { ... }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The relationship name.
    /// - Returns: The nested value, or `nil` when absent.
    public func relationship(_ name: String) -> RelationshipValue? {
        guard let index = relationshipNames.firstIndex(of: name) else { return nil }
        return relationships[index]
    }

    /// The primary key value, or `nil` when the JSON lacked it. A composite key is the
    /// ``AttributeValue/compositeKey(_:)`` of its parts, `nil` when any part is absent or `null`.
    ///
    /// ```swift
    /// mapped.primaryKey   // .integer(7), or .compositeKey([.string("octocat"), .string("Hello-World"), .string("refs/heads/main")])
    /// ```
    public var primaryKey: AttributeValue? {
        guard primaryKeyIndexes.count > 1 else {
            return values.indices.contains(primaryKeyIndex) ? values[primaryKeyIndex] : nil
        }
        var parts: [AttributeValue] = []
        parts.reserveCapacity(primaryKeyIndexes.count)
        for index in primaryKeyIndexes {
            guard values.indices.contains(index), let part = values[index], !part.isNull else { return nil }
            parts.append(part)
        }
        return .compositeKey(parts)
    }

    /// The attributes present in the JSON, as `(name, value)` in attribute order.
    public var presentValues: [(name: String, value: AttributeValue)] {
        zip(attributeNames, values).compactMap { name, value in value.map { (name, $0) } }
    }
}

/// What a JSON object held under a relationship's key.
///
/// ```swift
/// switch mapped.relationship("author") {
/// case .object(let user, let pointer)?: try usersMap.map(user, at: pointer)
/// case .reference(let id)?: print("author id", id)
/// default: break
/// }
/// ```
public enum RelationshipValue: Sendable, Hashable {
    /// JSON `null`: no related object (for a to-one, the foreign key becomes null).
    case null
    /// To-one: a bare id instead of an object, converted to the foreign key's type.
    case reference(AttributeValue)
    /// To-one: a nested object for the destination entity, and where it is.
    case object(JSONObject, at: JSONPointer)
    /// To-many: the array of nested objects (or ids), and where it is.
    case array([JSONValue], at: JSONPointer)
}
