/// A response whose objects name their own entity (``Discriminator``): where its collection and
/// its other objects are, and the entity of each type.
package struct TypedShape: Sendable {
    /// The route's target: the entity its complete collection can make stale.
    var target: Int
    var key: String
    var layout: Discriminator.Layout
    /// The entity index of each type value.
    var entities: [String: Int]
    /// The collection (the route's envelope): its objects are the response's own.
    package var collection: JSONPathPattern
    /// Other objects stored beside it (JSON:API's `included`), never a complete collection.
    var included: JSONPathPattern?

    var patterns: [JSONPathPattern] { [collection] + (included.map { [$0] } ?? []) }

    /// Whether an element matched by pattern number `index` is of the collection.
    func isCollection(patternIndex index: Int) -> Bool { index == 0 }
}

/// One object of a typed response, ready for its entity's property map.
struct TypedObject {
    var entity: Int
    /// The object as its entity's map reads it (a JSON:API resource flattened).
    var value: JSONValue
    /// Where the keys of ``value`` were in the response, below the object, when they moved
    /// (`title` → `attributes/title`): errors and warnings name the response's own places.
    var places: [String: [JSONPointer.Component]]

    /// `pointer` (below `base`, the object's place) as a place in the response.
    func locate(_ pointer: JSONPointer, base: JSONPointer) -> JSONPointer {
        guard !places.isEmpty, pointer.components.count > base.components.count,
              pointer.components.starts(with: base.components),
              case .key(let key) = pointer.components[base.components.count], let place = places[key]
        else { return pointer }
        return JSONPointer(components: base.components + place + pointer.components.dropFirst(base.components.count + 1))
    }
}

extension TypedShape {
    /// What happened to one object: its entity and the value to map, or the type that named no entity.
    enum Resolution {
        case object(TypedObject)
        /// The type value (`(none)` when the object has none) and where the discriminator is.
        case unknownType(String, at: JSONPointer)
        /// `null` where an object could be: JSON:API's empty primary data (`{"data": null}`), no `included`.
        case nothing
        /// A resource object of `entity` that breaks JSON:API's shape (`attributes` that are no
        /// object); `key` is its id as the entity's map reads it, when it has one.
        case invalid(MappingError, entity: Int, key: JSONValue)
    }

    /// The entity of `value` by its discriminator, and `value` as that entity's map reads it.
    func resolve(_ value: JSONValue, at pointer: JSONPointer, maps: [PropertyMap]) -> Resolution {
        if value.isNull { return .nothing }
        guard case .object(let object) = value else {
            // Not an object: the target's map reports it (expected an object) with its pointer.
            return .object(TypedObject(entity: target, value: value, places: [:]))
        }
        let type: String?
        switch object[key] {
        case .string(let text)?: type = text
        case .int(let number)?: type = String(number)
        default: type = nil
        }
        guard let type, let entity = entities[type] else {
            return .unknownType(type ?? "(none)", at: pointer / key)
        }
        switch layout {
        case .plain:
            var plain = object
            if maps[entity].attribute(forJSONKey: key) == nil { plain[key] = nil }
            return .object(TypedObject(entity: entity, value: .object(plain), places: [:]))
        case .jsonAPI:
            let name = maps[entity].entity.name
            for member in ["attributes", "relationships"] {
                guard let found = object[member], !found.isNull, found.objectValue == nil else { continue }
                return .invalid(MappingError(.notAnObject, "a JSON:API resource's \(member) must be an object, found "
                                             + "\(found.typeName) \(found.excerpt())", entity: name, pointer: pointer / member,
                                             value: found.excerpt()),
                                entity: entity, key: object["id"] ?? .null)
            }
            for (relationship, found) in object["relationships"]?.objectValue ?? [:] where found.objectValue == nil {
                return .invalid(MappingError(.notAnObject, "a JSON:API relationship must be an object (with data, links or meta), "
                                             + "found \(found.typeName) \(found.excerpt())", entity: name,
                                             pointer: pointer / "relationships" / relationship, value: found.excerpt()),
                                entity: entity, key: object["id"] ?? .null)
            }
            return .object(Self.flattenResource(object, map: maps[entity], entity: entity))
        }
    }

    /// A JSON:API resource object as its entity's map reads it: `id` under the entity's key,
    /// `attributes` at the top, each relationship's `data` as a reference (a to-one's id, a
    /// to-many's ids, `null`); relationships without `data`, `links` and `meta` left out.
    static func flattenResource(_ resource: JSONObject, map: PropertyMap, entity: Int) -> TypedObject {
        var flat = JSONObject()
        var places: [String: [JSONPointer.Component]] = [:]
        let idKey = PropertyMap.primaryKeyJSONKey(of: map.entity)
        if case .object(let attributes)? = resource["attributes"] {
            for (name, value) in attributes {
                flat[name] = value
                places[name] = [.key("attributes"), .key(name)]
            }
        }
        if case .object(let relationships)? = resource["relationships"] {
            for (name, relationship) in relationships {
                guard case .object(let members) = relationship, let data = members["data"] else { continue }
                switch data {
                case .object(let identifier):
                    flat[name] = identifier["id"] ?? .null
                    places[name] = [.key("relationships"), .key(name), .key("data"), .key("id")]
                case .array(let identifiers):
                    flat[name] = .array(identifiers.map { identifier in
                        if case .object(let members) = identifier { return members["id"] ?? .null }
                        return identifier
                    })
                    places[name] = [.key("relationships"), .key(name), .key("data")]
                default:
                    flat[name] = data
                    places[name] = [.key("relationships"), .key(name), .key("data")]
                }
            }
        }
        // The id last, so that no attribute of the same name replaces it.
        if let id = resource["id"] {
            if !idKey.contains(".") {
                flat[idKey] = id
                if idKey != "id" { places[idKey] = [.key("id")] }
            } else {
                flat["id"] = id
            }
        }
        return TypedObject(entity: entity, value: .object(flat), places: places)
    }
}
