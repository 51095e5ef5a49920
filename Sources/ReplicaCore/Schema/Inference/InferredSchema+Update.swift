import Foundation

extension InferredSchema {
    /// `existing` with what these samples show that it lacks: entities it does not have, the
    /// attributes and relationships of its entities whose JSON keys it does not map (attributes
    /// added nullable: rows stored before have no value), and routes it does not declare. Nothing
    /// is removed or changed; when anything was added the version goes up by one, so that a store
    /// opened with the result adds the columns and tables to the ones it has and keeps its rows.
    ///
    /// ```swift
    /// let update = try inferred.updating(try Schema(contentsOf: URL(fileURLWithPath: "github.json")))
    /// update.added   // ["Issue.reactions", "Issue.stateReason", "route GET /repos/:owner/:repo/labels"]
    /// ```
    ///
    /// - Parameter existing: The schema to update (its names, keys and settings are kept).
    /// - Returns: The updated schema, and what was added (`Entity.attribute`, `entity Name`, `route GET /path`).
    /// - Throws: ``SchemaError`` when the merged schema is not valid (an added entity whose table
    ///   name is taken, say).
    public func updating(_ existing: Schema) throws -> (schema: InferredSchema, added: [String]) {
        guard case .object(var root) = existing.fileJSON, case .object(let inferredRoot) = fileJSON else {
            return (try InferredSchema(fileJSON: existing.fileJSON, notes: notes), [])
        }
        var added: [String] = []
        var entities = root["entities"]?.objectValue ?? JSONObject()
        let inferredEntities = inferredRoot["entities"]?.objectValue ?? JSONObject()
        for newEntity in schema.entities {
            guard case .object(let newJSON)? = inferredEntities[newEntity.name] else { continue }
            guard let old = existing.entity(named: newEntity.name) ?? existing.entity(named: newEntity.tableName),
                  case .object(var oldJSON)? = entities[old.name] else {
                entities[newEntity.name] = .object(newJSON)
                added.append("entity \(newEntity.name)")
                continue
            }
            let oldMap = try? PropertyMap(entity: old, in: existing)
            let newMap = try? PropertyMap(entity: newEntity, in: schema)
            // The JSON keys the entity maps already: its attributes', its relationships', its ignored ones.
            var mapped = Set(old.attributes.compactMap { oldMap?.jsonKey(forAttribute: $0.name) ?? $0.jsonKey })
            mapped.formUnion(old.relationships.map { $0.jsonKey ?? existing.keyConvention.jsonKey(forAttribute: $0.name) })
            mapped.formUnion(old.relationships.compactMap(\.foreignKey).map { existing.keyConvention.jsonKey(forAttribute: $0) })
            var attributes = oldJSON["attributes"]?.objectValue ?? JSONObject()
            let newAttributes = newJSON["attributes"]?.objectValue ?? JSONObject()
            for attribute in newEntity.attributes {
                let key = newMap?.jsonKey(forAttribute: attribute.name) ?? attribute.jsonKey ?? attribute.name
                guard !mapped.contains(key), !old.ignoreKeys.contains(key), var value = newAttributes[attribute.name] else { continue }
                // Under the existing schema's convention, the attribute keeps the JSON key it was inferred for.
                var name = attribute.name
                var suffix = 2
                while old.attribute(named: name) != nil || old.relationship(named: name) != nil || attributes[name] != nil {
                    name = attribute.name + String(suffix)
                    suffix += 1
                }
                var members: JSONObject
                switch value {
                case .string(let type): members = ["type": .string(type)]
                case .object(let object): members = object
                default: continue
                }
                members["nullable"] = nil
                if existing.keyConvention.jsonKey(forAttribute: name) != key { members["jsonKey"] = .string(key) }
                value = .object(members)
                attributes[name] = value
                mapped.insert(key)
                added.append("\(old.name).\(name)")
            }
            oldJSON["attributes"] = .object(attributes)
            if let newRelationships = newJSON["relationships"]?.objectValue {
                var relationships = oldJSON["relationships"]?.objectValue ?? JSONObject()
                for relationship in newEntity.relationships {
                    let key = relationship.jsonKey ?? schema.keyConvention.jsonKey(forAttribute: relationship.name)
                    guard !mapped.contains(key), old.relationship(named: relationship.name) == nil, old.attribute(named: relationship.name) == nil,
                          let value = newRelationships[relationship.name] else { continue }
                    relationships[relationship.name] = value
                    mapped.insert(key)
                    added.append("\(old.name).\(relationship.name)")
                }
                if !relationships.isEmpty { oldJSON["relationships"] = .object(relationships) }
            }
            entities[old.name] = .object(oldJSON)
        }
        root["entities"] = .object(entities)
        var routes = root["routes"]?.arrayValue ?? []
        // A route is declared when the schema has one of its method matching the same paths (variables
        // inferred under another name, `:ownerPath` for `:owner`, are the same route).
        func shape(_ route: Route) -> String {
            "\(route.method.rawValue) " + ((try? RoutePattern(route.path).shape) ?? route.path)
        }
        let declared = Set(existing.routes.map(shape))
        for (offset, route) in schema.routes.enumerated() where !declared.contains(shape(route)) {
            guard let value = inferredRoot["routes"]?.arrayValue?[offset] else { continue }
            routes.append(value)
            added.append("route \(route.method.rawValue) \(route.path)")
        }
        if !routes.isEmpty { root["routes"] = .array(routes) }
        if !added.isEmpty { root["version"] = .int(Int64(existing.version + 1)) }
        return (try InferredSchema(fileJSON: .object(root), notes: notes), added)
    }
}
