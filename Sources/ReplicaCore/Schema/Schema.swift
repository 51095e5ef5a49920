/// A description of the data Replica stores and how it looks as JSON.
///
/// A schema is written either as a JSON schema file (see `Schemas/`) or with
/// the Swift builder; both produce equal values.
///
/// ```swift
/// let schema = try Schema(name: "blog", version: 1) {
///     Entity("User", primaryKey: "userID", jsonIDKey: "user_id") {
///         Attribute("userID", .integer)
///         Attribute("name", .string, nullable: false)
///     }
/// }
/// ```
public struct Schema: Sendable, Hashable {
    /// The schema's name, e.g. `blog`.
    public var name: String
    /// The schema version. Opening a store with a higher version migrates it additively.
    public var version: Int
    /// How JSON keys are derived from attribute names.
    public var keyConvention: KeyConvention
    /// A dot-separated path that wraps every response (`data`, `data.result`), or `nil`.
    public var envelope: String?
    /// The entities, in declaration order.
    public var entities: [Entity]
    /// The routes: what each API path means.
    public var routes: [Route]
    /// Headers a client sends with every request (`"headers"` at the top of a schema file), under
    /// a route's headers and a call's own; over the client configuration's.
    ///
    /// ```swift
    /// let schema = try Schema(name: "github", headers: ["Accept": "application/vnd.github+json"]) { … }
    /// ```
    public var headers: [String: String]
    /// What imports do with keys that match no attribute or relationship, for entities that do
    /// not say (``Entity/unmappedKeys``): `warn` (the default), `ignore` or `keep`.
    ///
    /// ```swift
    /// let schema = try Schema(name: "github", unmappedKeys: .ignore) { … }
    /// ```
    public var unmappedKeys: UnmappedKeyPolicy
    /// Globs of keys no entity stores, counts or warns about (``KeyGlob``), on top of each
    /// entity's own ``Entity/ignoreKeys``.
    ///
    /// ```swift
    /// let schema = try Schema(name: "github", ignoreKeys: ["*_url", "node_id"]) { … }
    /// ```
    public var ignoreKeys: [String]
    /// How collections go on past their first page, for routes that do not say
    /// (``Route/pagination``; `"pagination"` at the top of a schema file); `nil` for `Link` headers.
    ///
    /// ```swift
    /// var schema = try Schema(name: "stripe") { … }
    /// schema.pagination = .stripe
    /// ```
    public var pagination: PaginationRule?

    /// Creates a schema from its parts, checking that it is consistent.
    ///
    /// ```swift
    /// let schema = try Schema(name: "blog", entities: [user], routes: [Route(.get, "/users", target: .entity("User"))],
    ///                         headers: ["User-Agent": "blog-sync/1.0"])
    /// ```
    ///
    /// `unmappedKeys` and `ignoreKeys` say what imports do with keys no attribute takes, for every
    /// entity (each ``Entity`` may say otherwise):
    ///
    /// ```swift
    /// let schema = try Schema(name: "github", entities: [issue], unmappedKeys: .keep, ignoreKeys: ["*_url", "node_id"])
    /// ```
    ///
    /// - Throws: ``SchemaError`` when an entity, attribute, relationship or route is invalid.
    public init(
        name: String,
        version: Int = 1,
        keyConvention: KeyConvention = .snakeCase,
        envelope: String? = nil,
        entities: [Entity],
        routes: [Route] = [],
        headers: [String: String] = [:],
        unmappedKeys: UnmappedKeyPolicy = .warn,
        ignoreKeys: [String] = [],
        pagination: PaginationRule? = nil
    ) throws {
        self.init(unchecked: name, version: version, keyConvention: keyConvention, envelope: envelope, entities: entities,
                  routes: routes, headers: headers, unmappedKeys: unmappedKeys, ignoreKeys: ignoreKeys, pagination: pagination)
        try SchemaValidator(file: nil).validate(&self)
    }

    /// Creates a schema without validating it. Only the validator and loader use this.
    init(unchecked name: String, version: Int, keyConvention: KeyConvention, envelope: String?,
         entities: [Entity], routes: [Route], headers: [String: String] = [:],
         unmappedKeys: UnmappedKeyPolicy = .warn, ignoreKeys: [String] = [], pagination: PaginationRule? = nil) {
        self.pagination = pagination
        self.unmappedKeys = unmappedKeys
        self.ignoreKeys = ignoreKeys
        self.name = name
        self.version = version
        self.keyConvention = keyConvention
        self.envelope = envelope
        self.entities = entities
        self.routes = routes
        self.headers = headers
    }

    /// The entity named `name` (the entity name, or its table name), or `nil`.
    ///
    /// ```swift
    /// schema.entity(named: "User")?.tableName   // "users"
    /// ```
    public func entity(named name: String) -> Entity? {
        entities.first { $0.name == name } ?? entities.first { $0.tableName == name }
    }

    /// The entity named `name`, or an error naming it.
    ///
    /// - Throws: ``SchemaError/Code/unknownEntity``.
    public func requireEntity(_ name: String) throws -> Entity {
        guard let entity = entity(named: name) else {
            let known = entities.map(\.name).joined(separator: ", ")
            throw SchemaError(.unknownEntity, "unknown entity '\(name)' (schema '\(self.name)' has \(known))")
        }
        return entity
    }
}

extension Schema {
    /// The join table of the many-to-many `relationship` of `entity`, or `nil` for any other
    /// relationship.
    ///
    /// ```swift
    /// let issue = try schema.requireEntity("Issue")
    /// schema.joinTable(for: issue.relationships[0], of: issue)?.columns   // ["issueID", "labelID"]
    /// ```
    public func joinTable(for relationship: Relationship, of entity: Entity) -> JoinTable? {
        guard relationship.kind == .toMany, let name = relationship.through else { return nil }
        let columns = relationship.throughKeys
            ?? [Self.joinColumn(for: entity.name), Self.joinColumn(for: relationship.destination)]
        let destination = self.entity(named: relationship.destination)
        return JoinTable(name: name, entities: [entity.name, relationship.destination], columns: columns,
                         types: [entity.primaryKeyAttribute.type, destination?.primaryKeyAttribute.type ?? .integer])
    }

    /// Every join table of the schema once, in the order the relationships declaring them come
    /// (a table declared from both sides counts once, as its first declaration says).
    ///
    /// ```swift
    /// for join in schema.joinTables { print(join.name) }   // issue_labels
    /// ```
    public var joinTables: [JoinTable] {
        var seen: Set<String> = []
        var tables: [JoinTable] = []
        for entity in entities {
            for relationship in entity.relationships {
                guard let join = joinTable(for: relationship, of: entity), seen.insert(join.name.lowercased()).inserted
                else { continue }
                tables.append(join)
            }
        }
        return tables
    }

    /// The default join column of an entity: its name in lower camel case followed by `ID`
    /// (`Issue` → `issueID`, `PullRequest` → `pullRequestID`, `URLRef` → `urlRefID`).
    static func joinColumn(for entityName: String) -> String {
        let characters = Array(entityName)
        var leading = 0
        while leading < characters.count, characters[leading].isUppercase { leading += 1 }
        // An acronym's last capital starts the next word (`URLRef`: `url` + `Ref`).
        let lowered = leading > 1 && leading < characters.count ? leading - 1 : leading
        let head = String(characters[..<lowered]).lowercased()
        return head + String(characters[lowered...]) + "ID"
    }
}
