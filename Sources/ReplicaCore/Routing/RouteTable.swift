/// The schema's routes, frozen into one immutable, `Sendable` table matched by a trie.
///
/// Built once from a schema's `routes` (written in the schema file or in Swift);
/// ambiguous or duplicate routes are refused when it is built, naming both patterns.
///
/// ```swift
/// let table = try RouteTable(schema: schema)
/// let resolution = try table.resolve(.get, "/users/3/posts?page=2")
/// resolution.route.entity?.name   // "Post"
/// resolution.scope                // Post where userID = 3
/// try table.path(for: "/users/:userID/posts", values: ["userID": "3"])   // "/users/3/posts"
/// ```
public struct RouteTable: Sendable {
    /// One route of the table with what it resolves to.
    public struct Entry: Sendable {
        /// The route as declared.
        public let route: Route
        /// Its parsed pattern.
        public let pattern: RoutePattern
        /// The target entity, `nil` for DATA and MANY routes.
        public let entity: Entity?
        /// Pattern variables that scope the entity: variable name → attribute name.
        public let scopeAttributes: [(variable: String, attribute: String)]
        /// The envelope path of this route's responses (the route's own, else the schema's).
        public let envelope: [String]

        /// `true` when the route names one object: its variables include the entity's primary
        /// key (every part of a composite key), or it is a singleton route (`/user.json`).
        public var isSingleObject: Bool {
            guard let entity else { return false }
            return route.singleton || entity.primaryKeyNames.allSatisfy { part in scopeAttributes.contains { $0.attribute == part } }
        }
    }

    /// The schema the routes belong to.
    public let schema: Schema
    /// The entries, in declaration order.
    public let entries: [Entry]
    let trie: RouteTrie<Int>

    /// Builds the table from the schema's routes.
    ///
    /// - Throws: ``RouteError`` for an invalid pattern, or for ambiguous or duplicate routes (naming both).
    public init(schema: Schema) throws(RouteError) {
        self.schema = schema
        var entries: [Entry] = []
        var builder = RouteTableBuilder<Int>()
        for route in schema.routes {
            let pattern = try RoutePattern(route.path)
            var entity: Entity?
            var scope: [(String, String)] = []
            if case .entity(let name) = route.target, let target = schema.entity(named: name) {
                entity = target
                scope = pattern.variables.compactMap { variable in
                    Self.scopeAttribute(for: variable, in: target, convention: schema.keyConvention).map { (variable, $0) }
                }
            }
            let envelopeText = route.envelope ?? schema.envelope ?? ""
            let envelope = envelopeText.split(separator: ".", omittingEmptySubsequences: true).map(String.init)
            builder.add(method: route.method, pattern: pattern, target: entries.count)
            entries.append(Entry(route: route, pattern: pattern, entity: entity, scopeAttributes: scope, envelope: envelope))
        }
        self.entries = entries
        self.trie = try builder.build()
    }

    /// The path variables of `pattern` that scope nothing of `entity` (none when one of them is
    /// its primary key: the route names one object).
    ///
    /// ```swift
    /// RouteTable.unscopedVariables(of: try RoutePattern("/repos/:owner/:repo/issues"), in: issue, convention: .snakeCase)
    /// // ["owner", "repo"] when Issue has neither attribute
    /// ```
    static func unscopedVariables(of pattern: RoutePattern, in entity: Entity, convention: KeyConvention) -> [String] {
        let attributes = pattern.variables.map { scopeAttribute(for: $0, in: entity, convention: convention) }
        if entity.primaryKeyNames.allSatisfy(attributes.contains) { return [] }
        return zip(pattern.variables, attributes).filter { $0.1 == nil }.map(\.0)
    }

    /// Why a route whose variables name no attribute cannot delete stale rows, and what would fix it.
    static func unscopedMessage(route: String, entity: Entity, variables: [String]) -> String {
        let names = variables.map { ":" + $0 }
        let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
        let plural = variables.count > 1
        return "\(route) deletes stale \(entity.name) rows, but \(list) \(plural ? "name" : "names") no attribute of "
            + "\(entity.name): it would delete the \(entity.name) rows of every \(variables.joined(separator: " and ")). "
            + "Add \(plural ? "attributes" : "an attribute") \(variables.joined(separator: " and ")) to \(entity.name) "
            + "(filled from the path)"
    }

