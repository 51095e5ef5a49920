/// A kind of stored object: a table, its attributes, its keys and its JSON shape.
///
/// ```swift
/// let post = Entity("Post", tableName: "posts") {
///     Attribute("id", .integer)
///     Attribute("title", .string)
///     Attribute("userID", .integer)
///     Relationship.toOne("author", "User", foreignKey: "userID")
/// }
/// ```
public struct Entity: Sendable, Hashable {
    /// The entity name, e.g. `User`. Also a key MANY responses may use.
    public var name: String
    /// The SQLite table, derived from the name when not given (`User` → `users`, `Person` → `people`).
    public var tableName: String
    /// The attributes, in declaration order; each is a column.
    public var attributes: [Attribute]
    /// The attribute that is the primary key (default `id`).
    public var primaryKey: String
    /// The JSON key that holds the id in responses (RSAPI's `jsonIdKeyForClass`, default `id`).
    public var jsonIDKey: String
    /// Relationships to other entities.
    public var relationships: [Relationship]
    /// Secondary indexes.
    public var indexes: [Index]
    /// The JSON namespace of one object (`post` in `{"post": {...}}`), or `nil`.
    public var namespace: String?
    /// The JSON namespace of a collection (`posts` in `{"posts": [...]}`); defaults to the plural of ``namespace``.
    public var collectionNamespace: String?
    /// The actions the API offers on this entity (RESTEasy's actions mask): what a mock server of
    /// the schema answers, others 405; `nil` for all of them.
    ///
    /// ```swift
    /// var tags = Entity("Tag") { Attribute("id", .integer) }
    /// tags.actions = [.index, .show]          // read-only: POST, PUT, DELETE answer 405
    /// ```
    public var actions: Set<EntityAction>?
    /// What imports do with the keys of this entity's objects that match no attribute or
    /// relationship; `nil` follows the schema's ``Schema/unmappedKeys`` (default `warn`).
    ///
    /// ```swift
    /// var issue = Entity("Issue", unmappedKeys: .keep) { Attribute("id", .integer) }
    /// issue.unmappedKeys = .ignore
    /// ```
    public var unmappedKeys: UnmappedKeyPolicy?
    /// Globs of keys this entity's objects may hold without being stored, counted or warned
    /// about, on top of the schema's ``Schema/ignoreKeys`` (see ``KeyGlob``).
    ///
    /// ```swift
    /// let issue = Entity("Issue", ignoreKeys: ["*_url", "node_id"]) { Attribute("id", .integer) }
    /// ```
    public var ignoreKeys: [String]
    /// The column that holds the kept keys under ``UnmappedKeyPolicy/keep``; `nil` for `unmapped`.
    ///
    /// ```swift
    /// let issue = Entity("Issue", unmappedKeys: .keep, unmappedColumn: "extra") { Attribute("id", .integer) }
    /// ```
    public var unmappedColumn: String?

    /// Creates an entity.
    ///
    /// - Parameters:
    ///   - name: The entity name.
    ///   - tableName: The table; derived from `name` when `nil`.
    ///   - primaryKey: The primary key attribute.
    ///   - jsonIDKey: The JSON key of the id (default `id`).
    ///   - namespace: The JSON namespace of one object.
    ///   - collectionNamespace: The JSON namespace of a collection.
    ///   - unmappedKeys: What imports do with unmapped keys; `nil` for the schema's policy.
    ///   - ignoreKeys: Globs of keys never stored, counted or warned about.
    ///   - unmappedColumn: The column of kept keys (default `unmapped`).
    ///   - members: Attributes, relationships and indexes.
    public init(
        _ name: String,
        tableName: String? = nil,
        primaryKey: String = "id",
        jsonIDKey: String? = nil,
        namespace: String? = nil,
        collectionNamespace: String? = nil,
        unmappedKeys: UnmappedKeyPolicy? = nil,
        ignoreKeys: [String] = [],
        unmappedColumn: String? = nil,
        @EntityBuilder _ members: () -> [EntityMember] = { [] }
    ) {
        self.unmappedKeys = unmappedKeys
        self.ignoreKeys = ignoreKeys
        self.unmappedColumn = unmappedColumn
        self.name = name
        self.tableName = tableName ?? Inflection.tableName(for: name)
        self.primaryKey = primaryKey
        self.jsonIDKey = jsonIDKey ?? "id"
        self.namespace = namespace
        self.collectionNamespace = collectionNamespace ?? namespace.map(Inflection.plural)
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
        var indexes: [Index] = []
        for member in members() {
            switch member {
            case .attribute(var a):
                if a.nullabilityIsImplicit && a.name == primaryKey { a.isNullable = false }
                attributes.append(a)
            case .relationship(let r): relationships.append(r)
            case .index(let i): indexes.append(i)
            }
        }
        self.attributes = attributes
        self.relationships = relationships
        self.indexes = indexes
    }

