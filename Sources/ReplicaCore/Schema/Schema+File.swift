import Foundation

extension Schema {
    /// Loads and validates a schema file.
    ///
    /// ```swift
    /// let schema = try Schema(contentsOf: URL(fileURLWithPath: "Schemas/blog.json"))
    /// ```
    ///
    /// - Parameter url: The schema file (the format is described by `Schemas/schema.schema.json`).
    /// - Throws: ``SchemaError`` naming the file, the JSON pointer of the offending value and what is wrong.
    public init(contentsOf url: URL) throws {
        let (bytes, name) = try SchemaError.contents(of: url, what: "schema file")
        try self.init(json: bytes, file: name)
    }

    /// Loads and validates a schema from the bytes of a schema file.
    ///
    /// ```swift
    /// let schema = try Schema(json: Data(#"{"name": "t", "entities": {}}"#.utf8))
    /// ```
    ///
    /// - Parameters:
    ///   - json: The UTF-8 JSON text of a schema file.
    ///   - file: The file name used in error messages.
    /// - Throws: ``SchemaError``.
    public init(json: Data, file: String? = nil) throws {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: json)
        } catch {
            throw SchemaError(.invalidJSON, "invalid JSON: \(error)", file: file)
        }
        // Parsing kept the last value of a key given twice; the bytes say where both are.
        if value.firstDuplicateKey != nil,
           let duplicate = try? json.withUnsafeBytes({ try JSONDuplicateKey.first(in: $0) }) {
            throw SchemaError(.duplicateKey, "key '\(duplicate.key)' is given twice in one object: "
                              + "at \(duplicate.first) and again at \(duplicate.again)",
                              file: file, pointer: duplicate.pointer, byteOffset: duplicate.again.byteOffset)
        }
        try self.init(jsonValue: value, file: file)
    }

    /// Loads and validates a schema from a parsed schema file.
    ///
    /// ```swift
    /// let schema = try Schema(jsonValue: try JSONValue(parsing: #"{"name": "t", "entities": {}}"#))
    /// ```
    ///
    /// - Parameters:
    ///   - jsonValue: The schema file, parsed. An object whose parsed text gave a key twice
    ///     (``JSONObject/duplicateKeys``) is refused.
    ///   - file: The file name used in error messages.
    /// - Throws: ``SchemaError``.
    public init(jsonValue: JSONValue, file: String? = nil) throws {
        let reader = SchemaFileReader(file: file)
        self = try reader.schema(from: jsonValue)
        try SchemaValidator(file: file).validate(&self)
    }
}

/// Reads the schema-file format strictly: every key is known, every value has its type.
struct SchemaFileReader {
    let file: String?

    func fail(_ code: SchemaError.Code, _ message: String, at pointer: JSONPointer) -> SchemaError {
        SchemaError(code, message, file: file, pointer: pointer)
    }

    func object(_ value: JSONValue, at pointer: JSONPointer, allowed: Set<String>) throws -> JSONObject {
        guard case .object(let object) = value else {
            throw fail(.invalidValue, "expected an object, found \(value.typeName)", at: pointer)
        }
        for key in object.keys where !allowed.contains(key) {
            let expected = allowed.sorted().joined(separator: ", ")
            throw fail(.unknownKey, "unknown key '\(key)' (expected one of: \(expected))", at: pointer / key)
        }
        return object
    }

    /// The value as `read` takes it, `nil` when absent or `null`; `expected` names what it must be.
    func scalar<T>(_ value: JSONValue?, at pointer: JSONPointer, expected: String, _ read: (JSONValue) -> T?) throws -> T? {
        guard let value, !value.isNull else { return nil }
        guard let scalar = read(value) else {
            throw fail(.invalidValue, "expected \(expected), found \(value.typeName)", at: pointer)
        }
        return scalar
    }

    func string(_ value: JSONValue?, at pointer: JSONPointer) throws -> String? {
        try scalar(value, at: pointer, expected: "a string", \.stringValue)
    }

