import Foundation

extension PropertyMap {
    /// Turns attribute values into a JSON object for a request body.
    ///
    /// ```swift
    /// posts.encode(["title": .string("Hi"), "createdAt": .date(date)], wrapped: true)
    /// // {"post": {"title": "Hi", "created_at": "2024-05-01T12:00:00Z"}}
    /// ```
    ///
    /// Members are written under the attributes' JSON keys, in attribute order;
    /// key paths re-nest (`address.geo.lat` → `{"address": {"geo": {"lat": …}}}`).
    /// Dates are ISO 8601 text unless the attribute's transform says otherwise
    /// (`unixSeconds` → number of seconds, `unixMilliseconds` → integer
    /// milliseconds, `date:FORMAT` → text in FORMAT); data is standard base64;
    /// `percentage` writes 0.45 as 45; a custom transform's encoder is used when
    /// it has one. Names that are not attributes of the entity are ignored.
    ///
    /// - Parameters:
    ///   - values: Attribute values by attribute name.
    ///   - wrapped: Whether to wrap the object in the entity's ``Entity/namespace``
    ///     (no effect when the entity has none).
    /// - Returns: The JSON object.
    public func encode(_ values: [String: AttributeValue], wrapped: Bool = false) -> JSONObject {
        encode(values, wrapped: wrapped, timeZone: nil)
    }

    /// Turns attribute values into a JSON object as ``encode(_:wrapped:)`` does, ISO 8601 dates
    /// written in `timeZone` with its offset (`2024-05-01T14:34:56+02:00`).
    ///
    /// ```swift
    /// let body = posts.encode(["createdAt": .date(now)], timeZone: TimeZone(identifier: "Europe/Paris"))
    /// ```
    ///
    /// - Parameters:
    ///   - values: Attribute values by attribute name.
    ///   - wrapped: Whether to wrap the object in the entity's namespace.
    ///   - timeZone: The zone of ISO 8601 dates; UTC (`Z`) when `nil`.
    /// - Returns: The JSON object.
    public func encode(_ values: [String: AttributeValue], wrapped: Bool = false, timeZone: TimeZone?) -> JSONObject {
        var body = JSONObject()
        for mapping in attributes {
            guard let value = values[mapping.name] else { continue }
            body.setValue(mapping.converter.encode(value, timeZone: timeZone), at: mapping.jsonPath)
        }
        return wrap(body, wrapped: wrapped)
    }

    /// Turns a stored row into a JSON object for a request body; see ``encode(_:wrapped:)``. The keys
    /// an entity keeps (``UnmappedKeyPolicy/keep``) are merged back in, so the object round-trips.
    ///
    /// ```swift
    /// let body = users.encode(try store.rows("User")[0])
    /// ```
    ///
    /// - Parameters:
    ///   - row: A row of this entity.
    ///   - wrapped: Whether to wrap the object in the entity's namespace.
    /// - Returns: The JSON object.
    public func encode(_ row: EntityRow, wrapped: Bool = false) -> JSONObject {
        var body = JSONObject()
        var kept: JSONObject?
        for (name, value) in zip(row.names, row.values) {
            guard let index = index(ofAttribute: name) else { continue }
            if index == unmappedIndex {
                if case .json(.object(let object)) = value { kept = object }
                continue
            }
            let mapping = attributes[index]
            body.setValue(mapping.converter.encode(value), at: mapping.jsonPath)
        }
        // Kept unmapped keys go back where they came from; an attribute's own key wins.
        if let kept { body.addMissing(from: kept) }
        return wrap(body, wrapped: wrapped)
    }

    private func wrap(_ body: JSONObject, wrapped: Bool) -> JSONObject {
        guard wrapped, let namespace = entity.namespace, !namespace.isEmpty else { return body }
        return [namespace: .object(body)]
    }
}

extension JSONObject {
    /// Adds the members of `kept` that this object lacks, merging nested objects: how kept
    /// unmapped keys go back into an encoded object (and into the mock server's answers), where
    /// a key the object has wins.
    ///
    /// ```swift
    /// var object: JSONObject = ["id": 1, "meta": ["a": 1]]
    /// object.addMissing(from: ["id": 9, "meta": ["b": 2], "extra": true])
    /// // {"id": 1, "meta": {"a": 1, "b": 2}, "extra": true}
    /// ```
    package mutating func addMissing(from kept: JSONObject) {
        for (key, member) in kept {
            if case .object(let inner) = member, case .object(var existing)? = self[key] {
                existing.addMissing(from: inner)
                self[key] = .object(existing)
            } else if self[key] == nil {
                self[key] = member
            }
        }
    }
}
