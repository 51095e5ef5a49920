import Foundation
import ReplicaCore

extension ReplicaClient {
    /// The route that shows one object of `entity` by key (its variables include the primary key,
    /// every part of a composite one), or `nil`.
    func keyedRoute(_ entity: Entity) -> RouteTable.Entry? {
        store.routes.entries.first { entry in
            entry.route.method == .get && entry.entity?.name == entity.name
                && entity.primaryKeyNames.allSatisfy { part in entry.scopeAttributes.contains { $0.attribute == part } }
        }
    }

    /// The entity's singleton route (`GET /user.json`), or `nil`.
    func singletonRoute(_ entity: Entity) -> RouteTable.Entry? {
        store.routes.entries.first { $0.route.method == .get && $0.entity?.name == entity.name && $0.route.singleton }
    }

    /// The path of one object of `entity`: its show route filled with `key`, else (an entity
    /// shown by a singleton route) the singleton's path.
    func objectPath(_ entity: Entity, key: AttributeValue) throws -> (path: String, singleton: Bool) {
        if let route = keyedRoute(entity) {
            return (try route.pattern.path(with: try variables(of: route, key: key).compactMapValues(\.text)), false)
        }
        if let route = singletonRoute(entity) {
            return (try route.pattern.path(with: [String: String]()), true)
        }
        throw ClientError(.invalidRequest, "no GET route shows one \(entity.name) (a path with its primary key as a variable, "
                          + "or a singleton route)")
    }

    /// The route that lists `entity` without a scope.
    func indexRoute(_ entity: Entity) throws -> RouteTable.Entry {
        guard let entry = store.routes.entries.first(where: {
            $0.route.method == .get && $0.entity?.name == entity.name && $0.scopeAttributes.isEmpty && !$0.route.singleton
        }) else {
            throw ClientError(.invalidRequest, "no GET route lists \(entity.name) without a scope")
        }
        return entry
    }

    /// The route's key variables filled with `key` (a composite key's parts, each in its variable).
    func variables(of entry: RouteTable.Entry, key: AttributeValue) throws -> [String: Parameter] {
        guard let entity = entry.entity else { return [:] }
        if let problem = entity.keyProblem(key) { throw ClientError(.invalidRequest, problem) }
        let parts = entity.hasCompositeKey ? key.compositeKeyParts ?? [] : [key]
        var params: [String: Parameter] = [:]
        for (variable, attribute) in entry.scopeAttributes {
            guard let position = entity.primaryKeyNames.firstIndex(of: attribute), position < parts.count else { continue }
            params[variable] = Parameter(parts[position])
        }
        return params
    }

    /// The stored row of `entity` whose primary key is `key`, or `nil`.
    func storedRow(_ entity: Entity, key: AttributeValue) async throws -> EntityRow? {
        let (sql, arguments) = entity.keyCondition(key)
        return try await store.rows(RowQuery(entity.name, where: sql, arguments: arguments)).first
    }

    /// Fetches one object through its show route, syncs it, and returns the stored row (ApiModel's `find`).
    ///
    /// The show route is the entity's GET route whose variables include its primary key (every
    /// part of a composite key), whatever else its segments hold (`/posts/:id`, `/post/:id.json`,
    /// `/repos/:owner/:repo/git/refs/:ref`). A part holding a `/` is percent-encoded into its segment.
    ///
    /// ```swift
    /// let post = try await client.find("Post", id: .integer(7))   // GET /post/7.json
    /// let main = try await client.find("Ref", id: .compositeKey([.string("octocat"), .string("Hello-World"),
    ///                                                           .string("refs/heads/main")]))
    /// // GET /repos/octocat/Hello-World/git/refs/refs%2Fheads%2Fmain
    /// ```
    ///
    /// - Returns: The row, or `nil` when the server had no such object (404).
    /// - Throws: ``ClientError`` (other than 404, or when the entity has no show route) or ``SyncError``.
    public func find(_ entityName: String, id: AttributeValue) async throws -> EntityRow? {
        let entity = try store.requireEntity(entityName)
        guard let route = keyedRoute(entity) else {
            throw ClientError(.invalidRequest, "no GET route shows one \(entity.name) (a path with its primary key as a variable)"
                              + (singletonRoute(entity).map { "; \($0.pattern) is a singleton: find(\"\(entity.name)\")" } ?? ""))
        }
        let params = try variables(of: route, key: id)
        do {
            try await call(route.pattern.description, params: params)
        } catch let error as ClientError where error.status == 404 {
            return nil
        }
        return try await storedRow(entity, key: id)
    }