    func requiredString(_ object: JSONObject, _ key: String, at pointer: JSONPointer) throws -> String {
        guard let value = try string(object[key], at: pointer / key) else {
            throw fail(.missingKey, "missing required key '\(key)'", at: pointer)
        }
        return value
    }

    func bool(_ value: JSONValue?, at pointer: JSONPointer) throws -> Bool? {
        try scalar(value, at: pointer, expected: "true or false", \.boolValue)
    }

    func schema(from value: JSONValue) throws -> Schema {
        let root = JSONPointer.root
        if let (key, pointer) = value.firstDuplicateKey {
            throw fail(.duplicateKey, "key '\(key)' is given twice in one object", at: pointer)
        }
        let object = try self.object(value, at: root, allowed: ["$schema", "name", "version", "description",
                                                                "keyConvention", "envelope", "entities", "routes", "headers",
                                                                "unmappedKeys", "ignoreKeys", "pagination"])
        let name = try requiredString(object, "name", at: root)
        var version = 1
        if let raw = object["version"] {
            guard let number = raw.int64Value, let int = Int(exactly: number) else {
                throw fail(.invalidValue, "version must be an integer, found \(raw.typeName)", at: root / "version")
            }
            version = int
        }
        var convention = KeyConvention.snakeCase
        if let raw = try string(object["keyConvention"], at: root / "keyConvention") {
            guard let parsed = KeyConvention(schemaName: raw) else {
                throw fail(.invalidValue, "unknown key convention '\(raw)' (expected snake_case, camelCase or asIs)",
                           at: root / "keyConvention")
            }
            convention = parsed
        }
        let envelope = try string(object["envelope"], at: root / "envelope")
        guard let entitiesValue = object["entities"] else {
            throw fail(.missingKey, "missing required key 'entities'", at: root)
        }
        guard case .object(let entitiesObject) = entitiesValue else {
            throw fail(.invalidValue, "expected an object of entities keyed by name, found \(entitiesValue.typeName)",
                       at: root / "entities")
        }
        let entities = try entitiesObject.map { try entity(named: $0.key, from: $0.value, at: root / "entities" / $0.key) }
        var routes: [Route] = []
        if let routesValue = object["routes"], !routesValue.isNull {
            guard case .array(let array) = routesValue else {
                throw fail(.invalidValue, "expected an array of routes, found \(routesValue.typeName)", at: root / "routes")
            }
            routes = try array.enumerated().map { try route(from: $0.element, at: root / "routes" / $0.offset) }
        }
        return Schema(unchecked: name, version: version, keyConvention: convention, envelope: envelope,
                      entities: entities, routes: routes, headers: try headers(object["headers"], at: root / "headers"),
                      unmappedKeys: try unmappedKeyPolicy(object["unmappedKeys"], at: root / "unmappedKeys") ?? .warn,
                      ignoreKeys: try keyGlobs(object["ignoreKeys"], at: root / "ignoreKeys"),
                      pagination: try object["pagination"].map { try pagination(from: $0, at: root / "pagination") })
    }

