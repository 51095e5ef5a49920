import Foundation

/// A schema inferred from samples: the schema, its file form, and what was guessed.
///
/// ```swift
/// let inferred = try inference.infer()
/// try inferred.text.write(toFile: "schema.json", atomically: true, encoding: .utf8)
/// ```
public struct InferredSchema: Sendable {
    /// The schema, loaded from ``fileJSON`` as a schema file is.
    public let schema: Schema
    /// The schema file's JSON.
    public let fileJSON: JSONValue
    /// What inference had to guess, each with a pointer into its sample.
    public let notes: [SchemaInference.Note]

    /// The schema file's text: indented JSON ending in a newline.
    public var text: String { fileJSON.serialized(pretty: true) + "\n" }

    /// A result made elsewhere (an OpenAPI import): loads `fileJSON` as a schema file is loaded,
    /// so it is validated exactly like one.
    ///
    /// ```swift
    /// let inferred = try InferredSchema(fileJSON: file, notes: [], file: "petstore.yaml")
    /// inferred.schema.entities.map(\.name)   // ["Pet", "Category", "Tag"]
    /// ```
    /// - Parameters:
    ///   - fileJSON: the schema file's JSON.
    ///   - notes: what had to be guessed or could not be mapped, with pointers.
    ///   - file: the name errors give the schema.
    /// - Throws: ``SchemaError`` when the file JSON is no valid schema.
    public init(fileJSON: JSONValue, notes: [SchemaInference.Note], file: String? = nil) throws {
        self.schema = try Schema(jsonValue: fileJSON, file: file)
        self.fileJSON = fileJSON
        self.notes = notes
    }
}

extension SchemaInference {
    /// The schema the samples so far imply.
    ///
    /// ```swift
    /// let inferred = try inference.infer()
    /// inferred.schema.entities.map(\.name)   // ["Issue", "User", "Label"]
    /// ```
    /// - Returns: the schema, its file JSON and the notes.
    /// - Throws: ``SchemaError`` when no sample held an object, or a collection's objects have
    ///   no key that identifies them (no `id`, no unique key), naming the route.
    public func infer() throws -> InferredSchema {
        let resolver = InferenceResolver(routes: routeSamples)
        let file = try resolver.fileJSON(name: name)
        return try InferredSchema(fileJSON: file, notes: resolver.notes, file: "inferred schema")
    }
}

/// Turns observed shapes into a schema file.
final class InferenceResolver {
    /// One entity being made: its objects' shape and where they came from.
    final class Draft {
        let name: String
        var shape: ObjectShape
        /// The primary key's JSON keys (decided on a route's own objects, whose uniqueness is known).
        var keyJSON: [String]?
        /// The route variables that fill attributes.
        var scope: [String] = []
        /// A table name the entity must have (a MANY collection's key).
        var table: String?
        let source: String
        /// Made of nested objects only (no route answers objects of it): its key may still follow
        /// what a path names it by.
        var isNested = false
        /// Keyed by another member than the one first chosen, because a route's path names its
        /// objects by it (`login`): its foreign keys are named after the key (`ownerLogin`).
        var keyedByPath = false
        /// The values the route variables had in the concrete paths of the samples (`owner` → `octocat`).
        var pathValues: [String: Set<String>] = [:]
        /// Route variables renamed in the routes targeting this entity (`owner` → `ownerPath`), and
        /// the attribute each renamed one fills.
        var renamedVariables: [String: String] = [:]

        init(name: String, shape: ObjectShape, source: String) {
            self.name = name
            self.shape = shape
            self.source = source
        }
    }

    let routes: [RouteSamples]
    let convention: KeyConvention
    private(set) var drafts: [Draft] = []
    private(set) var notes: [SchemaInference.Note] = []
    /// JSON:API types' relationships by entity name, and each type's entity (``registerTyped``).
    var typedReferences: [String: [TypedSamples.Reference]] = [:]
    var typeEntities: [String: String] = [:]

    init(routes: [RouteSamples]) {
        self.routes = routes
        var keys: [String] = []
        func collect(_ shape: ObjectShape) {
            for (key, field) in shape.orderedFields {
                keys.append(key)
                if let object = field.object { collect(object) }
                if let element = field.element { collect(element) }
            }
        }
        for route in routes {
            for collection in route.collections { collect(collection.shape) }
            if let single = route.single { collect(single) }
            for typed in route.typed?.shapes ?? [] { collect(typed.shape) }
        }
        convention = KeyConvention.detect(keys: keys)
    }