    /// Fetches the object of the entity's singleton route (ApiModel's singleton resource:
    /// `GET /user.json`, the signed-in user), syncs it, and returns its stored row.
    ///
    /// ```swift
    /// // schema: {"path": "/user.json", "target": "User", "singleton": true}
    /// let me = try await client.find("User")
    /// me?["name"]   // .string("Ada")
    /// ```
    ///
    /// - Returns: The row of the object the server answered, or `nil` for a 404 or an empty body.
    /// - Throws: ``ClientError`` (other than 404, or when the entity has no singleton route) or ``SyncError``.
    public func find(_ entityName: String) async throws -> EntityRow? {
        let entity = try store.requireEntity(entityName)
        guard let route = singletonRoute(entity) else {
            throw ClientError(.invalidRequest, "no singleton GET route for \(entity.name) (a route with \"singleton\": true); "
                              + "find(\"\(entity.name)\", id:) reads one object by key")
        }
        let result: CallResult
        do {
            result = try await call(route.pattern.description, options: SyncOptions(collectKeys: true))
        } catch let error as ClientError where error.status == 404 || error.code == .emptyBody {
            return nil
        }
        guard let key = result.sync.seenKeys.values.first else { return nil }
        return try await storedRow(entity, key: key)
    }

    /// Fetches the collection through the index route (following pages) and returns the rows of
    /// that response, in its order (ApiModel's `findAll(params)`): with `params` filtering on the
    /// server, only the rows it answered, not the whole table. Pages answering 304 count with the
    /// keys they held.
    ///
    /// ```swift
    /// let people = try await client.findAll("Person")
    /// let johns = try await client.findAll("Person", params: ["name": "john"])
    /// ```
    ///
    /// - Throws: ``ClientError`` or ``SyncError``.
    public func findAll(_ entityName: String, params: [String: Parameter] = [:]) async throws -> [EntityRow] {
        let entity = try store.requireEntity(entityName)
        let result = try await call(try indexRoute(entity).pattern.description, params: params,
                                    options: SyncOptions(collectKeys: true))
        let keys = result.sync.seenKeys.values
        guard !keys.isEmpty else { return [] }
        var rows: [EntityRow] = []
        for chunk in liveKeyChunks(keys, of: entity) {
            rows += try await store.rows(RowQuery(entity.name, where: chunk.condition, arguments: chunk.arguments))
        }
        // In the response's order.
        var position: [ExactKey: Int] = [:]
        for (index, key) in keys.enumerated() where position[ExactKey(key)] == nil { position[ExactKey(key)] = index }
        return rows.sorted { (position[ExactKey($0.primaryKey)] ?? 0) < (position[ExactKey($1.primaryKey)] ?? 0) }
    }

