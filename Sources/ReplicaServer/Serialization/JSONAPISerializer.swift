import ReplicaCore

/// A serializer that answers as a JSON:API server does: each object a resource object
/// (`{"type": "articles", "id": "1", "attributes": {…}, "relationships": {"author": {"data": {"type": "people", "id": "9"}}}}`),
/// one object as `{"data": {…}}`, a collection as `{"data": […]}`; request bodies in that shape are
/// read back into the resource's properties.
///
/// A schema whose routes read JSON:API (``Discriminator/Layout/jsonAPI``) gets one per entity they
/// name (``serializers(for:)``), so that `replica serve --schema` answers the documents its client
/// reads. The `jsonapi` pagination style writes the same resource objects in its pages.
///
/// ```swift
/// let articles = JSONAPISerializer(type: "articles", idKey: "id",
///                                  relationships: [.init(name: "author", foreignKey: "authorID", type: "people")])
/// server.setSerializer(articles, for: "articles")
/// // GET /articles/1 → {"data": {"type": "articles", "id": "1", "attributes": {"title": "…"},
/// //                             "relationships": {"author": {"data": {"type": "people", "id": "9"}}}}}
/// ```
public struct JSONAPISerializer: MockSerializer, Hashable {
    /// A relationship of the resource: a to-one read from its foreign key property, or a to-many
    /// from the property holding its array of keys (or objects).
    public struct Relationship: Sendable, Hashable {
        /// The relationship's member name (`author`), also the property of a to-many's array.
        public var name: String
        /// The property holding a to-one's key (`authorID`); `nil` for a to-many.
        public var foreignKey: String?
        /// The type of the resources it refers to (`people`).
        public var type: String

        /// Describes a relationship.
        ///
        /// ```swift
        /// JSONAPISerializer.Relationship(name: "author", foreignKey: "authorID", type: "people")   // to-one
        /// JSONAPISerializer.Relationship(name: "comments", type: "comments")                     // to-many
        /// ```
        public init(name: String, foreignKey: String? = nil, type: String) {
            self.name = name
            self.foreignKey = foreignKey
            self.type = type
        }
    }

    /// The resources' `type`.
    public var type: String
    /// The property holding the key, served as the resource's `id`.
    public var idKey: String
    /// The relationships, served under `relationships` instead of among the attributes.
    public var relationships: [Relationship]

    /// Creates a serializer.
    ///
    /// ```swift
    /// JSONAPISerializer(type: "people", idKey: "id")
    /// ```
    public init(type: String, idKey: String = "id", relationships: [Relationship] = []) {
        self.type = type
        self.idKey = idKey
        self.relationships = relationships
    }

    /// A serializer for each entity that a route of `schema` reads as JSON:API, by the entity's
    /// resource (table) name: its type as the routes' discriminators name it, its to-one and
    /// many-to-many relationships as relationships. An entity with a composite key is left out
    /// (a resource has one `id`).
    ///
    /// ```swift
    /// let schema = try Schema(contentsOf: URL(fileURLWithPath: "Schemas/jsonapi.json"))
    /// JSONAPISerializer.serializers(for: schema).keys.sorted()   // ["articles", "comments", "people"]
    /// ```
    public static func serializers(for schema: Schema) -> [String: JSONAPISerializer] {
        var types: [String: String] = [:]
        for route in schema.routes {
            guard let discriminator = route.discriminator, discriminator.layout == .jsonAPI else { continue }
            for (type, entity) in discriminator.entities.sorted(by: { $0.key < $1.key }) where types[entity] == nil {
                types[entity] = type
            }
        }
        let convention = schema.keyConvention
        var serializers: [String: JSONAPISerializer] = [:]
        for (name, type) in types {
            guard let entity = schema.entity(named: name), !entity.hasCompositeKey,
                  let key = entity.attribute(named: entity.primaryKey) else { continue }
            var relationships: [Relationship] = []
            for relationship in entity.relationships {
                guard let destination = schema.entity(named: relationship.destination) else { continue }
                let member = PropertyMap.jsonKey(of: relationship, convention: convention)
                let destinationType = types[destination.name] ?? destination.tableName
                if relationship.kind == .toOne, let foreignKey = relationship.foreignKey.flatMap(entity.attribute(named:)) {
                    let key = PropertyMap.jsonKey(of: foreignKey, in: entity, convention: convention)
                    relationships.append(Relationship(name: member, foreignKey: key, type: destinationType))
                } else if relationship.kind == .toMany, relationship.through != nil {
                    relationships.append(Relationship(name: member, type: destinationType))
                }
            }
            let idKey = PropertyMap.jsonKey(of: key, in: entity, convention: convention)
            serializers[entity.tableName] = JSONAPISerializer(type: type, idKey: idKey, relationships: relationships)
        }
        return serializers
    }

