import Foundation
import Replica

/// What `replica save`, `replica delete` and `replica outbox retry` read from their arguments:
/// a JSON object in the API's shape, mapped through the entity's property map (as `replica import`
/// maps it), and a primary key typed by the entity's key attribute.
enum LocalWriteInput {
    /// The entity named `name`, or a `CLIError` naming the schema's entities.
    static func entity(_ name: String, in store: any ReplicaStore) throws -> Entity {
        guard let entity = store.schema.entity(named: name) else {
            let known = store.schema.entities.map(\.name).joined(separator: ", ")
            throw CLIError("unknown entity '\(name)' (the schema has: \(known)); nothing was written")
        }
        return entity
    }

    /// The attribute values of `text`, one JSON object of `entity` in the API's shape (JSON keys,
    /// key paths, a to-one relationship's id for its foreign key; the object may be wrapped in the
    /// entity's namespace).
    ///
    /// ```swift
    /// try LocalWriteInput.values(#"{"name": "Ann", "person_id": 1}"#, of: car, in: store)   // ["name": "Ann", "personID": 1]
    /// ```
    ///
    /// - Throws: `CLIError` for text that is not one JSON object, a key that matches nothing, a
    ///   nested object or array, a value its attribute cannot hold, or an object with no attribute.
    static func values(_ text: String, of entity: Entity, in store: any ReplicaStore) throws -> [String: AttributeValue] {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: text)
        } catch {
            throw CLIError("invalid JSON for \(entity.name): \(error); nothing was written")
        }
        guard case .object(var object) = value else {
            throw CLIError("expected one JSON object for \(entity.name), found \(value.typeName); nothing was written")
        }
        if let namespace = entity.namespace, object.keys == [namespace], case .object(let inner)? = object[namespace] {
            object = inner
        }
        let map = try store.mapping.requireMap(entity.name)
        let mapped: MappedObject
        do {
            mapped = try map.map(object, at: JSONPointer(components: []))
        } catch let error as MappingError {
            throw CLIError("\(error); nothing was written")
        }
        if let unknown = mapped.unknownKeys.first {
            let keys = map.attributes.map(\.jsonKey).joined(separator: ", ")
            throw CLIError("\(entity.name) has no attribute for the JSON key '\(unknown)' (its keys: \(keys)); nothing was written")
        }
        for (index, related) in mapped.relationships.enumerated() {
            switch related {
            case .object?, .array?:
                throw CLIError("\(entity.name).\(mapped.relationshipNames[index]): nested objects are not written locally; "
                               + "give the related object's key instead; nothing was written")
            case .reference?, .null?, nil:
                continue
            }
        }
        var values: [String: AttributeValue] = [:]
        for (index, value) in mapped.values.enumerated() {
            guard let value else { continue }
            // The attribute that keeps unmapped keys is null when there were none: not a change.
            if index == map.unmappedIndex && value.isNull { continue }
            values[mapped.attributeNames[index]] = value
        }
        if values.isEmpty {
            throw CLIError("the JSON object gives no attribute of \(entity.name); nothing was written")
        }
        return values
    }

    /// The primary key `text` names: typed by the entity's key attribute (`7` for an integer key,
    /// any text for a text key), a JSON array of the parts for a composite key.
    ///
    /// - Throws: `CLIError` when it does not fit the key.
    static func key(_ text: String, of entity: Entity, in store: any ReplicaStore) throws -> AttributeValue {
        let map = try store.mapping.requireMap(entity.name)
        let names = entity.primaryKeyNames
        let parts: [JSONValue]
        if entity.hasCompositeKey {
            guard case .array(let array)? = try? JSONValue(parsing: text), array.count == names.count else {
                throw CLIError("\(entity.name)'s key has \(names.count) parts (\(names.joined(separator: ", "))): "
                               + "give them as a JSON array, not '\(text)'")
            }
            parts = array
        } else if entity.attribute(named: entity.primaryKey)?.type == .string {
            parts = [.string(text)]
        } else {
            guard let parsed = try? JSONValue(parsing: text) else {
                throw CLIError("'\(text)' is not a key of \(entity.name) (\(entity.primaryKey) is "
                               + "\(entity.attribute(named: entity.primaryKey)?.type.rawValue ?? "its key"))")
            }
            parts = [parsed]
        }
        var object = JSONObject()
        for (name, part) in zip(names, parts) {
            guard let jsonKey = map.jsonKey(forAttribute: name) else { continue }
            object[jsonKey] = part
        }
        let mapped: MappedObject
        do {
            mapped = try map.map(object, at: JSONPointer(components: []))
        } catch let error as MappingError {
            throw CLIError("'\(text)' is not a key of \(entity.name): \(error.message)")
        }
        guard let key = mapped.primaryKey, !key.isNull else {
            throw CLIError("'\(text)' is not a key of \(entity.name)")
        }
        return key
    }

    /// The first line of `text`, for a one-line report of a response body.
    static func firstLine(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return line.count > 300 ? String(line.prefix(299)) + "…" : line
    }
}
