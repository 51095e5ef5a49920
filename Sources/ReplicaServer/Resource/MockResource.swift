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
    /// The typed properties, primary and parent keys included (added when missing).
    public private(set) var properties: [MockProperty]
    /// The CRUD actions this resource answers; others get 405.
    public var actions: MockActions
    /// The primary key property and its kind.
    public let primaryKey: MockPrimaryKey
    /// The parents whose routes nest this resource (`/people/:id/cars`).
    public let parents: [MockParent]

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
    public init(
        _ name: String,
        properties: [MockProperty],
        actions: MockActions = .all,
        primaryKey: MockPrimaryKey = .default,
        parents: [MockParent] = []
    ) {
        self.name = name
        self.actions = actions
        self.primaryKey = primaryKey
        self.parents = parents
        var properties = properties.filter { $0.name != primaryKey.name }
        properties.insert(MockProperty(primaryKey.name, primaryKey.type), at: 0)
        for parent in parents where !properties.contains(where: { $0.name == parent.key }) {
            properties.append(MockProperty(parent.key, .integer))
        }
        var seen = Set<String>()
        self.properties = properties.filter { seen.insert($0.name).inserted }
    }

    /// A resource for a Replica schema entity: its table name as the path, its attributes under their JSON
    /// keys, its to-one relationships as parents (keyed by the foreign key's JSON key).
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
        func jsonKey(_ attribute: Attribute) -> String {
            attribute.jsonKey ?? schema.keyConvention.jsonKey(forAttribute: attribute.name)
        }
        let keyAttribute = entity.primaryKeyAttribute
        let keyName = entity.attribute(named: entity.primaryKey).map(jsonKey) ?? entity.jsonIDKey
        let primaryKey: MockPrimaryKey = keyAttribute.type == .integer ? .autoIncrement(keyName) : .string(keyName)
        var parents: [MockParent] = []
        for relationship in entity.relationships where relationship.kind == .toOne {
            guard let destination = schema.entity(named: relationship.destination),
                  let foreignKey = relationship.foreignKey,
                  let attribute = entity.attribute(named: foreignKey) else { continue }
            parents.append(MockParent(destination.tableName, key: jsonKey(attribute)))
        }
        let properties = entity.attributes.map { MockProperty(jsonKey($0), MockPropertyType($0.type)) }
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
        self.init(entity.tableName, properties: properties, actions: allowed, primaryKey: primaryKey, parents: parents)
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

    /// The parent named `resource`, if any.
    func parent(named resource: String) -> MockParent? {
        parents.first { $0.resource == resource }
    }
}

extension MockResource {
    /// Keeps an object's known properties (type-checked) and drops unknown keys, as RESTEasy's loader does.
    ///
    /// ```swift
    /// let values = try people.harvest(["name": "john", "shoeSize": 44]) // ["name": "john"]
    /// ```
    /// - Parameters:
    ///   - value: the decoded JSON body or data object.
    ///   - keepingKey: whether a primary key in the object is kept (create, load) or dropped (update).
    /// - Returns: the known properties in canonical form.
    /// - Throws: `MockHTTPError` 422 with field errors: a value of the wrong type, a body that is not an
    ///   object, or an object with no known property.
    public func harvest(_ value: JSONValue, keepingKey: Bool = true) throws -> JSONObject {
        guard case .object(let object) = value else {
            throw MockHTTPError.unprocessable(["base": ["must be a JSON object, not \(value.typeName)"]])
        }
        var harvested = JSONObject()
        var errors: [(String, [String])] = []
        var unknown: [(String, [String])] = []
        var known = 0
        for (key, member) in object {
            guard let property = property(named: key) else {
                unknown.append((key, ["is not a property of \(name)"]))
                continue
            }
            known += 1
            if key == primaryKey.name {
                guard keepingKey else { continue }
                if member.isNull { continue }
            }
            if let canonical = property.type.validate(member) {
                harvested[key] = canonical
            } else {
                errors.append((key, [property.type.requirement]))
            }
        }
        if !errors.isEmpty { throw MockHTTPError.unprocessable(errors) }
        if known == 0 {
            if unknown.isEmpty { throw MockHTTPError.unprocessable(["base": ["has no property of \(name)"]]) }
            throw MockHTTPError.unprocessable(unknown)
        }
        return harvested
    }

    /// `values` with every property present: missing ones as null, in the resource's property order.
    func complete(_ values: JSONObject) -> JSONObject {
        var object = JSONObject()
        for property in properties { object[property.name] = values[property.name] ?? .null }
        return object
    }
}