    func draft(named name: String) -> Draft? { drafts.first { $0.name == name } }

    /// The schema file.
    func fileJSON(name: String) throws -> JSONValue {
        var routeFiles: [JSONValue] = []
        for route in routes {
            routeFiles.append(try registerRoute(route))
        }
        guard !drafts.isEmpty else {
            throw SchemaError(.cannotInfer, "no sample held an object: nothing to make entities of (\(routes.map(\.pattern).joined(separator: ", ")))")
        }
        discoverNested()
        bindPathVariables()
        var entities = JSONObject()
        for draft in drafts {
            entities[draft.name] = addReferences(to: try entityJSON(draft), of: draft)
        }
        // Variables renamed for what they name (`:owner` → `:ownerPath`) are renamed in their routes.
        routeFiles = routeFiles.map { route in
            guard case .object(var object) = route, let target = object["target"]?.stringValue,
                  let renamed = draft(named: target)?.renamedVariables, !renamed.isEmpty,
                  let path = object["path"]?.stringValue else { return route }
            object["path"] = .string(Self.renaming(path, renamed))
            return .object(object)
        }
        return .object(["name": .string(name), "version": 1, "keyConvention": .string(convention.rawValue == "snakeCase" ? "snake_case" : "camelCase"),
                        "entities": .object(entities), "routes": .array(routeFiles)])
    }

