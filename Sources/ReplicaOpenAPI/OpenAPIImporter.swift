import Foundation
import OpenAPIKit
import ReplicaCore

/// Turns one OpenAPI document into a schema file: entities first (which component schemas have
/// an identity), then routes (which may name inline objects as entities), then each entity's
/// members; the file is loaded by the core's schema loader, so it is validated as a file is.
final class OpenAPIImporter {
    /// One entity being made.
    final class Draft {
        let name: String
        let object: ObjectShape
        /// The JSON key of its primary key.
        let key: String
        /// Where its schema is.
        let pointer: JSONPointer
        let description: String?

        init(name: String, object: ObjectShape, key: String, pointer: JSONPointer, description: String?) {
            self.name = name
            self.object = object
            self.key = key
            self.pointer = pointer
            self.description = description
        }
    }

    let document: OpenAPI.Document
    let source: String
    let resolver: ShapeResolver
    /// Entity names by component name, for component schemas that are entities.
    private(set) var entityNames: [String: String] = [:]
    private(set) var drafts: [Draft] = []
    /// Names no inline entity may take: every entity's and every component schema's.
    private var takenNames: Set<String> = []
    /// Entities made of inline objects.
    private var inlineNames: Set<String> = []
    private(set) var convention: KeyConvention = .snakeCase
    private(set) var notes: [SchemaInference.Note] = []
    /// The document's path templates by route path (`/pet/:petId` → `/pet/{petId}`), for pointers.
    var routeTemplates: [String: String] = [:]
    /// The members beside the collection of each path's envelope response (placeholders of
    /// their types), by path template: what its pagination is recognised from.
    var envelopeMembers: [String: JSONObject] = [:]
    /// What reading the last response decided that its route's note says: the one entity of a
    /// `oneOf`/`anyOf`, or why it is DATA (several entities, no identity), and where.
    var responseNote: (pointer: JSONPointer, message: String)?

    init(document: OpenAPI.Document, raw: JSONValue, source: String) {
        self.document = document
        self.source = source
        let schemas = document.components.schemas.map { (name: $0.key.rawValue, schema: $0.value) }
        self.resolver = ShapeResolver(schemas: schemas, raw: raw)
    }

    func draft(named name: String) -> Draft? { drafts.first { $0.name == name } }

    /// The entity a component schema is, if it is one.
    func entity(forComponent name: String) -> Draft? { entityNames[name].flatMap(draft(named:)) }

    /// The schema, its file JSON and the notes.
    func inferredSchema(name: String) throws -> InferredSchema {
        discoverEntities()
        convention = KeyConvention.detect(keys: componentKeys())
        let routes = routesJSON()
        var entities = JSONObject()
        var index = 0
        while index < drafts.count {   // placing members may name inline objects as entities
            let draft = drafts[index]
            entities[draft.name] = entityJSON(draft)
            index += 1
        }
        var file: JSONObject = ["name": .string(name), "version": 1]
        let title = document.info.title.trimmingCharacters(in: .whitespaces)
        if !title.isEmpty { file["description"] = .string("\(title) \(document.info.version) (imported from \(source))") }
        file["keyConvention"] = .string(convention.schemaName)
        file["entities"] = .object(entities)
        file["routes"] = .array(routes)
        let fileJSON = JSONValue.object(file)
        let schema = try Schema(jsonValue: fileJSON, file: source)
        notes += unscopedVariableNotes(schema)
        var seen: Set<SchemaInference.Note> = []
        return try InferredSchema(fileJSON: fileJSON, notes: notes.filter { seen.insert($0).inserted }, file: source)
    }

    func note(_ subject: String, _ pointer: JSONPointer, _ message: String) {
        notes.append(SchemaInference.Note(subject: subject, place: "\(source) #\(pointer)", message: message))
    }

    // MARK: Entities

    /// Component schemas that are objects with an identity become entities, in document order.
    private func discoverEntities() {
        let parameters = identityParameters()
        takenNames = Set(resolver.schemas.map { Self.entityName(forComponent: $0.name) })
        for (component, _) in resolver.schemas {
            let resolved = resolver.expand(component)
            guard case .object(let object) = resolved.shape else { continue }
            var name = Self.entityName(forComponent: component)
            var suffix = 2
            while drafts.contains(where: { $0.name.lowercased() == name.lowercased() }) || ["DATA", "MANY"].contains(name) {
                name = Self.entityName(forComponent: component) + String(suffix)
                suffix += 1
            }
            guard let key = identity(of: object, named: name, parameters: parameters[component] ?? []) else {
                note(component, resolved.pointer, "an object without an id or identity-like property: not an entity")
                continue
            }
            entityNames[component] = name
            takenNames.insert(name)
            drafts.append(Draft(name: name, object: object, key: key, pointer: resolved.pointer, description: resolved.description))
        }
    }

    /// The identity of an object: `id`; else a key-like property named after it (`petId`,
    /// `pet_id`) or `login`, `username`, `slug`, `uuid`, `guid`; else a path parameter of a
    /// `GET …/{param}` answering it that names one of its properties.
    func identity(of object: ObjectShape, named name: String, parameters: [String]) -> String? {
        func keyLike(_ key: String) -> Bool {
            guard let property = object.property(key), !property.undefined else { return false }
            return ["integer", "string"].contains(resolver.scalarType(property.value))
        }
        let lower = Inflection.lowerFirst(name)
        let candidates = ["id", lower + "Id", lower + "ID", Inflection.snakeCase(name) + "_id", "login", "username", "slug", "uuid", "guid"]
        return candidates.first(where: keyLike) ?? parameters.first(where: keyLike)
    }

    /// Makes an entity of an inline object with an identity, named `name`, unless the name is
    /// taken; the same inline object seen again (the same key, no property the first lacks) is
    /// the entity made the first time.
    func inlineEntity(named name: String, object: ObjectShape, pointer: JSONPointer) -> Draft? {
        guard let key = identity(of: object, named: name, parameters: []) else { return nil }
        if inlineNames.contains(name), let made = draft(named: name) {
            let known = Set(made.object.properties.map(\.key))
            return made.key == key && object.properties.allSatisfy({ known.contains($0.key) }) ? made : nil
        }
        guard !takenNames.contains(name), !["DATA", "MANY"].contains(name) else { return nil }
        let made = Draft(name: name, object: object, key: key, pointer: pointer, description: nil)
        takenNames.insert(name)
        inlineNames.insert(name)
        drafts.append(made)
        return made
    }

    /// `pet` → `Pet`, `pet_owner` → `PetOwner`, `Pet.Owner` → `PetOwner`.
    static func entityName(forComponent name: String) -> String {
        let words = name.split { !($0.isLetter || $0.isNumber) }
        let joined = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        guard let first = joined.first else { return "Schema" }
        return first.isNumber ? "Schema" + joined : joined
    }

    /// Every property key of every component schema (nested objects too), each as often as it is
    /// defined: what the key convention is decided on.
    private func componentKeys() -> [String] {
        var keys: [String] = []
        func collect(_ shape: Shape, depth: Int) {
            guard depth < 8 else { return }
            switch shape {
            case .object(let object):
                for property in object.properties {
                    keys.append(property.key)
                    collect(property.value.shape, depth: depth + 1)
                }
            case .array(let items):
                collect(items.shape, depth: depth + 1)
            case .component, .scalar, .json:
                break
            }
        }
        for (component, _) in resolver.schemas { collect(resolver.expand(component).shape, depth: 0) }
        return keys
    }
}