    func entity(named name: String, from value: JSONValue, at pointer: JSONPointer) throws -> Entity {
        let object = try self.object(value, at: pointer, allowed: [
            "description", "table", "primaryKey", "jsonIdKey", "namespace", "collectionNamespace",
            "attributes", "relationships", "indexes", "actions", "unmappedKeys", "ignoreKeys", "unmappedColumn",
            "versionAttribute",
        ])
        guard let attributesValue = object["attributes"] else {
            throw fail(.missingKey, "missing required key 'attributes'", at: pointer)
        }
        guard case .object(let attributesObject) = attributesValue else {
            throw fail(.invalidValue, "expected an object of attributes keyed by name, found \(attributesValue.typeName)",
                       at: pointer / "attributes")
        }
        let attributes = try attributesObject.map {
            try attribute(named: $0.key, from: $0.value, at: pointer / "attributes" / $0.key)
        }
        var relationships: [Relationship] = []
        if let value = object["relationships"] {
            guard case .object(let relObject) = value else {
                throw fail(.invalidValue, "expected an object of relationships keyed by name, found \(value.typeName)",
                           at: pointer / "relationships")
            }
            relationships = try relObject.map {
                try relationship(named: $0.key, from: $0.value, at: pointer / "relationships" / $0.key)
            }
        }
        var indexes: [Index] = []
        if let value = object["indexes"] {
            guard case .array(let array) = value else {
                throw fail(.invalidValue, "expected an array of indexes, found \(value.typeName)", at: pointer / "indexes")
            }
            indexes = try array.enumerated().map { try index(from: $0.element, at: pointer / "indexes" / $0.offset) }
        }
        var actions: Set<EntityAction>?
        if let value = object["actions"] {
            guard case .array(let items) = value else {
                throw fail(.invalidValue, "expected an array of actions, found \(value.typeName)", at: pointer / "actions")
            }
            var set = Set<EntityAction>()
            for (offset, item) in items.enumerated() {
                guard case .string(let raw) = item, let action = EntityAction(rawValue: raw) else {
                    let known = EntityAction.allCases.map(\.rawValue).joined(separator: ", ")
                    throw fail(.invalidValue, "unknown action \(item.serialized()) (expected one of: \(known))",
                               at: pointer / "actions" / offset)
                }
                set.insert(action)
            }
            actions = set
        }
        let keyNames = try primaryKeyNames(object["primaryKey"], at: pointer / "primaryKey")
        let jsonIDKey = try string(object["jsonIdKey"], at: pointer / "jsonIdKey")
        if keyNames.count > 1, jsonIDKey != nil {
            throw fail(.invalidPrimaryKey, "jsonIdKey does not apply to the composite primary key "
                       + "[\(keyNames.map { "'\($0)'" }.joined(separator: ", "))] of entity '\(name)': each part maps as its "
                       + "attribute does (its jsonKey, the key convention, or the route's scope)", at: pointer / "jsonIdKey")
        }
        var members: [EntityMember] = attributes.map { .attribute($0) }
        members += relationships.map { .relationship($0) }
        members += indexes.map { .index($0) }
        var entity = Entity(
            name,
            tableName: try string(object["table"], at: pointer / "table"),
            keyNames: keyNames,
            jsonIDKey: jsonIDKey,
            namespace: try string(object["namespace"], at: pointer / "namespace"),
            collectionNamespace: try string(object["collectionNamespace"], at: pointer / "collectionNamespace"),
            unmappedKeys: try unmappedKeyPolicy(object["unmappedKeys"], at: pointer / "unmappedKeys"),
            ignoreKeys: try keyGlobs(object["ignoreKeys"], at: pointer / "ignoreKeys"),
            unmappedColumn: try string(object["unmappedColumn"], at: pointer / "unmappedColumn"),
            members: members)
        entity.actions = actions
        entity.versionAttribute = try string(object["versionAttribute"], at: pointer / "versionAttribute")
        return entity
    }

    /// `"primaryKey"`: an attribute name, or an array of two or more distinct names (a composite key).
    func primaryKeyNames(_ value: JSONValue?, at pointer: JSONPointer) throws -> [String] {
        guard let value, !value.isNull else { return ["id"] }
        switch value {
        case .string(let name):
            return [name]
        case .array(let items):
            var names: [String] = []
            for (offset, item) in items.enumerated() {
                guard case .string(let name) = item else {
                    throw fail(.invalidValue, "expected an attribute name, found \(item.typeName)", at: pointer / offset)
                }
                if names.contains(name) {
                    throw fail(.invalidPrimaryKey, "primary key names attribute '\(name)' twice", at: pointer / offset)
                }
                names.append(name)
            }
            guard names.count >= 2 else {
                throw fail(.invalidPrimaryKey, "a composite primary key names two or more attributes, found \(names.count) "
                           + "(a single key is a string: \"primaryKey\": \"id\")", at: pointer)
            }
            return names
        default:
            throw fail(.invalidValue, "expected an attribute name or an array of attribute names, found \(value.typeName)",
                       at: pointer)
        }
    }