    /// Saves an object: POST (to the entity's POST route, else its index route) when it has no
    /// primary key, PUT to the show route when it has one (every part of a composite key); the body is the values under their JSON
    /// keys, in the entity's namespace, dates in ``ClientConfiguration/timeZone``.
    ///
    /// The server's reply is merged into the values sent, as ApiModel updates a model from its
    /// reply: what the reply gives wins, what it leaves out keeps the value sent (a reply of
    /// `{"post": {"id": 1}}` stores the `title` that was sent); an empty reply to a PUT stores the
    /// values sent. The merged object is upserted in one transaction, and its stored row returned.
    ///
    /// ```swift
    /// let saved = try await client.save("Person", ["name": .string("john"), "numberOfKids": .integer(1)])
    /// saved?["id"]   // .integer(1), assigned by the server
    /// ```
    ///
    /// - Returns: The stored row, or `nil` when the server returned no object and the values have
    ///   no primary key.
    /// - Throws: ``ClientError`` (a 422 carries `fieldErrors`) or ``SyncError``; the store is then
    ///   unchanged.
    ///
    /// With `files`, the request is `multipart/form-data`: the values as fields (inside the
    /// namespace, `post[title]`) beside the files, keyed by attribute name or JSON key, each streamed
    /// from disk as it is sent.
    @discardableResult
    public func save(_ entityName: String, _ values: [String: AttributeValue],
                     files: [String: FileUpload] = [:]) async throws -> EntityRow? {
        let entity = try store.requireEntity(entityName)
        let map = try store.mapping.requireMap(entity.name)
        let wrapped = entity.namespace != nil
        let body = map.encode(values, wrapped: wrapped, timeZone: configuration.timeZone)
        var params = Dictionary(uniqueKeysWithValues: body.members.map { ($0.key, Parameter.value($0.value)) })
        if !files.isEmpty {
            // A file goes under its attribute's JSON key, inside the namespace when there is one.
            var fields: [String: Parameter] = [:]
            let object = wrapped ? body.members.first?.value.objectValue ?? JSONObject() : body
            for (key, value) in object { fields[key] = Parameter(json: value) }
            for (name, file) in files {
                let key = map.attributes.first { $0.name == name }?.jsonPath.last ?? name
                fields[key] = .file(file)
            }
            params = wrapped ? [entity.namespace ?? "": .object(fields)] : fields
        }
        let prepared: Prepared
        let method: HTTPMethod
        if let key = entity.key(from: { values[$0] }) {
            method = .put
            prepared = try await prepare(try objectPath(entity, key: key).path, method: .put, params: params)
        } else {
            method = .post
            // A POST route of its own (`POST /posts`), else the index route's path, else (a singleton
            // resource) the singleton's.
            let create = store.routes.entries.first {
                $0.route.method == .post && $0.entity?.name == entity.name && $0.scopeAttributes.isEmpty
            }
            let target = try create ?? (try? indexRoute(entity)) ?? singletonRoute(entity) ?? indexRoute(entity)
            prepared = try await prepare(target.pattern.description, method: .post, params: params)
        }
        let request = try await self.request(for: prepared, headers: HeaderFields())
        let (response, bytes) = try await sendCollecting(request)
        let reply = try Self.json(of: bytes, response: response, request: request)

        // The reply's object (inside the namespace when it has one), completed with the values sent.
        let sent = wrapped ? body.members.first?.value.objectValue ?? JSONObject() : body
        var merged: JSONObject
        var rewrap = false
        switch reply {
        case .object(let object)?:
            (merged, rewrap) = Self.unwrapped(object, of: entity)
        case nil where method == .put:
            merged = JSONObject()
            rewrap = wrapped
        default:
            // Not one object (an array, a scalar), or nothing for a POST: synced as it came.
            if let reply { try await syncSaved(reply, prepared: prepared) }
            return nil
        }
        for (key, value) in sent where merged[key] == nil { merged[key] = value }
        let object: JSONValue = rewrap ? .object([entity.namespace ?? "": .object(merged)]) : .object(merged)
        let result = try await syncSaved(object, prepared: prepared)
        guard let key = result.seenKeys.values.first ?? entity.key(from: { values[$0] }) else { return nil }
        return try await storedRow(entity, key: key)
    }

    /// A reply's object out of the entity's namespace (`{"post": {...}}`), and whether it was in it.
    static func unwrapped(_ object: JSONObject, of entity: Entity) -> (object: JSONObject, wrapped: Bool) {
        if let namespace = entity.namespace, object.keys == [namespace], case .object(let inner)? = object[namespace] {
            return (inner, true)
        }
        return (object, false)
    }

    /// Syncs a saved object's merged JSON through the save's route, as one answer (no stale rows).
    @discardableResult
    private func syncSaved(_ json: JSONValue, prepared: Prepared) async throws -> SyncResult {
        let routePath = prepared.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? prepared.path
        let session = try store.session(prepared.syncMethod, routePath, options: SyncOptions(collectKeys: true))
        defer { session.discard() }
        _ = try await session.stage(body: Data(json.serializedBytes()), source: "\(prepared.method) \(prepared.path)")
        return try await session.commit(complete: false)
    }

    /// Deletes an object through its show route's path (a singleton's path for an entity that has
    /// no show route by key), then its stored row.
    ///
    /// ```swift
    /// try await client.delete("Person", id: .integer(1))
    /// try await client.delete("Ref", id: .compositeKey([.string("octocat"), .string("Hello-World"), .string("refs/heads/main")]))
    /// ```
    ///
    /// - Throws: ``ClientError`` or ``SyncError``.
    public func delete(_ entityName: String, id: AttributeValue) async throws {
        let entity = try store.requireEntity(entityName)
        let (path, singleton) = try objectPath(entity, key: id)
        try await call(path, method: .delete)
        // A singleton's path names no key: the call could not tell which row to drop.
        if singleton { _ = try await store.delete(entity.name, key: id) }
    }
}
