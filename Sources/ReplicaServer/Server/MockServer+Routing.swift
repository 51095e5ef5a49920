/// RESTEasy's route table with shallow nesting, resolved per request against the live resources.
///
/// | route | action |
/// |---|---|
/// | `GET /people` | index |
/// | `POST /people` | create |
/// | `GET /people/:id` | show |
/// | `PUT`, `PATCH /people/:id` | update |
/// | `DELETE /people/:id` | destroy |
/// | `GET /people/:id/cars` | index of the children |
/// | `POST /people/:id/cars` | create a child (parent key set) |
///
/// A resource with a composite key (`owner`, `repo`, `ref`) takes one segment per part, and its
/// leading parts alone name a part of the collection:
///
/// | route | action |
/// |---|---|
/// | `GET`, `POST /refs` | index, create |
/// | `GET /refs/:owner/:repo/:ref` | show (`PUT`, `PATCH`, `DELETE` alike) |
/// | `GET /refs/:owner`, `GET /refs/:owner/:repo` | index of the objects with those parts |
/// | `POST /refs/:owner/:repo` | create with those parts set |
///
/// Other paths under a resource go to its controller's `custom(_:)`. An API's own routes
/// (``MockRoute``: `GET /pet/:petId`, `POST /pet`) are tried first.
extension MockServer {
    struct Routed {
        var resource: MockResource
        var action: MockAction?
        var id: JSONValue?
        var parent: MockRequest.ParentReference?
        var keyPrefix: JSONObject = [:]
        /// The values an API route's path gives a collection (`/users/7/posts` → `user_id` 7).
        var scope: JSONObject = [:]
        /// The values of an API route naming one object by other properties than its key (`/user/alice`).
        var lookup: JSONObject?
        /// An update on an API route without the key in its path (`PUT /pet`): the key is in the body.
        var keyInBody = false
        /// The API route that answers `GET` for one object by key, for `Location` headers.
        var memberRoute: CompiledMockRoute?
        /// The key wrapping an API route's index.
        var envelope: String?
        /// Whether an API route matched (its update may take its fields from the query).
        var isAPIRoute = false
        /// An API route's own paging style.
        var pagination: MockPagination?
    }

    func route(method: String, segments: [String], snapshot: Registry) throws -> Routed {
        var refusal: MockHTTPError?
        do {
            if let routed = try routeAPI(method: method, segments: segments, snapshot: snapshot) { return routed }
        } catch let error as MockHTTPError where error.status == 405 {
            refusal = error
        }
        do {
            return try routeRESTEasy(method: method, segments: segments, snapshot: snapshot)
        } catch let error as MockHTTPError where error.status == 404 {
            // The API's path with a method it does not take: 405 with its methods, not RESTEasy's 404.
            throw refusal ?? error
        }
    }

    /// The API route for a request, matched by the core's routing (``MockRouteTable``: a literal
    /// segment wins over a variable); nil when no template matches the path.
    /// - Throws: 405 when templates match the path but none takes the method (RESTEasy's routes are tried next).
    private func routeAPI(method: String, segments: [String], snapshot: Registry) throws -> Routed? {
        let table = snapshot.routeTable
        guard !table.routes.isEmpty else { return nil }
        // The segments as decoded (a format extension dropped), encoded again for the trie to split and decode.
        let path = "/" + segments.map { PercentEncoding.encode($0, allowed: .unreserved) }.joined(separator: "/")
        guard let requestMethod = HTTPMethod(rawValue: method), let best = table.match(method: requestMethod, path: path) else {
            let allowed = table.allowedMethods(path: path).map(\.rawValue)
            guard !allowed.isEmpty else { return nil }
            var error = MockHTTPError(status: 405, code: "methodNotAllowed",
                                      message: "\(method) is not allowed here; allowed: \(allowed.joined(separator: ", "))")
            error.allow = allowed
            throw error
        }
        let route = best.route
        guard let resource = snapshot.resources[route.route.resource] else { return nil }
        guard let action = route.action(for: method) else {
            throw MockHTTPError(status: 405, code: "methodNotAllowed", message: "\(method) \(route.route.path) names no object")
        }
        try pick(method, [method: action], resource: resource)
        var routed = Routed(resource: resource, action: action)
        routed.isAPIRoute = true
        routed.envelope = route.route.envelope
        routed.pagination = route.route.pagination
        routed.memberRoute = table.routes.first {
            $0.route.resource == resource.name && $0.route.method == "GET" && $0.target == .key
        }
        let values = best.values
        switch route.target {
        case .key:
            let key = resource.primaryKey
            routed.id = key.kind == .composite ? .array(key.parts.compactMap { values[$0.name] }) : values[key.name]
        case .lookup:
            routed.lookup = values
        case .collection:
            if action == .update { routed.keyInBody = true }
            // `/users/:user_id/posts` under a parent is the parent's children: 404 for a missing parent.
            if values.count == 1, let name = values.keys.first, let id = values[name], let parent = resource.parents.first(where: { $0.key == name }),
               let parentResource = snapshot.resources[parent.resource] {
                routed.parent = MockRequest.ParentReference(parent: parent, resource: parentResource, id: id)
            } else {
                routed.scope = values
            }
        }
        return routed
    }