    func attributeType(_ value: JSONValue, at pointer: JSONPointer) throws -> AttributeType {
        guard case .string(let raw) = value else {
            throw fail(.invalidValue, "expected a type name, found \(value.typeName)", at: pointer)
        }
        guard let type = AttributeType(rawValue: raw) else {
            let known = AttributeType.allCases.map(\.rawValue).joined(separator: ", ")
            throw fail(.unknownType, "unknown type '\(raw)' (expected one of: \(known))", at: pointer)
        }
        return type
    }

    func attribute(named name: String, from value: JSONValue, at pointer: JSONPointer) throws -> Attribute {
        if case .string = value {
            return Attribute(name, try attributeType(value, at: pointer))
        }
        let object = try self.object(value, at: pointer, allowed: ["description", "type", "nullable", "default",
                                                                    "jsonKey", "transform"])
        guard let typeValue = object["type"] else { throw fail(.missingKey, "missing required key 'type'", at: pointer) }
        let type = try attributeType(typeValue, at: pointer / "type")
        var defaultValue: AttributeValue?
        if let raw = object["default"] {
            defaultValue = try AttributeValue(defaultJSON: raw, type: type, at: pointer / "default", file: file)
        }
        return Attribute(
            name, type,
            nullable: try bool(object["nullable"], at: pointer / "nullable"),
            default: defaultValue,
            jsonKey: try string(object["jsonKey"], at: pointer / "jsonKey"),
            transform: try string(object["transform"], at: pointer / "transform")
        )
    }

    func relationship(named name: String, from value: JSONValue, at pointer: JSONPointer) throws -> Relationship {
        let object = try self.object(value, at: pointer, allowed: ["description", "toOne", "toMany", "foreignKey",
                                                                    "inverse", "through", "throughKeys", "jsonKey"])
        let jsonKey = try string(object["jsonKey"], at: pointer / "jsonKey")
        switch (object["toOne"], object["toMany"]) {
        case (.some(let destination), nil):
            guard let destinationName = try string(destination, at: pointer / "toOne") else {
                throw fail(.invalidValue, "expected an entity name", at: pointer / "toOne")
            }
            if object["inverse"] != nil {
                throw fail(.invalidRelationship, "a to-one relationship has a foreignKey, not an inverse", at: pointer / "inverse")
            }
            for key in ["through", "throughKeys"] where object[key] != nil {
                throw fail(.invalidRelationship, "a to-one relationship has a foreignKey, not a join table ('\(key)'): "
                           + "many-to-many links are a to-many with 'through'", at: pointer / key)
            }
            let foreignKey = try requiredString(object, "foreignKey", at: pointer)
            return .toOne(name, destinationName, foreignKey: foreignKey, jsonKey: jsonKey)
        case (nil, .some(let destination)):
            guard let destinationName = try string(destination, at: pointer / "toMany") else {
                throw fail(.invalidValue, "expected an entity name", at: pointer / "toMany")
            }
            if object["foreignKey"] != nil {
                throw fail(.invalidRelationship, "a to-many relationship has an inverse, not a foreignKey",
                           at: pointer / "foreignKey")
            }
            switch (object["inverse"], object["through"]) {
            case (.some, .some):
                throw fail(.invalidRelationship, "a to-many relationship has either an inverse (each child has one parent) "
                           + "or a join table 'through' (children shared by many parents), not both", at: pointer / "through")
            case (nil, .some(let table)):
                guard let through = try string(table, at: pointer / "through") else {
                    throw fail(.invalidValue, "expected a table name", at: pointer / "through")
                }
                var keys: [String]?
                if let keysValue = object["throughKeys"] {
                    guard case .array(let items) = keysValue, items.count == 2 else {
                        throw fail(.invalidValue, "expected two column names (this entity's key, then \(destinationName)'s), "
                                   + "found \(keysValue.excerpt())", at: pointer / "throughKeys")
                    }
                    keys = try items.enumerated().map { offset, item in
                        guard case .string(let column) = item else {
                            throw fail(.invalidValue, "expected a column name, found \(item.typeName)",
                                       at: pointer / "throughKeys" / offset)
                        }
                        return column
                    }
                }
                return .toMany(name, destinationName, through: through, keys: keys, jsonKey: jsonKey)
            case (_, nil):
                if object["throughKeys"] != nil {
                    throw fail(.invalidRelationship, "'throughKeys' names the columns of a join table: give 'through' too",
                               at: pointer / "throughKeys")
                }
                guard object["inverse"] != nil else {
                    throw fail(.missingKey, "a to-many relationship needs 'inverse' (the to-one of \(destinationName) pointing "
                               + "back, when each child has one parent) or 'through' (a join table, when children are "
                               + "shared by many parents)", at: pointer)
                }
                let inverse = try requiredString(object, "inverse", at: pointer)
                return .toMany(name, destinationName, inverse: inverse, jsonKey: jsonKey)
            }
        default:
            throw fail(.invalidRelationship, "a relationship needs exactly one of 'toOne' or 'toMany'", at: pointer)
        }
    }

