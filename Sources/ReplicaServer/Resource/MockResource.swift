import Foundation

/// A REST resource served by the mock server: a name (its path), typed properties, allowed actions,
/// a primary key and optional parents.
///
/// ```swift
/// let people = MockResource("people", properties: [
///     MockProperty("name", .string), MockProperty("numberOfKids", .integer),
/// ])
/// let cars = MockResource("cars", properties: [MockProperty("color", .string)],
///                         parents: [MockParent("people")])
/// ```
public struct MockResource: Sendable, Hashable {
    /// The resource name: the first path segment of its routes and the SQLite table name.
    public var name: String
    /// The typed properties, primary and parent keys included (added when missing). A dotted name
    /// (`address.city`) is a key path: the value sits in a nested object on the wire (`{"address": {"city": …}}`).
    public private(set) var properties: [MockProperty]
    /// The CRUD actions this resource answers; others get 405.
    public var actions: MockActions
    /// The primary key property and its kind.
    public let primaryKey: MockPrimaryKey
    /// The parents whose routes nest this resource (`/people/:id/cars`).
    public let parents: [MockParent]
    /// The to-one relationships whose nested objects are stored in their own resources and served back
    /// (``MockToOne``): each has a `.json` property under its key, holding the child as last written.
    ///
    /// ```swift
    /// MockResource(entity: issue, in: schema).toOne   // [MockToOne("user", resource: "users", foreignKey: "user_id")]
    /// ```
    public let toOne: [MockToOne]
    /// Where each property sits in JSON objects (dotted names nest).
    let keyPaths: MockKeyPaths
    /// A `json` property that holds the keys of objects no other property takes, served merged back
    /// into the object (a Replica entity with `"unmappedKeys": "keep"`); `nil` drops such keys.
    ///
    /// ```swift
    /// var issues = MockResource("issues", properties: [MockProperty("title", .string), MockProperty("unmapped", .json)])
    /// issues.unmappedProperty = "unmapped"   // {"title": "t", "html_url": "…"} round-trips whole
    /// ```
    public var unmappedProperty: String?
    /// How this resource's collections are paged (``MockPagination``), overriding the server's
    /// ``MockServerOptions/pagination``; an API route's own ``MockRoute/pagination`` overrides it in turn.
    /// nil, the default, takes the server's (`replica serve --pagination people=cursor` sets it).
    ///
    /// ```swift
    /// var people = MockResource("people", properties: [MockProperty("name", .string)])
    /// people.pagination = .cursor   // GET /people?limit=10 → {"ok": true, "items": [...], "response_metadata": …}
    /// ```
    public var pagination: MockPagination?
    /// The property that numbers each object's versions (the entity's ``Entity/versionAttribute``),
    /// or nil. The server owns it: a create sets it to 1, each update adds 1 (whatever the body
    /// says), and the object's `ETag` is its version, quoted, so `If-Match: "3"` matches version 3.
    ///
    /// ```swift
    /// var issues = MockResource("issues", properties: [MockProperty("title", .string), MockProperty("version", .integer)])
    /// issues.versionProperty = "version"   // POST → {"id": 1, "title": "t", "version": 1}, ETag: "1"
    /// ```
    public var versionProperty: String?

    /// Creates a resource.
    ///
    /// ```swift
    /// let tags = MockResource("tags", properties: [MockProperty("label", .string)],
    ///                         actions: .readOnly, primaryKey: .string("slug"))
    /// ```
    /// - Parameters:
    ///   - name: the path and table name.
    ///   - properties: typed properties; the primary key and parent keys are added when missing.
    ///   - actions: the allowed actions, all by default.
    ///   - primaryKey: the key, auto-incrementing `id` by default.
    ///   - parents: parent resources for nested routes.
    ///   - toOne: to-one relationships whose nested objects are stored in their resources (``MockToOne``);
    ///     their foreign keys and a `.json` property under each key are added when missing. One whose key
    ///     names a property of another type is left out.
    public init(
        _ name: String,
        properties: [MockProperty],
        actions: MockActions = .all,
        primaryKey: MockPrimaryKey = .default,
        parents: [MockParent] = [],
        toOne: [MockToOne] = []
    ) {
        self.name = name
        self.actions = actions
        self.primaryKey = primaryKey
        self.parents = parents
        var properties = properties.filter { !primaryKey.contains($0.name) }
        properties.insert(contentsOf: primaryKey.parts, at: 0)
        for parent in parents where !properties.contains(where: { $0.name == parent.key }) {
            properties.append(MockProperty(parent.key, .integer))
        }
        var relations: [MockToOne] = []
        for relation in toOne where !relation.key.isEmpty && relation.key != relation.foreignKey
            && !primaryKey.contains(relation.key) && !relations.contains(where: { $0.key == relation.key }) {
            if let existing = properties.first(where: { $0.name == relation.key }), existing.type != .json { continue }
            if !properties.contains(where: { $0.name == relation.foreignKey }) {
                properties.append(MockProperty(relation.foreignKey, .integer))
            }
            if !properties.contains(where: { $0.name == relation.key }) { properties.append(MockProperty(relation.key, .json)) }
            relations.append(relation)
        }
        self.toOne = relations
        var seen = Set<String>()
        self.properties = properties.filter { seen.insert($0.name).inserted }
        keyPaths = MockKeyPaths(self.properties)
    }