    /// `pattern` with its variables renamed (`/repos/:owner/:repo`, owner → ownerPath: `/repos/:ownerPath/:repo`).
    static func renaming(_ pattern: String, _ names: [String: String]) -> String {
        pattern.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
            if segment.hasPrefix(":"), let new = names[String(segment.dropFirst())] { return ":" + new }
            if segment.hasPrefix("{"), segment.hasSuffix("}"), let new = names[String(segment.dropFirst().dropLast())] { return "{" + new + "}" }
            return String(segment)
        }.joined(separator: "/")
    }

    // MARK: Routes

    /// The variables of a path pattern (`:owner`, `{owner}`).
    static func variables(of pattern: String) -> [String] {
        pattern.split(separator: "/").compactMap { segment in
            if segment.hasPrefix(":") { return String(segment.dropFirst()) }
            if segment.hasPrefix("{"), segment.hasSuffix("}") { return String(segment.dropFirst().dropLast()) }
            return nil
        }
    }

    /// Registers the entities of one route's samples; returns the route's file JSON.
    private func registerRoute(_ route: RouteSamples) throws -> JSONValue {
        let source = route.sources.first ?? route.pattern
        let variables = Self.variables(of: route.pattern)
        var file: JSONObject = ["path": .string(route.pattern)]
        if let typed = route.typed, !typed.shapes.isEmpty { return try registerTyped(route, typed, file: file) }
        let collections = route.collections.filter { $0.shape.count > 0 }
        if collections.count > 1 {
            // Several collections keyed by name: a MANY route, one entity each.
            for collection in collections {
                let name = Inflection.entityName(forKey: collection.key)
                let draft = try register(name, shape: collection.shape, route: route, variables: [], source: source)
                if Inflection.tableName(for: name) != collection.key { draft.table = collection.key }
            }
            file["target"] = "MANY"
            return .object(file)
        }
        let name = Inflection.entityName(forPath: route.pattern)
        if let collection = collections.first {
            if let single = route.single { collection.shape.merge(single) }
            _ = try register(name, shape: collection.shape, route: route, variables: variables, source: source)
            file["target"] = .string(name)
            if !collection.key.isEmpty {
                file["envelope"] = .string(collection.key)
                // How the envelope says the collection goes on (`has_more`, `links.next`, `total`…).
                if let members = route.envelopeMembers, var rule = PaginationRule.inferred(fromEnvelope: members) {
                    // The last object's key is sent only for a single-attribute key.
                    if case .afterLastKey = rule, draft(named: name)?.keyJSON?.count != 1 { rule = .linkHeader }
                    if rule != .linkHeader { file["pagination"] = rule.fileJSON }
                }
            }
        } else if let single = route.single, single.count > 0 {
            _ = try register(name, shape: single, route: route, variables: variables, source: source)
            file["target"] = .string(name)
        } else {
            // Scalars only: handed back as they are.
            file["target"] = "DATA"
        }
        return .object(file)
    }

    /// Makes (or extends) the entity a route's objects are, deciding its key on them.
    func register(_ name: String, shape: ObjectShape, route: RouteSamples, variables: [String],
                          source: String) throws -> Draft {
        let key = try routeKey(shape, entity: name, route: route, variables: variables, source: source)
        let made: Draft
        if let existing = draft(named: name) {
            existing.shape.merge(shape)
            if existing.keyJSON == nil { existing.keyJSON = key }
            for variable in variables where !existing.scope.contains(variable) { existing.scope.append(variable) }
            made = existing
        } else {
            made = Draft(name: name, shape: shape, source: source)
            made.keyJSON = key
            made.scope = variables
            drafts.append(made)
        }
        for variable in variables {
            if let values = route.pathValues[variable] { made.pathValues[variable, default: []].formUnion(values) }
        }
        return made
    }

    /// Whether `field` can hold a key: present in every one of `count` objects, never null, all
    /// integers or all strings.
    private static func isKeyLike(_ field: FieldShape, count: Int) -> Bool {
        field.present == count && field.nulls == 0 && count > 0
            && (field.integers == field.present || field.strings == field.present)
    }

    /// The key of a route's objects: `id`; else a unique key named like an identity; else the
    /// route's variables and a unique key.
    private func routeKey(_ shape: ObjectShape, entity: String, route: RouteSamples, variables: [String],
                          source: String) throws -> [String] {
        let fields = shape.orderedFields
        if let id = fields.first(where: { $0.key == "id" }), Self.isKeyLike(id.field, count: shape.count) {
            // Ids that repeat beside a type key of several values (`type`: person, bot): objects of
            // several types that share ids, kept apart by a key of both, never merged into one row.
            if id.field.repeated, let type = fields.first(where: { candidate in
                FieldShape.couldBeType(candidate.key) && candidate.field.strings == shape.count
                    && (candidate.field.values?.count ?? 0) > 1
            }) {
                let values = (type.field.values ?? []).sorted().prefix(5).joined(separator: ", ")
                note(entity, source, id.field.firstPointer,
                     "ids repeat across the values of \(type.key) (\(values)): the key is (\(type.key), id), so objects of two "
                     + "types that share an id stay two rows; a route's \"discriminator\" can route each type to an entity of its own")
                return [type.key, "id"]
            }
            return ["id"]
        }
        let candidates = fields.filter { Self.isKeyLike($0.field, count: shape.count) && $0.field.isUnique }
        let objectKeys = Set(fields.map(\.key))
        // Path variables the objects do not hold (`:owner`, `:repo`): a key the samples show
        // unique is only known unique inside them (refs/heads/main is in every repository).
        let scope = variables.filter { !objectKeys.contains($0) }
        if let unique = candidates.first(where: { FieldShape.couldBeKey($0.key) }) ?? (scope.isEmpty ? nil : candidates.first) {
            if scope.isEmpty {
                note(entity, source, unique.field.firstPointer, "no id: \(unique.key) is the key (unique in \(shape.count) objects)")
                return [unique.key]
            }
            note(entity, source, unique.field.firstPointer,
                 "no id: the key is the route's \(scope.map { ":" + $0 }.joined(separator: ", ")) with \(unique.key) (unique in \(shape.count) objects)")
            return scope + [unique.key]
        }
        if shape.count == 1, route.collections.isEmpty {
            // One object answered by its own path: keyed by the path's variables when it has them.
            if !variables.isEmpty { return variables }
        }
        throw SchemaError(.cannotInfer, "\(route.pattern): the objects of \(entity) have no id and no key that is present, "
                          + "never null and unique in all \(shape.count) of them; name one in the schema by hand "
                          + "(\"primaryKey\": \"…\")")
    }

    // MARK: Nested entities

    /// The key of nested objects, by name only (the same child repeats under many parents).
    static func nestedKey(_ shape: ObjectShape) -> String? {
        for name in ["id", "uuid", "guid", "slug", "login", "key"] {
            if let field = shape.orderedFields.first(where: { $0.key == name })?.field, isKeyLike(field, count: shape.count) {
                return name
            }
        }
        return nil
    }

    /// Makes an entity of every nested object with a key (`user`, each of `labels`), merging
    /// those of one name, until no new one appears.
    private func discoverNested() {
        var index = 0
        while index < drafts.count {
            let current = drafts[index]
            index += 1
            for (key, field) in current.shape.orderedFields {
                let nested: ObjectShape?
                if field.isOnlyObjects {
                    nested = field.object
                } else if field.isOnlyArrays, field.scalarElements == 0 {
                    nested = field.element
                } else {
                    nested = nil
                }
                guard let shape = nested, let nestedKey = Self.nestedKey(shape) else { continue }
                let name = Inflection.entityName(forKey: key)
                if let existing = draft(named: name) {
                    if existing.shape !== shape { existing.shape.merge(shape) }
                    if existing.keyJSON == nil { existing.keyJSON = [nestedKey] }
                } else {
                    let made = Draft(name: name, shape: shape, source: current.source)
                    made.keyJSON = [nestedKey]
                    made.isNested = true
                    drafts.append(made)
                }
            }
        }
    }

    // MARK: Path variables

    /// Decides what each route variable naming an object of its entity's (`:owner` beside an
    /// `owner` object) names, from the values the samples' paths gave it: a related entity keyed
    /// by the member the values are (`login`: the foreign key then holds the login, which the
    /// route scopes by), its key as it is (`id`), a dotted attribute of an object without a key;
    /// else the variable is renamed (`:ownerPath`) and fills an attribute of its own, so it
    /// never scopes by a foreign key its value may not even be a valid value of.
    private func bindPathVariables() {
        for draft in drafts where !draft.scope.isEmpty {
            for variable in draft.scope {
                guard let field = draft.shape.orderedFields.first(where: { $0.key == variable })?.field, field.isOnlyObjects,
                      let object = field.object else { continue }
                let values = draft.pathValues[variable] ?? []
                let shown = values.sorted().prefix(3).map { "'\($0)'" }.joined(separator: ", ")
                // The members of the objects whose values include every value the path had.
                let matching = values.isEmpty ? [] : object.orderedFields.filter { member in
                    Self.isKeyLike(member.field, count: object.count) && values.allSatisfy { member.field.hasValue($0) == true }
                }
                let chosen = matching.first { FieldShape.couldBeKey($0.key) } ?? matching.first
                guard let nested = nestedDraft(variable, field) else {
                    // An object without a key: a dotted attribute may be what the variable names (decided with the attributes).
                    continue
                }
                let foreignKey = attributeName(variable) + "ID"
                if let key = nested.keyJSON?.first, matching.contains(where: { $0.key == key }) {
                    continue   // the path names it by its key: the foreign key scopes it
                }
                if let chosen, nested.isNested, !nested.keyedByPath,
                   let whole = nested.shape.orderedFields.first(where: { $0.key == chosen.key })?.field,
                   Self.isKeyLike(whole, count: nested.shape.count) {
                    nested.keyJSON = [chosen.key]
                    nested.keyedByPath = true
                    let foreign = attributeName(variable) + Self.upperFirst(attributeName(chosen.key))
                    note(draft.name, draft.source, chosen.field.firstPointer,
                         ":\(variable) is the \(variable)'s \(chosen.key) (\(shown)): \(nested.name) is keyed by \(chosen.key), "
                         + "and the route scopes \(draft.name) by its foreign key \(foreign)")
                    continue
                }
                let renamed = uniqueVariableName(attributeName(variable) + "Path", in: draft)
                draft.renamedVariables[variable] = renamed
                let why = values.isEmpty
                    ? "no sample's path gave its value"
                    : "its value\(values.count == 1 ? "" : "s") \(shown) \(values.count == 1 ? "is" : "are") no key of the \(variable) objects"
                note(draft.name, draft.source, field.firstPointer,
                     ":\(variable) names the \(variable) object, but \(why): it is :\(renamed), an attribute filled from the path, "
                     + "not the foreign key \(foreignKey)")
            }
        }
    }

    /// `name`, or `name2`, `name3`… when the entity's objects have a key that makes an attribute of that name.
    private func uniqueVariableName(_ name: String, in draft: Draft) -> String {
        let taken = Set(draft.shape.orderedFields.map { attributeName($0.key).lowercased() })
        guard taken.contains(name.lowercased()) else { return name }
        var index = 2
        while taken.contains((name + String(index)).lowercased()) { index += 1 }
        return name + String(index)
    }

    static func upperFirst(_ name: String) -> String { name.prefix(1).uppercased() + name.dropFirst() }

    /// The entity a field's nested objects became, if any.
    private func nestedDraft(_ key: String, _ field: FieldShape) -> Draft? {
        // A relationship holds a single-column key: an entity keyed by a composite key (a route's
        // refs) is no destination, and the nested objects stay attributes of their parent.
        guard let found = draft(named: Inflection.entityName(forKey: key)), let keyJSON = found.keyJSON, keyJSON.count == 1 else {
            return nil
        }
        if field.isOnlyObjects, let shape = field.object, Self.nestedKey(shape) != nil { return found }
        if field.isOnlyArrays, field.scalarElements == 0, let shape = field.element, Self.nestedKey(shape) != nil { return found }
        return nil
    }

    // MARK: Entities

    /// The attribute name of a JSON key under the schema's convention, made an identifier.
    func attributeName(_ key: String) -> String { convention.inferredAttributeName(forKey: key) }

    /// An attribute's file JSON: its type, and its JSON key when the convention does not give it.
    private func attribute(_ name: String, type: String, jsonKey: String, nullable: Bool = true) -> JSONValue {
        var spec: JSONObject = ["type": .string(type)]
        if convention.jsonKey(forAttribute: name) != jsonKey { spec["jsonKey"] = .string(jsonKey) }
        if !nullable { spec["nullable"] = false }
        return spec.count == 1 ? .string(type) : .object(spec)
    }

    private func entityJSON(_ draft: Draft) throws -> JSONValue {
        let shape = draft.shape
        var attributes = JSONObject()
        var relationships = JSONObject()
        let keyJSON = draft.keyJSON ?? ["id"]
        var keyNames: [String] = []
        /// Foreign keys made for to-one relationships: a key of the same name (`user_id` beside
        /// `user`) is the one they read.
        var foreignKeys: Set<String> = []
        /// `name`, or `name2`, `name3`… when another key took it.
        func unique(_ name: String) -> String {
            guard attributes[name] != nil || relationships[name] != nil else { return name }
            var index = 2
            while attributes[name + String(index)] != nil || relationships[name + String(index)] != nil { index += 1 }
            return name + String(index)
        }
        for (key, field) in shape.orderedFields {
            var name = attributeName(key)
            if let nested = nestedDraft(key, field) {
                let nestedKeyField = nested.shape.orderedFields.first { $0.key == (nested.keyJSON?.first ?? "id") }?.field
                let keyType = nestedKeyField.map { $0.integers == $0.present ? "integer" : "string" } ?? "integer"
                var spec: JSONObject
                if field.isOnlyObjects {
                    // A destination keyed by what paths name it by (`login`): the foreign key says so (`ownerLogin`).
                    let foreignKey = nested.keyedByPath ? name + Self.upperFirst(attributeName(nested.keyJSON?.first ?? "id")) : name + "ID"
                    if attributes[foreignKey] == nil {
                        attributes[foreignKey] = attribute(foreignKey, type: keyType, jsonKey: convention.jsonKey(forAttribute: foreignKey))
                    }
                    foreignKeys.insert(foreignKey)
                    spec = ["toOne": .string(nested.name), "foreignKey": .string(foreignKey)]
                } else {
                    spec = ["toMany": .string(nested.name), "through": .string(Inflection.linkTable(entity: draft.name, relationship: name))]
                    if nested.name == draft.name {
                        spec["throughKeys"] = .array(Inflection.linkKeys(entity: draft.name, relationship: name).map(JSONValue.string))
                    }
                }
                if convention.jsonKey(forAttribute: name) != key { spec["jsonKey"] = .string(key) }
                relationships[unique(name)] = .object(spec)
                continue
            }
            if field.isOnlyObjects, let object = field.object {
                // An object without a key: its members are attributes read at dotted key paths.
                let values = draft.scope.contains(key) ? draft.pathValues[key] ?? [] : []
                for (subKey, subField) in object.orderedFields {
                    let subName = unique(attributeName(key + "_" + subKey))
                    // A route variable naming the object whose values this member holds: the variable is this attribute.
                    if !values.isEmpty, draft.renamedVariables[key] == nil, Self.isKeyLike(subField, count: object.count),
                       values.allSatisfy({ subField.hasValue($0) == true }) {
                        draft.renamedVariables[key] = subName
                        note(draft.name, draft.source, subField.firstPointer,
                             ":\(key) is the \(key)'s \(subKey): the route's variable is :\(subName), which scopes \(draft.name) by it")
                    }
                    let (type, guessed) = scalarType(subField, objects: object.count)
                    if let guessed { note(draft.name + "." + subName, draft.source, subField.firstPointer, guessed) }
                    attributes[subName] = attribute(subName, type: type, jsonKey: key + "." + subKey)
                }
                continue
            }
            // `user_id` beside a nested `user`: the foreign key already reads it.
            if foreignKeys.contains(name) && convention.jsonKey(forAttribute: name) == key { continue }
            name = unique(name)
            let (type, guessed) = scalarType(field, objects: shape.count)
            if let guessed { note(draft.name + "." + name, draft.source, field.firstPointer, guessed) }
            let isKey = keyJSON.contains(key)
            if isKey { keyNames.append(name) }
            // Present and never null in every one of several objects: required. A key is never
            // nullable, which its attribute need not say.
            let required = field.present == shape.count && field.nulls == 0 && shape.count > 1 && type != "json"
            attributes[name] = attribute(name, type: type, jsonKey: key, nullable: isKey || !required)
        }
        // Route variables renamed because they name no key of the object they are named after: attributes filled from the path.
        for variable in draft.scope {
            guard let renamed = draft.renamedVariables[variable], attributes[renamed] == nil, relationships[renamed] == nil else { continue }
            attributes[renamed] = .object(["type": "string", "description": .string("filled from the route's :\(variable)")])
        }
        // Route variables no object holds: attributes filled from the path.
        for variable in draft.scope where !shape.orderedFields.contains(where: { $0.key == variable }) {
            let name = attributeName(variable)
            guard attributes[name] == nil else { continue }
            attributes[name] = .object(["type": "string", "description": .string("filled from the route's :\(variable)")])
            if keyJSON.contains(variable) { keyNames.append(name) }
        }
        var entity = JSONObject()
        if let table = draft.table { entity["table"] = .string(table) }
        // Key parts in the order decided, by attribute name.
        let orderedKey = keyJSON.map { attributeName($0) }.filter { keyNames.contains($0) }
        if orderedKey.count > 1 {
            entity["primaryKey"] = .array(orderedKey.map(JSONValue.string))
        } else if let single = orderedKey.first, single != "id" {
            entity["primaryKey"] = .string(single)
        }
        // A single key read from another JSON key than `id` (`login`): the key's JSON key is named.
        if orderedKey.count == 1, let jsonKey = keyJSON.first, jsonKey != "id" {
            entity["jsonIdKey"] = .string(jsonKey)
        }
        entity["attributes"] = .object(attributes)
        if !relationships.isEmpty { entity["relationships"] = .object(relationships) }
        return .object(entity)
    }

    /// The type of a field's values, and what was guessed about it.
    private func scalarType(_ field: FieldShape, objects: Int) -> (String, String?) {
        if field.objects > 0 || field.arrays > 0 {
            if field.scalarCount > 0 || (field.objects > 0 && field.arrays > 0) {
                return ("json", "objects, arrays and scalars mixed in \(field.present) values: json")
            }
            return ("json", nil)
        }
        let total = field.scalarCount
        if total == 0 {
            return ("string", "always null in \(field.present) sample\(field.present == 1 ? "" : "s"), typed string")
        }
        if field.integers == total { return ("integer", nil) }
        if field.integers + field.doubles == total {
            return ("double", field.integers > 0 ? "integers and decimals: double" : nil)
        }
        if field.bools == total { return ("bool", nil) }
        if field.strings == total {
            return field.dates == total ? ("date", nil) : ("string", nil)
        }
        return ("json", "values of several types (\(kinds(field))): json")
    }

    private func kinds(_ field: FieldShape) -> String {
        var kinds: [String] = []
        if field.integers + field.doubles > 0 { kinds.append("numbers") }
        if field.bools > 0 { kinds.append("booleans") }
        if field.strings > 0 { kinds.append("strings") }
        return kinds.joined(separator: ", ")
    }

    func note(_ subject: String, _ source: String, _ pointer: JSONPointer, _ message: String) {
        notes.append(SchemaInference.Note(subject: subject, place: "\(source) \(pointer)", message: message))
    }
}
