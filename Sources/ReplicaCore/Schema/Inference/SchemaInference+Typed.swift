/// What a route's samples held when their objects were JSON:API resource objects: one shape per
/// `type` (objects of two types that share an id are never merged), the types of the document's
/// collection (`data`) and of its `included`, and each type's relationships.
final class TypedSamples {
    /// A relationship of a type's resources: `author` → `people`, to-one or to-many.
    struct Reference {
        var name: String
        /// The type its data named first, or `nil` while only `null` or `[]` was seen.
        var destination: String?
        var toMany: Bool
        /// Where it was first seen.
        var pointer: JSONPointer
    }

    /// One shape per type, in the order first seen.
    private(set) var shapes: [(type: String, shape: ObjectShape)] = []
    /// The types of the document's collection (`data`), in the order first seen.
    private(set) var collectionTypes: [String] = []
    /// Each type's relationships, in the order first seen.
    private(set) var references: [String: [Reference]] = [:]

    /// Members a JSON:API resource object may have.
    static let resourceMembers: Set<String> = ["type", "id", "lid", "attributes", "relationships", "links", "meta"]

    /// Whether `object` is a JSON:API resource object: a string `type`, an `id`, attributes or
    /// relationships, and nothing a resource object cannot hold.
    static func isResource(_ object: JSONObject) -> Bool {
        guard case .string? = object["type"], object["id"] != nil,
              object["attributes"]?.objectValue != nil || object["relationships"]?.objectValue != nil else { return false }
        return object.keys.allSatisfy { resourceMembers.contains($0) }
    }

    private func shape(_ type: String) -> ObjectShape {
        if let found = shapes.first(where: { $0.type == type }) { return found.shape }
        let made = ObjectShape(tracksUniqueness: true)
        shapes.append((type: type, shape: made))
        return made
    }

    /// Observes one resource object (``isResource(_:)``) of the collection or of `included`.
    func observe(_ object: JSONObject, isCollection: Bool, at pointer: JSONPointer) {
        guard case .string(let type)? = object["type"] else { return }
        if isCollection && !collectionTypes.contains(type) { collectionTypes.append(type) }
        // The fields a sync reads: the id and the attributes (relationships become foreign keys and links).
        var flat = JSONObject()
        if case .object(let attributes)? = object["attributes"] {
            for (key, value) in attributes where key != "id" { flat[key] = value }
        }
        if let id = object["id"] { flat["id"] = id }
        shape(type).observe(flat, at: pointer / "attributes")
        guard case .object(let relationships)? = object["relationships"] else { return }
        var known = references[type] ?? []
        for (name, relationship) in relationships {
            guard case .object(let members) = relationship, let data = members["data"] else { continue }
            var destination: String?
            let toMany: Bool
            switch data {
            case .object(let identifier):
                toMany = false
                destination = identifier["type"]?.stringValue
            case .array(let identifiers):
                toMany = true
                destination = identifiers.lazy.compactMap { $0.objectValue?["type"]?.stringValue }.first
            default:
                toMany = false
            }
            if let index = known.firstIndex(where: { $0.name == name }) {
                if known[index].destination == nil { known[index].destination = destination }
                if toMany { known[index].toMany = true }
            } else {
                known.append(Reference(name: name, destination: destination, toMany: toMany,
                                       pointer: pointer / "relationships" / name / "data"))
            }
        }
        references[type] = known
    }
}

extension RouteSamples {
    /// Takes a value of the document's `data` (an array's element, or its one resource) or of its
    /// `included` when it is a JSON:API resource object; `false` leaves it to the other samples.
    func takeResource(_ value: JSONValue, key: String, at pointer: JSONPointer) -> Bool {
        guard key == "data" || key == "included", case .object(let object) = value, TypedSamples.isResource(object) else {
            return false
        }
        let typed = self.typed ?? TypedSamples()
        self.typed = typed
        typed.observe(object, isCollection: key == "data", at: pointer)
        holdsResources = true
        return true
    }
}