    /// RESTEasy's routes.
    private func routeRESTEasy(method: String, segments: [String], snapshot: Registry) throws -> Routed {
        guard let first = segments.first, let resource = snapshot.resources[first] else {
            throw MockHTTPError.notFound("no route for \(method) /\(segments.joined(separator: "/"))")
        }
        if resource.primaryKey.kind == .composite { return try routeComposite(method: method, segments: segments, resource: resource) }
        switch segments.count {
        case 1:
            let action = try pick(method, ["GET": .index, "POST": .create], resource: resource)
            return Routed(resource: resource, action: action)
        case 2:
            let action = try pick(method, ["GET": .show, "PUT": .update, "PATCH": .update, "DELETE": .destroy], resource: resource)
            guard let id = resource.primaryKey.parse(segments[1]) else {
                throw MockHTTPError.notFound("no \(resource.name) with id \(segments[1])")
            }
            return Routed(resource: resource, action: action, id: id)
        case 3:
            if let child = snapshot.resources[segments[2]], let parent = child.parent(named: resource.name) {
                let action = try pick(method, ["GET": .index, "POST": .create], resource: child)
                guard let parentID = resource.primaryKey.parse(segments[1]) else {
                    throw MockHTTPError.notFound("no \(resource.name) with id \(segments[1])")
                }
                return Routed(resource: child, action: action,
                              parent: MockRequest.ParentReference(parent: parent, resource: resource, id: parentID))
            }
            fallthrough
        default:
            return Routed(resource: resource, action: nil, id: resource.primaryKey.parse(segments[1]))
        }
    }

    /// The routes of a composite-key resource: the whole key is a member, its leading parts a
    /// part of the collection, a longer path custom. A composite-key resource is never a parent
    /// (a Replica schema refuses a relationship to one), so no child route competes.
    private func routeComposite(method: String, segments: [String], resource: MockResource) throws -> Routed {
        let parts = resource.primaryKey.parts
        var values: [JSONValue] = []
        for (segment, part) in zip(segments.dropFirst(), parts) {
            guard let value = MockPrimaryKey.parse(segment, as: part) else {
                throw MockHTTPError.notFound("no \(resource.name) with \(part.name) \(segment)")
            }
            values.append(value)
        }
        let given = segments.count - 1
        if given == 0 {
            return Routed(resource: resource, action: try pick(method, ["GET": .index, "POST": .create], resource: resource))
        }
        if given < parts.count {
            var prefix = JSONObject()
            for (part, value) in zip(parts, values) { prefix[part.name] = value }
            return Routed(resource: resource, action: try pick(method, ["GET": .index, "POST": .create], resource: resource),
                          keyPrefix: prefix)
        }
        if given == parts.count {
            let action = try pick(method, ["GET": .show, "PUT": .update, "PATCH": .update, "DELETE": .destroy], resource: resource)
            return Routed(resource: resource, action: action, id: .array(values))
        }
        return Routed(resource: resource, action: nil, id: .array(values))
    }

    /// The action for `method` among a path's methods, or 405 with the allowed methods.
    @discardableResult
    private func pick(_ method: String, _ table: [String: MockAction], resource: MockResource) throws -> MockAction {
        if let action = table[method], resource.actions.contains(action.mask) { return action }
        let order = ["GET", "POST", "PUT", "PATCH", "DELETE"]
        let allowed = order.filter { table[$0].map { resource.actions.contains($0.mask) } ?? false }
        var error = MockHTTPError(status: 405, code: "methodNotAllowed",
                                  message: "\(method) is not allowed here; allowed: \(allowed.isEmpty ? "none" : allowed.joined(separator: ", "))")
        error.allow = allowed
        throw error
    }
}