    func index(from value: JSONValue, at pointer: JSONPointer) throws -> Index {
        let object = try self.object(value, at: pointer, allowed: ["name", "attributes", "unique"])
        guard let attributesValue = object["attributes"] else {
            throw fail(.missingKey, "missing required key 'attributes'", at: pointer)
        }
        guard case .array(let array) = attributesValue else {
            throw fail(.invalidValue, "expected an array of attribute names, found \(attributesValue.typeName)",
                       at: pointer / "attributes")
        }
        let names = try array.enumerated().map { item -> String in
            guard case .string(let name) = item.element else {
                throw fail(.invalidValue, "expected an attribute name, found \(item.element.typeName)",
                           at: pointer / "attributes" / item.offset)
            }
            return name
        }
        return Index(names, unique: try bool(object["unique"], at: pointer / "unique") ?? false,
                     name: try string(object["name"], at: pointer / "name"))
    }

    func route(from value: JSONValue, at pointer: JSONPointer) throws -> Route {
        let object = try self.object(value, at: pointer, allowed: ["description", "method", "path", "target", "stale", "envelope",
                                                                    "timeout", "headers", "singleton", "incremental", "push",
                                                                    "pagination", "discriminator"])
        let path = try requiredString(object, "path", at: pointer)
        var method = HTTPMethod.get
        if let raw = try string(object["method"], at: pointer / "method") {
            guard let parsed = HTTPMethod(rawValue: raw.uppercased()) else {
                throw fail(.invalidRoute, "unknown HTTP method '\(raw)'", at: pointer / "method")
            }
            method = parsed
        }
        let targetName = try requiredString(object, "target", at: pointer)
        let target: RouteTarget
        switch targetName {
        case "DATA": target = .data
        case "MANY": target = .many
        default: target = .entity(targetName)
        }
        var stale = StalePolicy.keep
        if let raw = try string(object["stale"], at: pointer / "stale") {
            guard let parsed = StalePolicy(rawValue: raw) else {
                throw fail(.invalidValue, "unknown stale policy '\(raw)' (expected delete or keep)", at: pointer / "stale")
            }
            stale = parsed
        }
        var timeout: Duration?
        if let value = object["timeout"] {
            guard let seconds = value.doubleValue, seconds > 0, seconds <= 86_400 else {
                throw fail(.invalidValue, "expected a timeout in seconds (more than 0, at most 86400), found \(value.serialized())",
                           at: pointer / "timeout")
            }
            timeout = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        let headers = try self.headers(object["headers"], at: pointer / "headers")
        return Route(method, path, target: target, stale: stale,
                     envelope: try string(object["envelope"], at: pointer / "envelope"), timeout: timeout, headers: headers,
                     singleton: try bool(object["singleton"], at: pointer / "singleton") ?? false,
                     incremental: try object["incremental"].map { try incremental(from: $0, at: pointer / "incremental") },
                     push: try object["push"].map { try push(from: $0, at: pointer / "push") },
                     pagination: try object["pagination"].map { try pagination(from: $0, at: pointer / "pagination") },
                     discriminator: try object["discriminator"].map { try discriminator(from: $0, at: pointer / "discriminator") })
    }

    /// A route's `"discriminator"` object: `{"format": "jsonapi", "entities": {"articles": "Article"}}`
    /// or `{"key": "kind", "entities": {…}, "included": "/related"}`.
    func discriminator(from value: JSONValue, at pointer: JSONPointer) throws -> Discriminator {
        let object = try self.object(value, at: pointer, allowed: ["format", "key", "entities", "included"])
        var layout = Discriminator.Layout.plain
        if let raw = try string(object["format"], at: pointer / "format") {
            guard let parsed = Discriminator.Layout(rawValue: raw) else {
                throw fail(.invalidValue, "unknown discriminator format '\(raw)' (expected plain or jsonapi)", at: pointer / "format")
            }
            layout = parsed
        }
        let key = try string(object["key"], at: pointer / "key") ?? "type"
        guard !key.isEmpty else { throw fail(.invalidValue, "the discriminator key is empty", at: pointer / "key") }
        guard let rawEntities = object["entities"] else {
            throw fail(.missingKey, "missing key 'entities' (the entity of each type: {\"articles\": \"Article\"})", at: pointer)
        }
        guard case .object(let members) = rawEntities, !members.isEmpty else {
            throw fail(.invalidValue, "expected an object naming the entity of each type ({\"articles\": \"Article\"}), "
                       + "found \(rawEntities.serialized())", at: pointer / "entities")
        }
        var entities: [String: String] = [:]
        for (type, member) in members {
            guard case .string(let entity) = member, !entity.isEmpty else {
                throw fail(.invalidValue, "expected an entity name, found \(member.serialized())", at: pointer / "entities" / type)
            }
            entities[type] = entity
        }
        var included: JSONPointer? = layout == .jsonAPI ? JSONPointer(components: [.key("included")]) : nil
        if let raw = object["included"] {
            if raw.isNull {
                included = nil
            } else {
                guard case .string(let text) = raw, text.hasPrefix("/"), let parsed = JSONPointer(text), !parsed.components.isEmpty else {
                    throw fail(.invalidValue, "expected a JSON pointer to the included objects ('/included') or null, found "
                               + raw.serialized(), at: pointer / "included")
                }
                included = parsed
            }
        }
        return Discriminator(key: key, entities: entities, layout: layout, included: included)
    }

    /// A route's `"incremental"` object.
    func incremental(from value: JSONValue, at pointer: JSONPointer) throws -> IncrementalSync {
        let object = try self.object(value, at: pointer, allowed: ["parameter", "cursor", "items", "deleted", "expiredStatus"])
        let parameter = try string(object["parameter"], at: pointer / "parameter") ?? "since"
        guard !parameter.isEmpty else { throw fail(.invalidValue, "the cursor's query parameter is empty", at: pointer / "parameter") }
        let cursorText = try requiredString(object, "cursor", at: pointer)
        guard let cursor = ResponseValue(cursorText) else {
            throw fail(.invalidValue, "expected the cursor as 'header:NAME' or a JSON pointer ('/cursor'), found '\(cursorText)'",
                       at: pointer / "cursor")
        }
        func jsonPointer(_ key: String) throws -> JSONPointer? {
            guard let text = try string(object[key], at: pointer / key) else { return nil }
            guard text.hasPrefix("/"), let parsed = JSONPointer(text) else {
                throw fail(.invalidValue, "expected a JSON pointer into the response ('/\(key)'), found '\(text)'", at: pointer / key)
            }
            return parsed
        }
        var statuses = [410]
        if let raw = object["expiredStatus"] {
            let items: [JSONValue]
            if case .array(let array) = raw { items = array } else { items = [raw] }
            statuses = try items.enumerated().map { offset, item in
                guard let number = item.doubleValue, number == number.rounded(), number >= 400, number <= 599 else {
                    let at = raw.arrayValue == nil ? pointer / "expiredStatus" : pointer / "expiredStatus" / offset
                    throw fail(.invalidValue, "expected an HTTP error status (400-599), found \(item.serialized())", at: at)
                }
                return Int(number)
            }
            guard !statuses.isEmpty else {
                throw fail(.invalidValue, "expected at least one status for an expired cursor", at: pointer / "expiredStatus")
            }
        }
        return IncrementalSync(parameter: parameter, cursor: cursor, items: try jsonPointer("items"),
                               deleted: try jsonPointer("deleted"), expiredStatuses: statuses)
    }

    /// A route's `"push"` object.
    func push(from value: JSONValue, at pointer: JSONPointer) throws -> PushSource {
        let object = try self.object(value, at: pointer, allowed: ["events"])
        let events = try requiredString(object, "events", at: pointer)
        guard events.hasPrefix("/") || events.hasPrefix("http://") || events.hasPrefix("https://") else {
            throw fail(.invalidValue, "expected the event stream's path ('/events') or URL, found '\(events)'", at: pointer / "events")
        }
        return PushSource(events: events)
    }

    /// An `"unmappedKeys"` policy (of the schema or an entity): `warn`, `ignore` or `keep`.
    func unmappedKeyPolicy(_ value: JSONValue?, at pointer: JSONPointer) throws -> UnmappedKeyPolicy? {
        guard let raw = try string(value, at: pointer) else { return nil }
        guard let policy = UnmappedKeyPolicy(rawValue: raw) else {
            let known = UnmappedKeyPolicy.allCases.map(\.rawValue).joined(separator: ", ")
            throw fail(.invalidValue, "unknown unmappedKeys policy '\(raw)' (expected one of: \(known))", at: pointer)
        }
        return policy
    }

    /// An `"ignoreKeys"` array (of the schema or an entity): key globs, each a non-empty string.
    func keyGlobs(_ value: JSONValue?, at pointer: JSONPointer) throws -> [String] {
        guard let value, !value.isNull else { return [] }
        guard case .array(let items) = value else {
            throw fail(.invalidValue, "expected an array of key patterns (\"*_url\"), found \(value.typeName)", at: pointer)
        }
        return try items.enumerated().map { offset, item in
            guard case .string(let pattern) = item else {
                throw fail(.invalidValue, "expected a key pattern as a string, found \(item.typeName)", at: pointer / offset)
            }
            return pattern
        }
    }

    /// A `"headers"` object (of the schema or a route): name → value, each a string.
    func headers(_ value: JSONValue?, at pointer: JSONPointer) throws -> [String: String] {
        guard let value else { return [:] }
        guard case .object(let members) = value else {
            throw fail(.invalidValue, "expected an object of header values keyed by name, found \(value.typeName)", at: pointer)
        }
        var headers: [String: String] = [:]
        for (name, member) in members {
            guard case .string(let text) = member else {
                throw fail(.invalidValue, "expected a header value as a string, found \(member.typeName)", at: pointer / name)
            }
            headers[name] = text
        }
        return headers
    }
}

extension SchemaError {
    /// The bytes at `url` and the name errors give the file (its path as given, or the URL);
    /// `.unreadableFile` naming the file when it cannot be read.
    ///
    /// ```swift
    /// let (bytes, name) = try SchemaError.contents(of: url, what: "schema file")
    /// ```
    package static func contents(of url: URL, what: String) throws -> (bytes: Data, name: String) {
        let name = url.isFileURL ? url.relativePath : url.absoluteString
        do {
            return (try Data(contentsOf: url), name)
        } catch {
            throw SchemaError(.unreadableFile, "cannot read \(what): \(error.localizedDescription)", file: name)
        }
    }
}