    /// A resource for a Replica schema entity: its table name as the path, its attributes under the JSON
    /// keys the client maps them from (``MockProperty/init(_:in:)``, the core's ``PropertyMap`` rule), its to-one relationships as parents (keyed by the foreign key's JSON key) and as ``toOne``
    /// relationships (a nested object at the relationship's JSON key is stored in its own resource), its many-to-many
    /// relationships as JSON properties (the nested array, objects or keys, stored and served back as
    /// given, so a sync of the resource links what it lists). An entity with a composite primary key
    /// gets a ``MockPrimaryKey/composite(_:)`` key of its parts' JSON keys: `/refs/:owner/:repo/:ref`
    /// addresses one object, `/refs/:owner/:repo` lists those of a repository. An attribute with a
    /// dotted `jsonKey` (`"address.city"`) is a property of that name, read from and written to nested
    /// objects (`{"address": {"city": …}}`) as the entity's property map reads it.
    ///
    /// ```swift
    /// let schema = try Schema(contentsOf: URL(fileURLWithPath: "Schemas/people.json"))
    /// let cars = MockResource(entity: try schema.requireEntity("Car"), in: schema)
    /// // cars: /cars, parent people with key "person_id"
    /// ```
    /// - Parameters:
    ///   - entity: the entity.
    ///   - schema: the schema holding it (for key conventions and relationship destinations).
    ///   - actions: the allowed actions; by default the entity's ``Entity/actions`` (the schema file's
    ///     `"actions"`), all when it names none.
    public init(entity: Entity, in schema: Schema, actions: MockActions? = nil) {
        // Named as the client maps them (``PropertyMap``): one rule for both ends.
        func property(_ attribute: Attribute) -> MockProperty { MockProperty(attribute, in: schema) }
        let primaryKey: MockPrimaryKey
        if entity.hasCompositeKey {
            // Each part an integer or a string, as ``MockPrimaryKey/composite(_:)`` reads it.
            primaryKey = .composite(entity.primaryKeyNames.compactMap { entity.attribute(named: $0).map(property) })
        } else {
            let keyAttribute = entity.primaryKeyAttribute
            let keyName = entity.attribute(named: entity.primaryKey).map { property($0).name } ?? entity.jsonIDKey
            primaryKey = keyAttribute.type == .integer ? .autoIncrement(keyName) : .string(keyName)
        }
        var parents: [MockParent] = []
        var toOne: [MockToOne] = []
        for relationship in entity.relationships where relationship.kind == .toOne {
            guard let destination = schema.entity(named: relationship.destination),
                  let foreignKey = relationship.foreignKey,
                  let attribute = entity.attribute(named: foreignKey) else { continue }
            let foreignKeyName = property(attribute).name
            parents.append(MockParent(destination.tableName, key: foreignKeyName))
            // The nested object, where the client reads it: the relationship's JSON key.
            let key = PropertyMap.jsonKey(of: relationship, convention: schema.keyConvention)
            toOne.append(MockToOne(key, resource: destination.tableName, foreignKey: foreignKeyName))
        }
        // The column of kept unmapped keys holds what no other property takes; objects are served with it merged in.
        var properties = entity.attributes.map(property)
        // A many-to-many array (objects or keys) is kept as the client sent it and served back whole.
        for relationship in entity.relationships where relationship.isManyToMany {
            properties.append(MockProperty(PropertyMap.jsonKey(of: relationship, convention: schema.keyConvention), .json))
        }
        let allowed = actions ?? entity.actions.map { set in
            MockActions(set.map { action -> MockActions in
                switch action {
                case .index: return .index
                case .show: return .show
                case .create: return .create
                case .update: return .update
                case .destroy: return .destroy
                }
            })
        } ?? .all
        self.init(entity.tableName, properties: properties, actions: allowed, primaryKey: primaryKey, parents: parents, toOne: toOne)
        unmappedProperty = entity.unmappedAttribute.map { property($0).name }
        versionProperty = entity.versionAttribute.flatMap { entity.attribute(named: $0) }.map { property($0).name }
    }