    /// The attribute named `name`, or `nil`.
    public func attribute(named name: String) -> Attribute? {
        attributes.first { $0.name == name }
    }

    /// The relationship named `name`, or `nil`.
    public func relationship(named name: String) -> Relationship? {
        relationships.first { $0.name == name }
    }

    /// The primary key attribute. Validated schemas always have one.
    public var primaryKeyAttribute: Attribute {
        attribute(named: primaryKey) ?? Attribute(primaryKey, .integer, nullable: false)
    }
}

/// One thing declared inside an ``Entity`` builder.
public enum EntityMember: Sendable, Hashable {
    case attribute(Attribute)
    case relationship(Relationship)
    case index(Index)
}

/// Collects the attributes, relationships and indexes of an ``Entity``.
@resultBuilder
public enum EntityBuilder {
    public static func buildExpression(_ attribute: Attribute) -> [EntityMember] { [.attribute(attribute)] }
    public static func buildExpression(_ relationship: Relationship) -> [EntityMember] { [.relationship(relationship)] }
    public static func buildExpression(_ index: Index) -> [EntityMember] { [.index(index)] }
    public static func buildBlock(_ parts: [EntityMember]...) -> [EntityMember] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [EntityMember]?) -> [EntityMember] { part ?? [] }
    public static func buildEither(first: [EntityMember]) -> [EntityMember] { first }
    public static func buildEither(second: [EntityMember]) -> [EntityMember] { second }
    public static func buildArray(_ parts: [[EntityMember]]) -> [EntityMember] { parts.flatMap { $0 } }
}

/// Collects the entities of a ``Schema``.
@resultBuilder
public enum SchemaBuilder {
    public static func buildExpression(_ entity: Entity) -> [Entity] { [entity] }
    public static func buildBlock(_ parts: [Entity]...) -> [Entity] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [Entity]?) -> [Entity] { part ?? [] }
    public static func buildEither(first: [Entity]) -> [Entity] { first }
    public static func buildEither(second: [Entity]) -> [Entity] { second }
    public static func buildArray(_ parts: [[Entity]]) -> [Entity] { parts.flatMap { $0 } }
}

extension Schema {
    /// Creates a schema with the builder syntax.
    ///
    /// ```swift
    /// let schema = try Schema(name: "people") {
    ///     Entity("Person") { Attribute("id", .integer); Attribute("name", .string) }
    /// }
    /// ```
    ///
    /// - Throws: ``SchemaError`` when the schema is inconsistent.
    public init(
        name: String,
        version: Int = 1,
        keyConvention: KeyConvention = .snakeCase,
        envelope: String? = nil,
        routes: [Route] = [],
        headers: [String: String] = [:],
        unmappedKeys: UnmappedKeyPolicy = .warn,
        ignoreKeys: [String] = [],
        @SchemaBuilder entities: () -> [Entity]
    ) throws {
        try self.init(name: name, version: version, keyConvention: keyConvention, envelope: envelope,
                      entities: entities(), routes: routes, headers: headers, unmappedKeys: unmappedKeys,
                      ignoreKeys: ignoreKeys)
    }
}

/// One of the REST actions an API offers on an entity (``Entity/actions``).
public enum EntityAction: String, Sendable, Hashable, CaseIterable {
    /// `GET /posts`.
    case index
    /// `GET /posts/:id`.
    case show
    /// `POST /posts`.
    case create
    /// `PUT` or `PATCH /posts/:id`.
    case update
    /// `DELETE /posts/:id`.
    case destroy
}
