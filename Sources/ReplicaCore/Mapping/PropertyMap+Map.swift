extension PropertyMap {
    /// Maps one JSON object of this entity.
    ///
    /// ```swift
    /// let mapped = try users.map(["user_id": 7, "name": "Ann", "shoe": 44], at: JSONPointer("/users/0")!)
    /// mapped["userID"]        // .integer(7)
    /// mapped.unknownKeyCount  // 1
    /// ```
    ///
    /// Each attribute is absent (`nil`: its key was missing; keep the stored
    /// value), `.null` (explicit JSON `null`), or the converted value. A key
    /// path's parent that is `null` (`"address": null`) makes every attribute
    /// under it `.null`. Relationship keys give ``RelationshipValue``s; for a
    /// to-one relationship a bare id, `null`, or a nested object's id also
    /// fills the foreign-key attribute when the JSON did not give that key itself.
    ///
    /// - Parameters:
    ///   - object: The JSON object.
    ///   - pointer: Where the object is inside the response, for error messages.
    /// - Returns: The mapped values.
    /// - Throws: ``MappingError`` naming the entity, attribute, pointer and value:
    ///   `.invalidValue` when a value cannot be converted, `.nullNotAllowed` for
    ///   `null` in a non-null attribute, `.notAnObject` / `.notAnArray` when a key
    ///   path step, to-one or to-many value has the wrong JSON type.
    public func map(_ object: JSONObject, at pointer: JSONPointer) throws -> MappedObject {
        var result = MappedObject(
            values: Array(repeating: nil, count: attributes.count),
            relationships: Array(repeating: nil, count: relationships.count),
            unknownKeyCount: 0, unknownKeys: [],
            attributeNames: attributeNames, relationshipNames: relationshipNames,
            primaryKeyIndex: primaryKeyIndex, primaryKeyIndexes: primaryKeyIndexes)
        var kept = JSONObject()
        try fill(&result, node: root, object: object, pointer: pointer, prefix: [], kept: &kept)
        if let unmappedIndex { result.values[unmappedIndex] = kept.isEmpty ? .null : .json(.object(kept)) }
        for link in foreignKeyLinks {
            guard let related = result.relationships[link.relationship], result.values[link.attribute] == nil else { continue }
            try fillForeignKey(&result, from: related, link: link, pointer: pointer)
        }
        return result
    }

    /// Maps one JSON value that must be an object of this entity.
    ///
    /// ```swift
    /// let mapped = try users.map(value: response[0]!, at: JSONPointer("/0")!)
    /// ```
    ///
    /// - Parameters:
    ///   - value: The JSON value.
    ///   - pointer: Where it is inside the response.
    /// - Returns: The mapped values.
    /// - Throws: ``MappingError/Code/notAnObject`` when the value is not an object, or any error of ``map(_:at:)``.
    public func map(value: JSONValue, at pointer: JSONPointer) throws -> MappedObject {
        guard case .object(let object) = value else {
            throw MappingError(.notAnObject, "expected an object, found \(value.typeName) \(value.excerpt())",
                               entity: entity.name, pointer: pointer, value: value.excerpt())
        }
        return try map(object, at: pointer)
    }

    /// Checks that a mapped object has its primary key and returns it.
    ///
    /// ```swift
    /// let id = try users.primaryKey(of: mapped, at: pointer)   // .integer(7)
    /// ```
    ///
    /// - Parameters:
    ///   - mapped: A result of ``map(_:at:)``.
    ///   - pointer: Where the object is, for the error message.
    /// - Returns: The non-null primary key.
    /// - Throws: ``MappingError/Code/missingPrimaryKey`` naming the JSON key.
    public func primaryKey(of mapped: MappedObject, at pointer: JSONPointer) throws -> AttributeValue {
        if primaryKeyIndexes.count > 1 {
            for index in primaryKeyIndexes where mapped.values[index]?.isNull ?? true {
                let mapping = attributes[index]
                let found = mapped.values[index] == nil ? "is missing" : "is null"
                throw MappingError(.missingPrimaryKey, "object has no \(mapping.name), a part of its key "
                                   + "(\(primaryKeyIndexes.map { attributes[$0].name }.joined(separator: ", "))): key '\(mapping.jsonKey)' "
                                   + "\(found) and no route variable gave it",
                                   entity: entity.name, attribute: mapping.name, pointer: pointer)
            }
        }
        guard let key = mapped.primaryKey, !key.isNull else {
            let mapping = attributes[primaryKeyIndex]
            throw MappingError(.missingPrimaryKey, "object has no id: key '\(mapping.jsonKey)' is missing",
                               entity: entity.name, attribute: mapping.name, pointer: pointer)
        }
        return key
    }

    /// A bare key (an element of a many-to-many array that is not an object) converted as this
    /// entity's primary key.
    ///
    /// - Throws: ``MappingError`` naming the pointer when it does not convert or is `null`.
    package func convertKey(_ value: JSONValue, at pointer: JSONPointer) throws -> AttributeValue {
        let key = try convert(value, attribute: primaryKeyIndex, at: pointer, key: nil)
        if key.isNull {
            throw MappingError(.missingPrimaryKey, "null in a list of \(entity.name) keys", entity: entity.name,
                               attribute: attributes[primaryKeyIndex].name, pointer: pointer, value: "null")
        }
        return key
    }

    /// The primary key of an object that failed to map as a whole, when its own key is valid:
    /// a skipped object still counts as seen for stale-row deletion.
    ///
    /// ```swift
    /// users.primaryKey(ofInvalid: ["user_id": 7, "age": "old"])   // .integer(7)
    /// ```
    ///
    /// - Parameter value: The JSON object.
    /// - Returns: The converted key, or `nil` when it is missing, `null` or invalid.
    public func primaryKey(ofInvalid value: JSONValue) -> AttributeValue? {
        primaryKey(ofInvalid: value, scope: nil)
    }

    /// ``primaryKey(ofInvalid:)`` with the parts of a composite key the object lacks filled from
    /// the route's scope, as a valid object's are.
    package func primaryKey(ofInvalid value: JSONValue, scope: RouteScope?) -> AttributeValue? {
        guard case .object(let object) = value else { return nil }
        guard primaryKeyIndexes.count > 1 else { return primaryKey(in: object, node: root, index: primaryKeyIndex) }
        var parts: [AttributeValue] = []
        for index in primaryKeyIndexes {
            if let part = primaryKey(in: object, node: root, index: index) {
                parts.append(part)
            } else if let condition = scope?.conditions.first(where: { $0.attribute == attributes[index].name }),
                      !condition.value.isNull {
                parts.append(condition.value)
            } else {
                return nil
            }
        }
        return .compositeKey(parts)
    }

    private func primaryKey(in object: JSONObject, node: KeyNode, index wanted: Int) -> AttributeValue? {
        for (key, slot) in node.slots {
            switch slot {
            case .attribute(let index) where index == wanted:
                guard let raw = object[key],
                      let converted = try? convert(raw, attribute: index, at: JSONPointer(components: []), key: key),
                      !converted.isNull else { return nil }
                return converted
            case .object(let child):
                if case .object(let nested)? = object[key], let found = primaryKey(in: nested, node: child, index: wanted) {
                    return found
                }
            default:
                continue
            }
        }
        return nil
    }

    /// Maps the keys of `object` (at key path `prefix` of the whole object). Keys that match
    /// nothing are dropped when ignored, else counted, or under `keep` put into `kept` at their
    /// key path (nested objects, as in the JSON).
    private func fill(_ result: inout MappedObject, node: KeyNode, object: JSONObject,
                      pointer: JSONPointer, prefix: [String], kept: inout JSONObject) throws {
        for key in object.keys {
            guard let value = object[key] else { continue }
            guard let slot = node.slots[key] else {
                let path = prefix.isEmpty ? key : (prefix + [key]).joined(separator: ".")
                if isIgnored(path) { continue }
                switch unmappedKeys {
                case .warn:
                    result.unknownKeyCount += 1
                    result.unknownKeys.append(path)
                case .ignore:
                    break
                case .keep:
                    if unmappedIndex != nil {
                        kept.setValue(value, at: prefix + [key])
                    }
                }
                continue
            }
            switch slot {
            case .attribute(let index):
                result.values[index] = try convert(value, attribute: index, at: pointer, key: key)
            case .relationship(let index):
                result.relationships[index] = try relationshipValue(value, relationship: index, at: pointer / key)
            case .object(let child):
                switch value {
                case .object(let nested):
                    try fill(&result, node: child, object: nested, pointer: pointer / key,
                             prefix: prefix + [key], kept: &kept)
                case .null:
                    try fillNull(&result, node: child, pointer: pointer / key)
                default:
                    let path = (prefix + [key]).joined(separator: ".")
                    let leaf = child.firstLeaf(prefix: [])
                    var name: String?
                    if case .attribute(let i)? = leaf?.0 { name = attributes[i].name }
                    if case .relationship(let i)? = leaf?.0 { name = relationships[i].name }
                    throw MappingError(.notAnObject, "expected an object under key path '\(path)', found "
                                       + "\(value.typeName) \(value.excerpt())",
                                       entity: entity.name, attribute: name, pointer: pointer / key, value: value.excerpt())
                }
            }
        }
    }

    /// `"address": null`: every attribute under the key path is null, every relationship `.null`.
    private func fillNull(_ result: inout MappedObject, node: KeyNode, pointer: JSONPointer) throws {
        for slot in node.slots.values {
            switch slot {
            case .attribute(let index):
                result.values[index] = try convert(.null, attribute: index, at: pointer, key: nil)
            case .relationship(let index):
                result.relationships[index] = .null
            case .object(let child):
                try fillNull(&result, node: child, pointer: pointer)
            }
        }
    }

    /// Converts the value of attribute `index` found at `pointer/key` (or at `pointer` when `key` is nil).
    @inline(__always)
    func convert(_ value: JSONValue, attribute index: Int, at pointer: JSONPointer, key: String?) throws -> AttributeValue {
        let mapping = attributes[index]
        if case .null = value {
            guard mapping.isNullable else { throw nullError(mapping, at: key.map { pointer / $0 } ?? pointer) }
            return .null
        }
        let converted: AttributeValue
        do {
            converted = try mapping.converter.decode(value)
        } catch {
            throw conversionError(error, value: value, attribute: mapping, at: key.map { pointer / $0 } ?? pointer)
        }
        if case .null = converted, !mapping.isNullable {
            throw nullError(mapping, at: key.map { pointer / $0 } ?? pointer)
        }
        return converted
    }

    private func nullError(_ mapping: AttributeMapping, at pointer: JSONPointer) -> MappingError {
        MappingError(.nullNotAllowed, "null is not allowed: the attribute is not nullable",
                     entity: entity.name, attribute: mapping.name, pointer: pointer, value: "null")
    }

    private func conversionError(_ failure: ValueConverter.Failure, value: JSONValue, attribute mapping: AttributeMapping,
                                 at pointer: JSONPointer) -> MappingError {
        let excerpt = value.excerpt()
        switch failure {
        case .cannotConvert(let target, let detail):
            return MappingError(.invalidValue, "cannot convert \(excerpt) to \(target)" + (detail.map { " (\($0))" } ?? ""),
                                entity: entity.name, attribute: mapping.name, pointer: pointer, value: excerpt)
        case .wrongResultType(let name, let result):
            return MappingError(.invalidValue, "transform '\(name)' turned \(excerpt) into "
                                + "\(AttributeType.withArticle(result.type)), not \(AttributeType.withArticle(mapping.type))",
                                entity: entity.name, attribute: mapping.name, pointer: pointer, value: excerpt)
        case .transformFailed(let name, let error):
            if var error = error as? MappingError {
                error.entity = error.entity ?? entity.name
                error.attribute = error.attribute ?? mapping.name
                error.pointer = error.pointer ?? pointer
                error.value = error.value ?? excerpt
                return error
            }
            return MappingError(.invalidValue, "transform '\(name)' failed on \(excerpt): \(error)",
                                entity: entity.name, attribute: mapping.name, pointer: pointer, value: excerpt)
        }
    }

    private func relationshipValue(_ value: JSONValue, relationship index: Int, at pointer: JSONPointer) throws -> RelationshipValue {
        let mapping = relationships[index]
        switch (mapping.kind, value) {
        case (_, .null):
            return .null
        case (.toOne, .object(let object)):
            return .object(object, at: pointer)
        case (.toOne, .array):
            throw MappingError(.notAnObject, "expected an object or an id for to-one relationship to "
                               + "\(mapping.destination), found array \(value.excerpt())",
                               entity: entity.name, attribute: mapping.name, pointer: pointer, value: value.excerpt())
        case (.toOne, _):
            guard let foreignKey = mapping.foreignKeyIndex else {
                throw MappingError(.notAnObject, "expected an object for to-one relationship to \(mapping.destination), "
                                   + "found \(value.typeName) \(value.excerpt())",
                                   entity: entity.name, attribute: mapping.name, pointer: pointer, value: value.excerpt())
            }
            return .reference(try convert(value, attribute: foreignKey, at: pointer, key: nil))
        case (.toMany, .array(let array)):
            return .array(array, at: pointer)
        case (.toMany, _):
            throw MappingError(.notAnArray, "expected an array for to-many relationship to \(mapping.destination), "
                               + "found \(value.typeName) \(value.excerpt())",
                               entity: entity.name, attribute: mapping.name, pointer: pointer, value: value.excerpt())
        }
    }

    /// Fills an absent foreign key from its to-one relationship's value.
    private func fillForeignKey(_ result: inout MappedObject, from related: RelationshipValue,
                                link: (relationship: Int, attribute: Int), pointer: JSONPointer) throws {
        switch related {
        case .null:
            let relationshipPointer = relationshipPointer(link.relationship, from: pointer)
            result.values[link.attribute] = try convert(.null, attribute: link.attribute, at: relationshipPointer, key: nil)
        case .reference(let id):
            result.values[link.attribute] = id
        case .object(let object, let objectPointer):
            guard let path = relationships[link.relationship].destinationIDPath else { return }
            var value = JSONValue.object(object)
            var idPointer = objectPointer
            for key in path {
                guard let next = value[key] else { return }
                value = next
                idPointer = idPointer / key
            }
            if value.isNull { return }
            result.values[link.attribute] = try convert(value, attribute: link.attribute, at: idPointer, key: nil)
        case .array:
            return
        }
    }

    private func relationshipPointer(_ index: Int, from pointer: JSONPointer) -> JSONPointer {
        relationships[index].jsonPath.reduce(pointer) { $0 / $1 }
    }
}
