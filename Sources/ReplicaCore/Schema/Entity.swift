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
    /// The attributes that make the primary key, in order: one name for a single-column key
    /// (default `["id"]`), two or more for a composite key (`["owner", "repo", "ref"]`).
    ///
    /// ```swift
    /// Entity("Ref", primaryKey: ["owner", "repo", "ref"]) { ... }.primaryKeyNames   // ["owner", "repo", "ref"]
    /// Entity("User") { ... }.primaryKeyNames                                         // ["id"]
    /// ```
    public var primaryKeyNames: [String]
    /// The JSON key that holds the id in responses (RSAPI's `jsonIdKeyForClass`, default `id`).
    /// It applies to a single-column key only: each part of a composite key maps as its attribute does.
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
    /// The attribute that holds the version of each object as the API numbers it (Rails'
    /// `lock_version`, Jira's `version`), or `nil`. A local change of a row (``ReplicaStore/saveLocally(_:_:)``)
    /// is sent with `If-Match: "<the row's version>"` when the API gave the row no `ETag`, and the
    /// version the API answers moves the row's next change to it; the mock server numbers such
    /// objects 1, 2, … and answers that version as their `ETag`.
    ///
    /// ```swift
    /// var issue = Entity("Issue") { Attribute("id", .integer); Attribute("title", .string); Attribute("version", .integer) }
    /// issue.versionAttribute = "version"
    /// ```
    public var versionAttribute: String?

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
        self.init(name, tableName: tableName, keyNames: [primaryKey], jsonIDKey: jsonIDKey, namespace: namespace,
                  collectionNamespace: collectionNamespace, unmappedKeys: unmappedKeys, ignoreKeys: ignoreKeys,
                  unmappedColumn: unmappedColumn, members: members())
    }

    /// Creates an entity with a composite primary key: the row is identified by the values of all
    /// of `primaryKey`'s attributes together. Each part maps as its attribute does (its `jsonKey`,
    /// the key convention, or the route's scope, as `owner` and `repo` of
    /// `/repos/:owner/:repo/git/refs`); ``jsonIDKey`` does not apply.
    ///
    /// ```swift
    /// let ref = Entity("Ref", primaryKey: ["owner", "repo", "ref"]) {
    ///     Attribute("owner", .string)
    ///     Attribute("repo", .string)
    ///     Attribute("ref", .string)
    ///     Attribute("sha", .string, jsonKey: "object.sha")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The entity name.
    ///   - tableName: The table; derived from `name` when `nil`.
    ///   - primaryKey: The key's attributes, in order (two or more distinct names; one name is a single key).
    ///   - namespace: The JSON namespace of one object.
    ///   - collectionNamespace: The JSON namespace of a collection.
    ///   - unmappedKeys: What imports do with unmapped keys; `nil` for the schema's policy.
    ///   - ignoreKeys: Globs of keys never stored, counted or warned about.
    ///   - unmappedColumn: The column of kept keys (default `unmapped`).
    ///   - members: Attributes, relationships and indexes.
    public init(
        _ name: String,
        tableName: String? = nil,
        primaryKey: [String],
        namespace: String? = nil,
        collectionNamespace: String? = nil,
        unmappedKeys: UnmappedKeyPolicy? = nil,
        ignoreKeys: [String] = [],
        unmappedColumn: String? = nil,
        @EntityBuilder _ members: () -> [EntityMember] = { [] }
    ) {
        self.init(name, tableName: tableName, keyNames: primaryKey, jsonIDKey: nil, namespace: namespace,
                  collectionNamespace: collectionNamespace, unmappedKeys: unmappedKeys, ignoreKeys: ignoreKeys,
                  unmappedColumn: unmappedColumn, members: members())
    }

    /// The designated initializer: both public ones and the schema-file reader end here.
    init(_ name: String, tableName: String?, keyNames: [String], jsonIDKey: String?, namespace: String?,
         collectionNamespace: String?, unmappedKeys: UnmappedKeyPolicy? = nil, ignoreKeys: [String] = [],
         unmappedColumn: String? = nil, members: [EntityMember]) {
        self.unmappedKeys = unmappedKeys
        self.ignoreKeys = ignoreKeys
        self.unmappedColumn = unmappedColumn
        self.name = name
        self.tableName = tableName ?? Inflection.tableName(for: name)
        self.primaryKeyNames = keyNames
        self.jsonIDKey = jsonIDKey ?? "id"
        self.namespace = namespace
        self.collectionNamespace = collectionNamespace ?? namespace.map(Inflection.plural)
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
        var indexes: [Index] = []
        for member in members {
            switch member {
            case .attribute(var a):
                if a.nullabilityIsImplicit && keyNames.contains(a.name) { a.isNullable = false }
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

    /// Whether the primary key has two or more attributes.
    ///
    /// ```swift
    /// Entity("Ref", primaryKey: ["owner", "repo", "ref"]).hasCompositeKey   // true
    /// ```
    public var hasCompositeKey: Bool { primaryKeyNames.count > 1 }

    /// The name of a single-column primary key (default `id`); setting it makes the key that one column.
    ///
    /// For a composite key it is the parts joined by commas (`owner,repo,ref`), which names no
    /// attribute: code that needs the parts reads ``primaryKeyNames``.
    ///
    /// ```swift
    /// Entity("User", primaryKey: "userID").primaryKey   // "userID"
    /// ```
    public var primaryKey: String {
        get { primaryKeyNames.count == 1 ? primaryKeyNames[0] : primaryKeyNames.joined(separator: ",") }
        set { primaryKeyNames = [newValue] }
    }

    /// Whether attribute `name` is (a part of) the primary key.
    ///
    /// ```swift
    /// ref.isKeyAttribute("repo")   // true
    /// ```
    public func isKeyAttribute(_ name: String) -> Bool { primaryKeyNames.contains(name) }

    /// The positions of the primary key's attributes in ``attributes``, in key order (what
    /// ``EntityRow/init(entity:names:values:primaryKeyIndexes:)`` takes for rows of all attributes).
    package var primaryKeyPositions: [Int] {
        primaryKeyNames.map { name in attributes.firstIndex { $0.name == name } ?? 0 }
    }

    /// What is wrong with `key` as a value of this entity's primary key, or `nil` when it fits: a
    /// composite key takes ``AttributeValue/compositeKey(_:)`` of exactly its parts, none null.
    package func keyProblem(_ key: AttributeValue) -> String? {
        let parts = key.compositeKeyParts
        guard hasCompositeKey else {
            return parts == nil ? nil : "\(name) has the single primary key '\(primaryKey)', not a composite key: \(key) is a tuple"
        }
        let names = primaryKeyNames.joined(separator: ", ")
        guard let parts else {
            return "\(name) has a composite primary key (\(names)): give all its parts, "
                + ".compositeKey([...]) of \(primaryKeyNames.count) values, not \(key)"
        }
        guard parts.count == primaryKeyNames.count, !parts.contains(where: \.isNull) else {
            return "\(name) has a composite primary key (\(names)) of \(primaryKeyNames.count) parts, not \(key)"
        }
        return nil
    }

    /// The primary key of the values `value(name)` gives per attribute: the single key's value, or
    /// ``AttributeValue/compositeKey(_:)`` of every part; `nil` when a part is missing or null.
    package func key(from value: (String) -> AttributeValue?) -> AttributeValue? {
        guard hasCompositeKey else { return value(primaryKey).flatMap { $0.isNull ? nil : $0 } }
        var parts: [AttributeValue] = []
        for name in primaryKeyNames {
            guard let part = value(name), !part.isNull else { return nil }
            parts.append(part)
        }
        return .compositeKey(parts)
    }

    /// The where-clause selecting the row of `key` (`"id" = ?`, or `"owner" = ? AND "repo" = ? AND
    /// "ref" = ?` with the tuple's parts), with its arguments.
    package func keyCondition(_ key: AttributeValue) -> (sql: String, arguments: [AttributeValue]) {
        let sql = primaryKeyNames.map { "\($0.quotedIdentifier) = ?" }.joined(separator: " AND ")
        guard hasCompositeKey else { return (sql, [key]) }
        let parts = key.compositeKeyParts ?? []
        return (sql, primaryKeyNames.indices.map { $0 < parts.count ? parts[$0] : .null })
    }

    /// The primary key's attributes, in key order. Validated schemas always have them all.
    ///
    /// ```swift
    /// ref.primaryKeyAttributes.map(\.type)   // [.string, .string, .string]
    /// ```
    public var primaryKeyAttributes: [Attribute] {
        primaryKeyNames.map { attribute(named: $0) ?? Attribute($0, .integer, nullable: false) }
    }

    /// The attribute of a single-column primary key. For a composite key it is the first part's:
    /// code that may meet one reads ``primaryKeyAttributes``.
    public var primaryKeyAttribute: Attribute {
        primaryKeyAttributes.first ?? Attribute("id", .integer, nullable: false)
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