extension InferenceResolver {
    /// The route of a document of JSON:API resources: one entity per type, the route's target the
    /// type of its collection, a `jsonapi` discriminator naming them all.
    func registerTyped(_ route: RouteSamples, _ typed: TypedSamples, file: JSONObject) throws -> JSONValue {
        var file = file
        let source = route.sources.first ?? route.pattern
        let variables = Self.variables(of: route.pattern)
        let target = typed.collectionTypes.first ?? typed.shapes.first?.type ?? ""
        if typed.collectionTypes.count > 1 {
            note(route.pattern, source, JSONPointer.root / "data",
                 "the collection holds several types (\(typed.collectionTypes.joined(separator: ", "))): the route's target is "
                 + "\(Inflection.entityName(forKey: target)), the first; the others are stored, never stale")
        }
        var entities = JSONObject()
        for (type, shape) in typed.shapes where shape.count > 0 {
            let name = Inflection.entityName(forKey: type)
            let draft = try register(name, shape: shape, route: route, variables: type == target ? variables : [], source: source)
            entities[type] = .string(draft.name)
            typeEntities[type] = draft.name
            var references = typedReferences[draft.name] ?? []
            for reference in typed.references[type] ?? [] where !references.contains(where: { $0.name == reference.name }) {
                references.append(reference)
            }
            typedReferences[draft.name] = references
        }
        file["target"] = .string(Inflection.entityName(forKey: target))
        if let members = route.envelopeMembers, let rule = PaginationRule.inferred(fromEnvelope: members), rule != .linkHeader {
            file["pagination"] = rule.fileJSON
        }
        file["discriminator"] = .object(["format": "jsonapi", "entities": .object(entities)])
        return .object(file)
    }

    /// The foreign keys and relationships of a JSON:API type's relationships, added to its
    /// entity's file JSON: a to-one to a known type is a foreign key and `toOne`, a to-many a
    /// `through` link table; one to a type no sample held keeps the ids as attributes.
    func addReferences(to entity: JSONValue, of draft: Draft) -> JSONValue {
        guard case .object(var object) = entity, let references = typedReferences[draft.name], !references.isEmpty else { return entity }
        var attributes = object["attributes"]?.objectValue ?? JSONObject()
        var relationships = object["relationships"]?.objectValue ?? JSONObject()
        for reference in references {
            let name = attributeName(reference.name)
            guard attributes[name] == nil, relationships[name] == nil else { continue }
            let destination = reference.destination.flatMap { typeEntities[$0] }.flatMap { self.draft(named: $0) }
            if let destination, destination.keyJSON?.count == 1 {
                if reference.toMany {
                    var spec: JSONObject = ["toMany": .string(destination.name),
                                            "through": .string(Inflection.linkTable(entity: draft.name, relationship: name))]
                    if destination.name == draft.name {
                        spec["throughKeys"] = .array(Inflection.linkKeys(entity: draft.name, relationship: name).map(JSONValue.string))
                    }
                    if convention.jsonKey(forAttribute: name) != reference.name { spec["jsonKey"] = .string(reference.name) }
                    relationships[name] = .object(spec)
                } else {
                    let foreignKey = name + "ID"
                    if attributes[foreignKey] == nil { attributes[foreignKey] = "string" }
                    var spec: JSONObject = ["toOne": .string(destination.name), "foreignKey": .string(foreignKey)]
                    if convention.jsonKey(forAttribute: name) != reference.name { spec["jsonKey"] = .string(reference.name) }
                    relationships[name] = .object(spec)
                }
                continue
            }
            // A type no sample held: its ids are kept as they are.
            let what = reference.destination.map { "type '\($0)', which no sample held" } ?? "no type (only null or [] seen)"
            if reference.toMany {
                attributes[name] = .object(["type": "json", "jsonKey": .string(reference.name)])
                note(draft.name + "." + name, draft.source, reference.pointer, "to-many relationship to \(what): its ids are kept as json")
            } else {
                let foreignKey = name + "ID"
                attributes[foreignKey] = .object(["type": "string", "jsonKey": .string(reference.name)])
                note(draft.name + "." + foreignKey, draft.source, reference.pointer,
                     "to-one relationship to \(what): its id is kept, without a relationship")
            }
        }
        object["attributes"] = .object(attributes)
        if !relationships.isEmpty { object["relationships"] = .object(relationships) }
        return .object(object)
    }
}
