import Foundation
import ReplicaCore

extension ReplicaClient {
    /// The queued form of a typed endpoint's write: instead of sending `value`, makes the change
    /// locally and records it in the outbox (``ReplicaStore/saveLocally(_:_:)``,
    /// ``ReplicaStore/deleteLocally(_:key:)``), in one transaction, and returns at once, network or
    /// not; ``push(concurrency:)`` (or a ``ReplicaService`` that sends the outbox) sends it later
    /// through the schema's routes.
    ///
    /// The path must match a route of the schema that names an entity (the method's own route, else
    /// the path's GET route). The value is read as the entity's JSON (its namespace, JSON keys and
    /// transforms, as a response would be), and the path adds what it names: the key of a
    /// single-object path (`/posts/7`) and the scope of a nested one (`/users/3/posts` sets
    /// `userID`). A `POST` creates a row (under a temporary key when the value has none); a `PUT`
    /// or `PATCH` changes the attributes the value gives; a `DELETE` of an object's path deletes
    /// its row. Nested objects of relationships are not written locally.
    ///
    /// ```swift
    /// struct NewPost: Encodable { var title: String }
    /// let create = Endpoint<NewPost, Post>(.post, "/users/{{user-id}}/posts")
    /// let queued = try await client.performLocally(create, NewPost(title: "Offline"), pathVariables: ["user-id": "3"])
    /// print(queued)   // #1 create Post -1 (title, userID)
    /// ```
    ///
    /// - Parameters:
    ///   - endpoint: A `POST`, `PUT`, `PATCH` or `DELETE` endpoint.
    ///   - value: The request value (``Nothing`` for a `DELETE`).
    ///   - pathVariables: Values of the path's variables; the configuration's variable providers
    ///     fill the others.
    /// - Returns: The queued mutation; `nil` for a `DELETE` of a row the API has never seen
    ///   (its create not yet taken by a push: both leave the outbox, see
    ///   ``ReplicaStore/deleteLocally(_:key:)``).
    /// - Throws: ``ClientError`` `.invalidRequest` for another method, a path no route of an
    ///   entity matches, a value that is not a JSON object, or a `DELETE` or update whose path
    ///   names no object; ``SyncError`` `.invalidWrite` for values the entity cannot hold (see
    ///   ``ReplicaStore/saveLocally(_:_:)``). Nothing is written then.
    @discardableResult
    public func performLocally<Request, Response>(_ endpoint: Endpoint<Request, Response>, _ value: Request,
                                                  pathVariables: [String: String] = [:]) async throws -> Mutation? {
        let method = endpoint.method
        let named = "\(method) \(endpoint.path)"
        guard [.post, .put, .patch, .delete].contains(method) else {
            throw ClientError(.invalidRequest, "\(named): only a POST, PUT, PATCH or DELETE has a queued form")
        }
        var variables = pathVariables
        for name in endpoint.variables where variables[name] == nil {
            if let provider = configuration.variableProviders[name], let provided = try await provider() { variables[name] = provided }
        }
        let path = try EndpointPath.fill(endpoint.path, values: variables)
        let routePath = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        let resolution: RouteResolution
        do {
            resolution = try store.routes.match(method, routePath) != nil ? store.routes.resolve(method, routePath)
                : store.routes.resolve(.get, routePath)
        } catch {
            throw ClientError(.invalidRequest, "\(method) \(path): no route of the schema matches the path, so the write has no "
                              + "entity to queue for (\(error))")
        }
        guard let entity = resolution.entry.entity else {
            throw ClientError(.invalidRequest, "\(method) \(path): the route \(resolution.entry.pattern) names no entity "
                              + "(\(resolution.entry.route.target)); a queued write needs one")
        }
        let key = resolution.entry.isSingleObject ? resolution.scope.primaryKey(of: entity) : nil
        if method == .delete {
            guard let key else { throw ClientError(.invalidRequest, "\(method) \(path): the path names no one \(entity.name) to delete") }
            return try await store.deleteLocally(entity.name, key: key)
        }
        var values: [String: AttributeValue] = [:]
        if !(value is Nothing) {
            let json: JSONValue
            do {
                json = try JSONValue(parsing: [UInt8](endpoint.makeEncoder().encode(value)))
            } catch {
                throw ClientError(.invalidRequest, "cannot encode \(Request.self) for \(named): \(error)")
            }
            guard case .object(let object) = json else {
                throw ClientError(.invalidRequest, "\(Request.self) encodes to \(json.serialized().prefix(60)); a queued write of "
                                  + "\(entity.name) needs a JSON object")
            }
            let map = try store.mapping.requireMap(entity.name)
            let mapped = try map.map(Self.unwrapped(object, of: entity).object, at: .root)
            for (name, mappedValue) in zip(mapped.attributeNames, mapped.values) {
                if let mappedValue { values[name] = mappedValue }
            }
        }
        // What the path names wins over the body: the scope of a nested path, the key of an object's.
        for condition in resolution.scope.conditions where entity.attribute(named: condition.attribute) != nil {
            values[condition.attribute] = condition.value
        }
        if let key {
            for (name, part) in zip(entity.primaryKeyNames, entity.hasCompositeKey ? key.compositeKeyParts ?? [] : [key]) {
                values[name] = part
            }
        } else if method != .post {
            throw ClientError(.invalidRequest, "\(method) \(path): the path names no one \(entity.name) to change")
        }
        return try await store.saveLocally(entity.name, values)
    }
}