    /// Every resource of a schema, in the schema's order.
    ///
    /// ```swift
    /// let resources = MockResource.resources(for: schema) // people, cars
    /// ```
    /// - Parameters:
    ///   - schema: the schema.
    /// - Returns: one resource per entity.
    public static func resources(for schema: Schema) -> [MockResource] {
        schema.entities.map { MockResource(entity: $0, in: schema) }
    }

    /// The property named `name`, if any.
    ///
    /// ```swift
    /// people.property(named: "name")?.type // .string
    /// ```
    /// - Parameters:
    ///   - name: the JSON key.
    /// - Returns: the property, or nil.
    public func property(named name: String) -> MockProperty? {
        properties.first { $0.name == name }
    }

    /// `values` ready to insert as a new object: a string key the values lack made (a random UUID);
    /// an auto-increment key left to the store. Stores call it from `create` and `upsert`.
    ///
    /// ```swift
    /// let values = try tags.assigningKey(to: ["label": "red"])   // ["label": "red", "slug": "1b4e…"]
    /// ```
    /// - Parameters:
    ///   - values: harvested values.
    /// - Returns: the values with their key.
    /// - Throws: `MockHTTPError` 422 naming each part of a composite key the values lack (or hold null):
    ///   the server cannot make those up.
    public func assigningKey(to values: JSONObject) throws -> JSONObject {
        switch primaryKey.kind {
        case .autoIncrement:
            return values
        case .string:
            guard values[primaryKey.name].map(\.isNull) ?? true else { return values }
            var values = values
            values[primaryKey.name] = .string(UUID().uuidString.lowercased())
            return values
        case .composite:
            let missing = primaryKey.missingParts(in: values)
            guard missing.isEmpty else {
                throw MockHTTPError.unprocessable(missing.map { ($0, ["is required: part of the key of \(name)"]) })
            }
            return values
        }
    }

    /// The parent named `resource`, if any.
    func parent(named resource: String) -> MockParent? {
        parents.first { $0.resource == resource }
    }
}

extension MockResource {
    /// Keeps an object's known properties (type-checked) and drops unknown keys, as RESTEasy's loader does.
    /// A property with a dotted name is read at its key path: `{"address": {"city": "Paris"}}` gives
    /// `address.city`; `"address": null` makes every property under `address` null.
    ///
    /// ```swift
    /// let values = try people.harvest(["name": "john", "shoeSize": 44]) // ["name": "john"]
    /// let home = try places.harvest(["address": ["city": "Paris"]])    // ["address.city": "Paris"]
    /// ```
    /// - Parameters:
    ///   - value: the decoded JSON body or data object.
    ///   - keepingKey: whether a primary key in the object is kept (create, load) or dropped (update).
    /// - Returns: the known properties in canonical form, keyed by property name.
    /// - Throws: `MockHTTPError` 422 with field errors (named by key path): a value of the wrong type, a body
    ///   that is not an object, a value that is neither an object nor null where properties nest
    ///   (`address`), a nested property sent flat under its dotted name (`"address.city": …`), or an object
    ///   with no known property.
    public func harvest(_ value: JSONValue, keepingKey: Bool = true) throws -> JSONObject {
        guard case .object(let object) = value else {
            throw MockHTTPError.unprocessable(["base": ["must be a JSON object, not \(value.typeName)"]])
        }
        var harvest = Harvest()
        collect(object, node: keyPaths.root, prefix: "", keepingKey: keepingKey, into: &harvest)
        if !harvest.errors.isEmpty { throw MockHTTPError.unprocessable(harvest.errors) }
        if harvest.known == 0 {
            if harvest.unknown.isEmpty { throw MockHTTPError.unprocessable(["base": ["has no property of \(name)"]]) }
            throw MockHTTPError.unprocessable(harvest.unknown)
        }
        return harvest.values
    }

    /// What harvesting found so far.
    private struct Harvest {
        var values = JSONObject()
        var errors: [(String, [String])] = []
        var unknown: [(String, [String])] = []
        var known = 0
    }

