extension MockResource {
    /// How deep nested to-one objects are followed (`issue.user.organization…`).
    static let maximumToOneDepth = 8

    /// Stores the nested to-one objects of harvested `values` (``toOne``) and returns the values to store
    /// for this object: each nested object upserted into its resource (merged into the stored one when it
    /// has a key, created otherwise), the foreign key set to its key unless `values` gives the foreign key
    /// itself, and the child as stored kept under the relationship's key to be served back. A bare key sets
    /// the foreign key; `null` clears it. A foreign key given alone refreshes a kept child (`existing`, the
    /// stored object of an update) to the one it now names.
    ///
    /// ```swift
    /// var values = try issues.harvest(body)                 // ["title": "t", "user": {"id": 7, "login": "ann"}]
    /// values = try await issues.storingToOne(values, existing: nil, resources: resources, store: store)
    /// // ["title": "t", "user_id": 7, "user": {"id": 7, "login": "ann"}], and user 7 stored
    /// ```
    /// - Parameters:
    ///   - values: harvested values of this resource.
    ///   - existing: the stored object an update merges into, or nil.
    ///   - resources: the server's resources by name.
    ///   - store: the store to write the children to.
    /// - Returns: the values with foreign keys and kept children set.
    /// - Throws: `MockHTTPError` 422 naming the field (`user.login`, `user`) for a nested value of the wrong
    ///   shape or type; the store's errors.
    func storingToOne(_ values: JSONObject, existing: JSONObject?, resources: [String: MockResource],
                      store: any MockStore, depth: Int = 0) async throws -> JSONObject {
        guard !toOne.isEmpty else { return values }
        var values = values
        for relation in toOne {
            let foreignKey = property(named: relation.foreignKey)
            let givenKey = values[relation.foreignKey]
            switch values[relation.key] {
            case nil:
                // The foreign key alone: a child kept from an earlier write follows it, in its shape.
                guard let givenKey, let existing, let kept = existing[relation.key], !kept.isNull,
                      existing[relation.foreignKey] != givenKey else { continue }
                if case .object = kept {
                    var refreshed = JSONValue.null
                    if !givenKey.isNull, let child = resources[relation.resource],
                       let stored = try await store.object(child, id: givenKey) {
                        refreshed = .object(child.wire(stored))
                    }
                    values[relation.key] = refreshed
                } else {
                    values[relation.key] = givenKey
                }
            case .null?:
                if givenKey == nil, foreignKey != nil { values[relation.foreignKey] = .null }
            case .object(let nested)?:
                guard let child = resources[relation.resource], depth < Self.maximumToOneDepth else { continue }
                let stored = try await child.storeNested(nested, field: relation.key, resources: resources, store: store,
                                                         depth: depth + 1)
                let key = child.primaryKey.key(of: stored)
                guard let givenKey else {
                    if let foreignKey, let key, child.primaryKey.kind != .composite {
                        guard let canonical = foreignKey.type.validate(key) else {
                            throw MockHTTPError.unprocessable([(relation.key, ["has a key \(foreignKey.name) cannot hold: \(foreignKey.type.requirement)"])])
                        }
                        values[relation.foreignKey] = canonical
                    }
                    values[relation.key] = .object(child.wire(stored))
                    continue
                }
                // The foreign key given beside the object wins (as in the client): the child served is the one it names.
                if key == givenKey {
                    values[relation.key] = .object(child.wire(stored))
                } else if !givenKey.isNull, let named = try await store.object(child, id: givenKey) {
                    values[relation.key] = .object(child.wire(named))
                } else {
                    values[relation.key] = .null
                }
            case .array?:
                throw MockHTTPError.unprocessable([(relation.key, ["must be an object, a key of \(relation.resource) or null, not an array"])])
            case let key?:
                guard let foreignKey else { continue }
                guard let canonical = foreignKey.type.validate(key) else {
                    throw MockHTTPError.unprocessable([(relation.key, ["must be an object or a key of \(relation.resource): \(foreignKey.type.requirement)"])])
                }
                if givenKey == nil { values[relation.foreignKey] = canonical }
                values[relation.key] = canonical
            }
        }
        return values
    }

    /// Upserts one nested object of this resource and returns it as stored; field errors are named
    /// under `field` (`user.login`).
    private func storeNested(_ nested: JSONObject, field: String, resources: [String: MockResource], store: any MockStore,
                             depth: Int) async throws -> JSONObject {
        var values: JSONObject
        do {
            values = try harvest(.object(nested), keepingKey: true)
            values = try await storingToOne(values, existing: nil, resources: resources, store: store, depth: depth)
        } catch let error as MockHTTPError where !error.fieldErrors.isEmpty {
            throw MockHTTPError.unprocessable(error.fieldErrors.map { name, messages in
                (name == "base" ? field : field + "." + name, messages)
            })
        }
        if let id = primaryKey.key(of: values) {
            if let merged = try await store.modify(self, id: id, values: values) { return merged }
            do {
                return try await store.create(self, values: values)
            } catch let error as MockHTTPError where error.status == 409 {
                // Created by another request since `modify` missed it.
                guard let merged = try await store.modify(self, id: id, values: values) else { throw error }
                return merged
            }
        }
        do {
            return try await store.create(self, values: values)
        } catch let error as MockHTTPError where !error.fieldErrors.isEmpty {
            throw MockHTTPError.unprocessable(error.fieldErrors.map { (field + "." + $0.0, $0.1) })
        }
    }

    /// Whether an update giving `values` needs the stored object for ``storingToOne(_:existing:resources:store:depth:)``:
    /// it gives a foreign key without its relationship's value.
    func needsExistingForToOne(_ values: JSONObject) -> Bool {
        toOne.contains { values[$0.key] == nil && values[$0.foreignKey] != nil }
    }

    /// `object` without the to-one values it was never given (null): an object written with the foreign
    /// key alone goes out with the foreign key alone.
    func omittingAbsentToOne(_ object: JSONObject) -> JSONObject {
        guard !toOne.isEmpty else { return object }
        var object = object
        for relation in toOne where object[relation.key]?.isNull ?? false { object[relation.key] = nil }
        return object
    }
}