    /// The attribute a path variable scopes: an attribute of that name, a to-one relationship's
    /// foreign key, or the attribute whose JSON key the variable is (`user_id` → `userID`).
    static func scopeAttribute(for variable: String, in entity: Entity, convention: KeyConvention) -> String? {
        if let attribute = entity.attribute(named: variable) { return attribute.name }
        if let relationship = entity.relationship(named: variable), relationship.kind == .toOne {
            return relationship.foreignKey
        }
        if variable == entity.jsonIDKey && !entity.hasCompositeKey { return entity.primaryKey }
        return entity.attributes.first { ($0.jsonKey ?? convention.jsonKey(forAttribute: $0.name)) == variable }?.name
    }

    /// The route for a method and path with its decoded variables, or `nil`.
    ///
    /// ```swift
    /// table.match(.get, "/users/3")?.route.target   // .entity("User")
    /// ```
    public func match(_ method: HTTPMethod, _ path: String) -> (entry: Entry, parameters: RouteParameters)? {
        guard let found = trie.match(method: method, path: path) else { return nil }
        return (entries[found.target], found.parameters)
    }

    /// Resolves a request to its route, variables and typed scope.
    ///
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - path: The request path; the query string and a trailing slash are ignored.
    /// - Returns: The route, the decoded variables and the scope they define.
    /// - Throws: ``RouteError/Code/noRoute`` (naming the methods the path allows, if any) or
    ///   ``RouteError/Code/invalidVariable`` when a variable does not convert to its attribute's type.
    public func resolve(_ method: HTTPMethod, _ path: String) throws(RouteError) -> RouteResolution {
        guard let (entry, parameters) = match(method, path) else {
            let allowed = trie.allowedMethods(path: path)
            var hint = allowed.isEmpty ? "" : " (the path allows \(allowed.map(\.rawValue).joined(separator: ", ")))"
            if allowed.isEmpty {
                let closest = closestRoutes(to: path)
                if !closest.isEmpty { hint = "; closest: " + closest.joined(separator: ", ") }
            }
            throw RouteError(code: .noRoute, message: "no route for \(method) \(path)\(hint)", pattern: path)
        }
        var conditions: [RouteScope.Condition] = []
        if let entity = entry.entity {
            for (variable, attributeName) in entry.scopeAttributes {
                guard let attribute = entity.attribute(named: attributeName), let text = parameters[variable] else { continue }
                guard let value = AttributeValue(text: text, type: attribute.type) else {
                    throw RouteError(code: .invalidVariable,
                                     message: "route \(entry.route.method) \(entry.pattern): variable '\(variable)' is "
                                         + "'\(text)', not a valid \(attribute.type) for \(entity.name).\(attribute.name)",
                                     pattern: entry.pattern.description)
                }
                conditions.append(RouteScope.Condition(attribute: attributeName, value: value))
            }
        }
        let scope = RouteScope(entity: entry.entity?.name ?? "", conditions: conditions, isSingleObject: entry.isSingleObject)
        return RouteResolution(entry: entry, parameters: parameters, scope: scope)
    }

    /// Builds the path of the route declared with `pattern`, percent-encoding the values.
    ///
    /// ```swift
    /// try table.path(for: "/users/:userID/posts", values: ["userID": "3"])   // "/users/3/posts"
    /// ```
    ///
    /// - Throws: ``RouteError`` `.invalidPattern`, or `.missingVariable` naming the variable.
    public func path(for pattern: String, values: [String: String]) throws(RouteError) -> String {
        try RoutePattern(pattern).path(with: values)
    }
}

/// A request resolved by a ``RouteTable``: its route, variables and scope.
public struct RouteResolution: Sendable {
    /// The matched route.
    public let entry: RouteTable.Entry
    /// The decoded path variables.
    public let parameters: RouteParameters
    /// The rows the response speaks for.
    public let scope: RouteScope

    /// The declared route.
    public var route: Route { entry.route }
}