    /// Harvests the members of one object level; `prefix` is the key path to it (`""` or `"address."`).
    private func collect(_ object: JSONObject, node: MockKeyPaths.Node, prefix: String, keepingKey: Bool,
                         into harvest: inout Harvest) {
        for (key, member) in object {
            switch node.slots[key] {
            case nil:
                if prefix.isEmpty, let index = properties.firstIndex(where: { $0.name == key }), keyPaths.paths[index].count > 1 {
                    // `{"address.city": …}` for a property read at `address` → `city`: refused, not dropped, so that
                    // the value is not lost.
                    let shape = keyPaths.paths[index].reversed().reduce("…") { inner, part in "{\"\(part)\": \(inner)}" }
                    harvest.errors.append((key, ["is nested: send \(shape)"]))
                } else if let unmappedProperty {
                    // Kept whole, at its key path, for the object to be served as it came.
                    harvest.known += 1
                    var kept = harvest.values[unmappedProperty]?.objectValue ?? JSONObject()
                    kept.setValue(member, at: prefix.split(separator: ".").map(String.init) + [key])
                    harvest.values[unmappedProperty] = .object(kept)
                } else {
                    harvest.unknown.append((prefix + key, ["is not a property of \(name)"]))
                }
            case .property(let index)?:
                harvest.known += 1
                take(member, property: properties[index], keepingKey: keepingKey, into: &harvest)
            case .object(let child)?:
                switch member {
                case .object(let nested):
                    collect(nested, node: child, prefix: prefix + key + ".", keepingKey: keepingKey, into: &harvest)
                case .null:
                    for index in child.properties() {
                        harvest.known += 1
                        take(.null, property: properties[index], keepingKey: keepingKey, into: &harvest)
                    }
                default:
                    harvest.errors.append((prefix + key, ["must be an object or null, not \(member.typeName)"]))
                }
            }
        }
    }

    /// Type-checks one property's value.
    private func take(_ member: JSONValue, property: MockProperty, keepingKey: Bool, into harvest: inout Harvest) {
        if primaryKey.contains(property.name) {
            guard keepingKey, !member.isNull else { return }
        }
        if let canonical = property.type.validate(member) {
            harvest.values[property.name] = canonical
        } else {
            harvest.errors.append((property.name, [property.type.requirement]))
        }
    }

    /// `values` with every property present: missing ones as null, in the resource's property order.
    func complete(_ values: JSONObject) -> JSONObject {
        var object = JSONObject()
        for property in properties { object[property.name] = values[property.name] ?? .null }
        return object
    }

    /// A stored object as it goes on the wire: every property present (missing ones null), in property order,
    /// properties with dotted names nested at their key paths. `address.city` and `address.zip` share one
    /// `address` object, which is always an object: with nothing stored its members are null.
    /// ``MockCRUD`` calls it before the serializer; a controller that answers store objects itself calls it too.
    ///
    /// ```swift
    /// let object = try await request.store.object(request.resource, id: 1) ?? [:]
    /// request.resource.nested(object) // {"id": 1, "address": {"city": "Paris", "zip": null}}
    /// ```
    /// - Parameters:
    ///   - values: the stored values, keyed by property name.
    /// - Returns: the JSON object.
    public func nested(_ values: JSONObject) -> JSONObject {
        omittingAbsentToOne(mergingUnmapped(keyPaths.nests ? MockKeyPaths.build(keyPaths.root, from: values, properties: properties)
                                                           : complete(values)))
    }

    /// A store's object (every property present already) as it goes on the wire: as it is when no property
    /// nests and no to-one relationship may be left out.
    func wire(_ stored: JSONObject) -> JSONObject {
        omittingAbsentToOne(mergingUnmapped(keyPaths.nests ? MockKeyPaths.build(keyPaths.root, from: stored, properties: properties)
                                                           : stored))
    }

    /// The object with the members of ``unmappedProperty`` in place of it (nested ones merged into
    /// the objects of their key paths); a property's own value wins over a kept key of its name.
    func mergingUnmapped(_ object: JSONObject) -> JSONObject {
        guard let unmappedProperty, let value = object[unmappedProperty] else { return object }
        var merged = object
        merged[unmappedProperty] = nil
        guard case .object(let kept) = value else { return merged }
        merged.addMissing(from: kept)
        return merged
    }

    /// Puts `values` (keyed by property name) at their properties' key paths, adding no missing ones;
    /// keys that name no property stay as they are.
    func placing(_ values: JSONObject) -> JSONObject {
        guard keyPaths.nests else { return values }
        var object = JSONObject()
        for (key, value) in values {
            if let index = properties.firstIndex(where: { $0.name == key }) {
                object.setValue(value, at: keyPaths.paths[index])
            } else if object[key] == nil {
                object[key] = value
            }
        }
        return object
    }
}
