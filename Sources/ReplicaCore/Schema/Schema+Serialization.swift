extension Schema {
    /// The schema in the schema-file format; `Schema(jsonValue:)` reads it back to an equal schema.
    ///
    /// ```swift
    /// let text = schema.fileJSON.serialized(pretty: true)
    /// ```
    public var fileJSON: JSONValue {
        var object = JSONObject()
        object["name"] = .string(name)
        object["version"] = .int(Int64(version))
        object["keyConvention"] = .string(keyConvention.schemaName)
        if let envelope { object["envelope"] = .string(envelope) }
        var entitiesObject = JSONObject()
        for entity in entities { entitiesObject[entity.name] = entity.fileJSON }
        object["entities"] = .object(entitiesObject)
        if !routes.isEmpty { object["routes"] = .array(routes.map(\.fileJSON)) }
        if unmappedKeys != .warn { object["unmappedKeys"] = .string(unmappedKeys.rawValue) }
        if !ignoreKeys.isEmpty { object["ignoreKeys"] = .array(ignoreKeys.map { .string($0) }) }
        if let pagination { object["pagination"] = pagination.fileJSON }
        if !headers.isEmpty {
            object["headers"] = .object(JSONObject(headers.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))
        }
        return .object(object)
    }
}

extension Schema {
    /// ``fileJSON`` without what changes no table: `unmappedKeys` and `ignoreKeys` are left out,
    /// and each entity that keeps its unmapped keys names its column. Two schemas equal in it
    /// open the same tables.
    var storageJSON: JSONValue {
        guard case .object(var object) = fileJSON, case .object(let entitiesObject)? = object["entities"] else { return fileJSON }
        object["unmappedKeys"] = nil
        object["ignoreKeys"] = nil
        var stored = JSONObject()
        for entity in entities {
            guard case .object(var e)? = entitiesObject[entity.name] else { continue }
            e["unmappedKeys"] = nil
            e["ignoreKeys"] = nil
            e["unmappedColumn"] = entity.unmappedAttribute.map { .string($0.name) }
            stored[entity.name] = .object(e)
        }
        object["entities"] = .object(stored)
        return .object(object)
    }
}

extension Entity {
    var fileJSON: JSONValue {
        var object = JSONObject()
        object["table"] = .string(tableName)
        if hasCompositeKey {
            // Each part maps as its attribute does: a composite key has no JSON id key.
            object["primaryKey"] = .array(primaryKeyNames.map { .string($0) })
        } else {
            object["primaryKey"] = .string(primaryKey)
            object["jsonIdKey"] = .string(jsonIDKey)
        }
        if let namespace { object["namespace"] = .string(namespace) }
        if let collectionNamespace { object["collectionNamespace"] = .string(collectionNamespace) }
        if let actions {
            object["actions"] = .array(EntityAction.allCases.filter(actions.contains).map { .string($0.rawValue) })
        }
        if let unmappedKeys { object["unmappedKeys"] = .string(unmappedKeys.rawValue) }
        if !ignoreKeys.isEmpty { object["ignoreKeys"] = .array(ignoreKeys.map { .string($0) }) }
        if let unmappedColumn { object["unmappedColumn"] = .string(unmappedColumn) }
        if let versionAttribute { object["versionAttribute"] = .string(versionAttribute) }
        var attributesObject = JSONObject()
        // The column of kept keys is made from `unmappedKeys`, not written.
        for attribute in attributes where !attribute.isUnmappedColumn {
            var a = JSONObject()
            a["type"] = .string(attribute.type.rawValue)
            a["nullable"] = .bool(attribute.isNullable)
            if let value = attribute.defaultValue {
                switch value {
                case .date(let date): a["default"] = .double(date.timeIntervalSince1970)
                default: a["default"] = value.jsonValue
                }
            }
            if let jsonKey = attribute.jsonKey { a["jsonKey"] = .string(jsonKey) }
            if let transform = attribute.transform { a["transform"] = .string(transform) }
            attributesObject[attribute.name] = .object(a)
        }
        object["attributes"] = .object(attributesObject)
        if !relationships.isEmpty {
            var relationshipsObject = JSONObject()
            for relationship in relationships {
                var r = JSONObject()
                r[relationship.kind.rawValue] = .string(relationship.destination)
                if let foreignKey = relationship.foreignKey { r["foreignKey"] = .string(foreignKey) }
                if let inverse = relationship.inverse { r["inverse"] = .string(inverse) }
                if let through = relationship.through { r["through"] = .string(through) }
                if let keys = relationship.throughKeys { r["throughKeys"] = .array(keys.map { .string($0) }) }
                if let jsonKey = relationship.jsonKey { r["jsonKey"] = .string(jsonKey) }
                relationshipsObject[relationship.name] = .object(r)
            }
            object["relationships"] = .object(relationshipsObject)
        }
        if !indexes.isEmpty {
            object["indexes"] = .array(indexes.map { index in
                var i = JSONObject()
                if let name = index.name { i["name"] = .string(name) }
                i["attributes"] = .array(index.attributes.map { .string($0) })
                if index.isUnique { i["unique"] = .bool(true) }
                return .object(i)
            })
        }
        return .object(object)
    }
}

extension Route {
    var fileJSON: JSONValue {
        var object = JSONObject()
        object["method"] = .string(method.rawValue)
        object["path"] = .string(path)
        switch target {
        case .entity(let name): object["target"] = .string(name)
        case .data: object["target"] = "DATA"
        case .many: object["target"] = "MANY"
        }
        object["stale"] = .string(stalePolicy.rawValue)
        if let envelope { object["envelope"] = .string(envelope) }
        if let timeout {
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            object["timeout"] = .double(seconds)
        }
        if singleton { object["singleton"] = true }
        if let incremental {
            var members = JSONObject()
            members["parameter"] = .string(incremental.parameter)
            members["cursor"] = .string(incremental.cursor.description)
            if let items = incremental.items { members["items"] = .string(items.description) }
            if let deleted = incremental.deleted { members["deleted"] = .string(deleted.description) }
            if incremental.expiredStatuses != [410] {
                members["expiredStatus"] = .array(incremental.expiredStatuses.map { .int(Int64($0)) })
            }
            object["incremental"] = .object(members)
        }
        if let push { object["push"] = .object(["events": .string(push.events)]) }
        if let pagination { object["pagination"] = pagination.fileJSON }
        if let discriminator { object["discriminator"] = discriminator.fileJSON }
        if !headers.isEmpty {
            object["headers"] = .object(JSONObject(headers.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))
        }
        return .object(object)
    }
}

extension KeyConvention {
    /// The name used in schema files: `snake_case`, `camelCase` or `asIs`.
    public var schemaName: String {
        switch self {
        case .snakeCase: return "snake_case"
        case .camelCase: return "camelCase"
        case .asIs: return "asIs"
        }
    }

    /// The convention named `name` in a schema file.
    public init?(schemaName name: String) {
        switch name {
        case "snake_case": self = .snakeCase
        case "camelCase": self = .camelCase
        case "asIs": self = .asIs
        default: return nil
        }
    }
}
