import ReplicaCore

/// One entity's members as the schema file writes them, names kept unique (column names are
/// compared without case).
struct EntityMembers {
    var attributes = JSONObject()
    var relationships = JSONObject()
    /// Lower-cased names taken, to the name and, for attributes, the type.
    private var taken: [String: (name: String, type: String?)] = [:]
    /// Foreign keys made for to-one relationships, by lower-cased name.
    var foreignKeys: Set<String> = []

    /// `name`, or `name2`, `name3`… when another member took it.
    mutating func unique(_ name: String, type: String? = nil) -> String {
        var candidate = name
        var index = 2
        while taken[candidate.lowercased()] != nil {
            candidate = name + String(index)
            index += 1
        }
        taken[candidate.lowercased()] = (candidate, type)
        return candidate
    }

    /// The attribute of this name (any case) and type, if there is one.
    func attribute(named name: String, type: String) -> String? {
        guard let found = taken[name.lowercased()], found.type == type else { return nil }
        return found.name
    }
}

extension OpenAPIImporter {
    /// An entity's file JSON: every property placed as a column, a relationship or json.
    func entityJSON(_ draft: Draft) -> JSONValue {
        var members = EntityMembers()
        for property in draft.object.properties {
            place(property, of: draft, into: &members)
        }
        var entity = JSONObject()
        if let description = draft.description { entity["description"] = .string(description) }
        if let union = draft.object.union { note(draft.name, union.pointer, union.message) }
        let keyName = convention.inferredAttributeName(forKey: draft.key)
        if let key = members.attribute(named: keyName, type: keyType(of: draft)), key != "id" {
            entity["primaryKey"] = .string(key)
        }
        // A single key is read from the entity's jsonIdKey (`id` by default), in nested objects too.
        if draft.key != "id" { entity["jsonIdKey"] = .string(draft.key) }
        entity["attributes"] = .object(members.attributes)
        if !members.relationships.isEmpty { entity["relationships"] = .object(members.relationships) }
        if draft.object.additional {
            entity["unmappedKeys"] = "keep"
            note(draft.name, draft.pointer, "additionalProperties: keys beyond its properties are kept in its JSON column of "
                 + "unmapped keys (\"unmappedKeys\": \"keep\")")
        }
        return .object(entity)
    }

    /// The column type of an entity's key.
    func keyType(of draft: Draft) -> String {
        draft.object.property(draft.key).flatMap { resolver.scalarType($0.value) } ?? "integer"
    }

    /// An attribute's file JSON: its type, its JSON key when the convention does not give it,
    /// `nullable: false` when required and never null, its description.
    func attributeJSON(_ name: String, type: String, jsonKey: String, nullable: Bool = true, description: String? = nil) -> JSONValue {
        var spec: JSONObject = ["type": .string(type)]
        if convention.jsonKey(forAttribute: name) != jsonKey { spec["jsonKey"] = .string(jsonKey) }
        if !nullable { spec["nullable"] = false }
        if let description { spec["description"] = .string(description) }
        return spec.count == 1 ? .string(type) : .object(spec)
    }

    private func place(_ property: PropertyShape, of draft: Draft, into members: inout EntityMembers) {
        let key = property.key
        let name = convention.inferredAttributeName(forKey: key)
        let value = resolver.following(property.value)
        let nonNull = property.required && !value.nullable
        let isComponent = if case .component = property.value.shape { true } else { false }
        if case .component(let target) = property.value.shape, let related = entity(forComponent: target) {
            toOne(key, related, description: property.value.description, into: &members)
            return
        }
        switch value.shape {
        case .scalar(let type):
            if members.foreignKeys.contains(name.lowercased()), let foreignKey = members.attribute(named: name, type: type) {
                // `categoryId` beside `category`: the foreign key reads this key too.
                members.attributes[foreignKey] = attributeJSON(foreignKey, type: type, jsonKey: key)
                return
            }
            let isKey = key == draft.key
            let attribute = members.unique(name, type: type)
            members.attributes[attribute] = attributeJSON(attribute, type: type, jsonKey: key, nullable: isKey || !nonNull,
                                                          description: value.description)
        case .object(let object):
            // An inline object with an identity is an entity named after its key (a component
            // schema that is no entity is none here either).
            let entityName = Inflection.entityName(forKey: key)
            if !isComponent, let inline = inlineEntity(named: entityName, object: object, pointer: value.pointer) {
                toOne(key, inline, description: value.description, into: &members)
                return
            }
            if !isComponent, identity(of: object, named: entityName, parameters: []) != nil {
                note(draft.name + "." + name, value.pointer, "an object with an identity, but \(entityName) names another entity "
                     + "or component: kept in \(draft.name)")
            }
            if let dotted = dottedMembers(object) {
                for member in dotted {
                    let attribute = members.unique(name + Self.upperFirst(convention.inferredAttributeName(forKey: member.key)),
                                                   type: member.type)
                    members.attributes[attribute] = attributeJSON(attribute, type: member.type, jsonKey: key + "." + member.key,
                                                                  nullable: !(nonNull && member.nonNull), description: member.description)
                }
                if let union = object.union { note(draft.name + "." + name, union.pointer, union.message + " (dotted attributes)") }
            } else {
                let attribute = json(key, name, value, nonNull: nonNull, into: &members)
                if let union = object.union { note(draft.name + "." + attribute, union.pointer, union.message + ": json") }
            }
        case .array(let items):
            if case .component(let target) = items.shape, let related = entity(forComponent: target) {
                toMany(key, related, of: draft, description: value.description, into: &members)
                return
            }
            let element = resolver.following(items)
            if case .object(let object) = items.shape,
               let inline = inlineEntity(named: Inflection.entityName(forKey: key), object: object, pointer: items.pointer) {
                toMany(key, inline, of: draft, description: value.description, into: &members)
                return
            }
            let attribute = json(key, name, value, nonNull: nonNull, into: &members)
            if case .object = element.shape {
                let what = if case .component(let target) = items.shape { "\(target) objects" } else { "objects" }
                note(draft.name + "." + attribute, value.pointer, "an array of \(what) without an id or identity-like property: json")
            }
        case .json(let unmapped):
            let attribute = json(key, name, value, nonNull: nonNull, into: &members)
            if let unmapped { note(draft.name + "." + attribute, unmapped.pointer, unmapped.message) }
        case .component:
            // A component that is only a reference to another: followed once above, so a cycle.
            json(key, name, value, nonNull: nonNull, into: &members)
        }
    }

