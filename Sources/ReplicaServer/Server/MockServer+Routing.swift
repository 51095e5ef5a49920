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
/// Other paths under a resource go to its controller's `custom(_:)`.
extension MockServer {
    struct Routed {
        var resource: MockResource
        var action: MockAction?
        var id: JSONValue?
        var parent: MockRequest.ParentReference?
        var keyPrefix: JSONObject = [:]
    }

    func route(method: String, segments: [String], snapshot: Registry) throws -> Routed {
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
