import Foundation

extension ReplicaClient {
    /// The route that shows one object of `entity` (its variables include the primary key).
    func showRoute(_ entity: Entity) throws -> RouteTable.Entry {
        guard let entry = engine.routes.entries.first(where: {
            $0.route.method == .get && $0.entity?.name == entity.name && $0.isSingleObject
        }) else {
            throw ClientError(.invalidRequest, "no GET route shows one \(entity.name) (a path with its primary key as a variable)")
        }
        return entry
    }

    /// The route that lists `entity` without a scope.
    func indexRoute(_ entity: Entity) throws -> RouteTable.Entry {
        guard let entry = engine.routes.entries.first(where: {
            $0.route.method == .get && $0.entity?.name == entity.name && $0.scopeAttributes.isEmpty
        }) else {
            throw ClientError(.invalidRequest, "no GET route lists \(entity.name) without a scope")
        }
        return entry
    }

    func variables(of entry: RouteTable.Entry, key: AttributeValue) -> [String: Parameter] {
        var params: [String: Parameter] = [:]
        for (variable, attribute) in entry.scopeAttributes where attribute == entry.entity?.primaryKey {
            params[variable] = Parameter(key)
        }
        return params
    }

    /// Fetches one object through its show route, syncs it, and returns the stored row (ApiModel's `find`).
    ///
    /// ```swift
    /// let post = try await client.find("Post", id: .integer(7))
    /// ```
    ///
    /// - Returns: The row, or `nil` when the server had no such object (404).
    /// - Throws: ``ClientError`` (other than 404) or ``SyncError``.
    public func find(_ entityName: String, id: AttributeValue) async throws -> EntityRow? {
        let entity = try engine.store.requireEntity(entityName)
        let route = try showRoute(entity)
        do {
            try await call(route.pattern.description, params: variables(of: route, key: id))
        } catch let error as ClientError where error.status == 404 {
            return nil
        }
        return try await engine.store.rows(RowQuery(entity.name, where: "\(entity.primaryKey.quotedIdentifier) = ?",
                                                    arguments: [id])).first
    }

    /// Fetches the whole collection through the index route (following pages) and returns the stored rows.
    ///
    /// ```swift
    /// let people = try await client.findAll("Person")
    /// ```
    ///
    /// - Throws: ``ClientError`` or ``SyncError``.
    public func findAll(_ entityName: String, params: [String: Parameter] = [:]) async throws -> [EntityRow] {
        let entity = try engine.store.requireEntity(entityName)
        try await call(try indexRoute(entity).pattern.description, params: params)
        return try await engine.store.rows(RowQuery(entity.name))
    }

    /// Saves an object: POST to the index route when it has no primary key, PUT to the show route
    /// when it has one; the body is the values under their JSON keys, in the entity's namespace;
    /// the object the server returns is upserted and its stored row returned (ApiModel's `save`).
    ///
    /// ```swift
    /// let saved = try await client.save("Person", ["name": .string("john"), "numberOfKids": .integer(1)])
    /// saved?["id"]   // .integer(1), assigned by the server
    /// ```
    ///
    /// - Returns: The stored row, or `nil` when the server returned no object.
    /// - Throws: ``ClientError`` (a 422 carries `fieldErrors`) or ``SyncError``.
    @discardableResult
    public func save(_ entityName: String, _ values: [String: AttributeValue]) async throws -> EntityRow? {
        let entity = try engine.store.requireEntity(entityName)
        let map = try engine.mapping.requireMap(entity.name)
        let body = map.encode(values, wrapped: entity.namespace != nil)
        let params = Dictionary(uniqueKeysWithValues: body.members.map { ($0.key, Parameter.value($0.value)) })
        let result: CallResult
        if let key = values[entity.primaryKey], !key.isNull {
            let route = try showRoute(entity)
            let path = try route.pattern.path(with: variables(of: route, key: key).compactMapValues(\.text))
            result = try await call(path, method: .put, params: params, options: SyncOptions(collectKeys: true))
        } else {
            result = try await call(try indexRoute(entity).pattern.description, method: .post, params: params,
                                    options: SyncOptions(collectKeys: true))
        }
        guard let key = result.sync.seenKeys.values.first ?? values[entity.primaryKey] else { return nil }
        return try await engine.store.rows(RowQuery(entity.name, where: "\(entity.primaryKey.quotedIdentifier) = ?",
                                                    arguments: [key])).first
    }

    /// Deletes an object through its show route's path, then its stored row.
    ///
    /// ```swift
    /// try await client.delete("Person", id: .integer(1))
    /// ```
    ///
    /// - Throws: ``ClientError`` or ``SyncError``.
    public func delete(_ entityName: String, id: AttributeValue) async throws {
        let entity = try engine.store.requireEntity(entityName)
        let route = try showRoute(entity)
        let path = try route.pattern.path(with: variables(of: route, key: id).compactMapValues(\.text))
        try await call(path, method: .delete)
    }
}