    /// One stored object (in its wire shape) as a resource object.
    ///
    /// ```swift
    /// serializer.resource(["id": 1, "title": "T", "authorID": "9"])
    /// // {"type": "articles", "id": "1", "attributes": {"title": "T"}, "relationships": {"author": {"data": {"type": "people", "id": "9"}}}}
    /// ```
    public func resource(_ object: JSONObject) -> JSONValue {
        var attributes = object
        attributes[idKey] = nil
        var members = JSONObject()
        for relationship in relationships {
            if let foreignKey = relationship.foreignKey {
                let value = object[foreignKey]
                attributes[foreignKey] = nil
                attributes[relationship.name] = nil
                switch value {
                case nil: continue
                case .null?: members[relationship.name] = .object(["data": .null])
                case let key?: members[relationship.name] = .object(["data": identifier(key, type: relationship.type)])
                }
            } else {
                let value = object[relationship.name]
                attributes[relationship.name] = nil
                guard case .array(let items)? = value else { continue }
                members[relationship.name] = .object(["data": .array(items.map { item in
                    identifier(item.objectValue?["id"] ?? item, type: relationship.type)
                })])
            }
        }
        var resource: JSONObject = ["type": .string(type), "id": .string(Self.text(object[idKey] ?? .null)),
                                    "attributes": .object(attributes)]
        if !members.isEmpty { resource["relationships"] = .object(members) }
        return .object(resource)
    }

    public func serialize(object: JSONObject, of resource: MockResource) -> JSONValue {
        .object(["data": self.resource(object)])
    }

    public func serialize(collection: [JSONObject], of resource: MockResource) -> JSONValue {
        .object(["data": .array(collection.map(self.resource))])
    }

    /// A request body's resource object (`{"data": {"type", "id", "attributes", "relationships"}}`)
    /// as the resource's properties; a body in another shape is taken as it is.
    public func deserialize(parameters: JSONValue, of resource: MockResource) -> JSONValue {
        guard case .object(let data) = parameters["data"] ?? parameters,
              data["attributes"] != nil || data["relationships"] != nil || data["type"] != nil else { return parameters }
        var flat = data["attributes"]?.objectValue ?? JSONObject()
        if let id = data["id"] { flat[idKey] = id }
        if case .object(let members)? = data["relationships"] {
            for relationship in relationships {
                guard case .object(let member)? = members[relationship.name], let linkage = member["data"] else { continue }
                if let foreignKey = relationship.foreignKey {
                    flat[foreignKey] = linkage.objectValue?["id"] ?? .null
                } else if case .array(let identifiers) = linkage {
                    flat[relationship.name] = .array(identifiers.map { $0.objectValue?["id"] ?? .null })
                }
            }
        }
        return .object(flat)
    }

    private func identifier(_ key: JSONValue, type: String) -> JSONValue {
        .object(["type": .string(type), "id": .string(Self.text(key))])
    }

    /// A key as a resource id: JSON:API ids are strings.
    static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): return text
        case .int(let number): return String(number)
        default: return value.serialized()
        }
    }
}