    /// A json attribute; returns its name.
    @discardableResult
    private func json(_ key: String, _ name: String, _ value: Resolved, nonNull: Bool, into members: inout EntityMembers) -> String {
        let attribute = members.unique(name, type: "json")
        members.attributes[attribute] = attributeJSON(attribute, type: "json", jsonKey: key, nullable: !nonNull,
                                                      description: value.description)
        return attribute
    }

    /// A nested object of `related`: its foreign key (`categoryID`) and the relationship.
    private func toOne(_ key: String, _ related: Draft, description: String?, into members: inout EntityMembers) {
        let name = convention.inferredAttributeName(forKey: key)
        let type = keyType(of: related)
        let foreignKey: String
        if let existing = members.attribute(named: name + "ID", type: type) {
            foreignKey = existing   // `categoryId` before `category`: it is the foreign key
        } else {
            foreignKey = members.unique(name + "ID", type: type)
            members.attributes[foreignKey] = attributeJSON(foreignKey, type: type, jsonKey: convention.jsonKey(forAttribute: foreignKey))
        }
        members.foreignKeys.insert(foreignKey.lowercased())
        var spec: JSONObject = ["toOne": .string(related.name), "foreignKey": .string(foreignKey)]
        let relationship = members.unique(name)
        if convention.jsonKey(forAttribute: relationship) != key { spec["jsonKey"] = .string(key) }
        if let description { spec["description"] = .string(description) }
        members.relationships[relationship] = .object(spec)
    }

    /// An array of `related` objects: links in a join table named as inference names it.
    private func toMany(_ key: String, _ related: Draft, of draft: Draft, description: String?, into members: inout EntityMembers) {
        let relationship = members.unique(convention.inferredAttributeName(forKey: key))
        var spec: JSONObject = ["toMany": .string(related.name),
                                "through": .string(Inflection.linkTable(entity: draft.name, relationship: relationship))]
        if related.name == draft.name {
            spec["throughKeys"] = .array(Inflection.linkKeys(entity: draft.name, relationship: relationship).map(JSONValue.string))
        }
        if convention.jsonKey(forAttribute: relationship) != key { spec["jsonKey"] = .string(key) }
        if let description { spec["description"] = .string(description) }
        members.relationships[relationship] = .object(spec)
    }

    /// A member of an inline object read at a dotted key path.
    struct DottedMember {
        let key: String
        let type: String
        let nonNull: Bool
        let description: String?
    }

    /// The members of an object without an identity when all are scalars (and none has a dot
    /// in its key, which a key path would misread); else `nil`.
    func dottedMembers(_ object: ObjectShape) -> [DottedMember]? {
        guard !object.additional else { return nil }
        var members: [DottedMember] = []
        for property in object.properties {
            let value = resolver.following(property.value)
            guard !property.key.contains("."), case .scalar(let type) = value.shape else { return nil }
            members.append(DottedMember(key: property.key, type: type, nonNull: property.required && !value.nullable,
                                        description: value.description))
        }
        return members
    }

    static func upperFirst(_ name: String) -> String { name.prefix(1).uppercased() + name.dropFirst() }
}
