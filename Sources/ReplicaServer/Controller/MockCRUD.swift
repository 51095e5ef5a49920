/// RESTEasy's CRUD actions over a request's store and serializer; controllers call these for the defaults.
///
/// ```swift
/// let response = try await MockCRUD.show(request)
/// ```
public enum MockCRUD {
    /// Lists a page of the collection (children of the parent on a nested route, the objects with
    /// the leading parts of a composite key on `/refs/:owner/:repo`), with `X-Total-Count` and, when
    /// paged, a `Link` header; in the route's, resource's or server's paging style (``MockPagination``:
    /// `?limit=10&starting_after=7` answers `{"object": "list", "has_more": …, "data": [...]}` in Stripe's).
    ///
    /// ```swift
    /// let response = try await MockCRUD.index(request) // 200 [...]
    /// ```
    /// - Parameters:
    ///   - request: the routed request.
    /// - Returns: 200 with the serialized collection.
    /// - Throws: `MockHTTPError` 400 for bad query parameters (`invalidPage` naming a bad paging one), 404 for
    ///   a missing parent.
    public static func index(_ request: MockRequest) async throws -> MockResponse {
        try await index(request, rendering: false)
    }

    /// The index; with `rendering`, the page is written straight from the store's rows to bytes
    /// (``MockResponse/rendered``, `body` nil) instead of through `JSONValue` and the serializer. The
    /// server asks for that only when the bytes are the same (``PassThroughSerializer``) and no one
    /// sees the body (``CRUDController``, no body fault).
    static func index(_ request: MockRequest, rendering: Bool) async throws -> MockResponse {
        var collection = try MockCollectionQuery(request)
        // `/refs/octocat/Hello-World`: the leading parts of a composite key filter first.
        let prefix = request.resource.primaryKey.parts.compactMap { part in
            request.keyPrefix[part.name].map { MockQuery.Filter(property: part.name, value: $0) }
        }
        collection.query.filters.insert(contentsOf: prefix, at: 0)
        // `GET /users/7/posts` on an API route: the path's values filter too.
        let scoped = request.scope.keys.sorted().compactMap { name in
            request.scope[name].map { MockQuery.Filter(property: name, value: $0) }
        }
        collection.query.filters.insert(contentsOf: scoped, at: 0)
        if let since = request.query("since"), request.changes != nil {
            return try await changes(request, since: since, filters: collection.query.filters)
        }
        // Taken before the store is read: a write the page misses comes again after this cursor.
        let cursor = request.changes?.cursor(for: request.resource.name)
        if let parent = request.parent { try await requireParent(parent, request) }
        // Cursor, Stripe, Jira, JSON:API… (`MockPagination`): a page in the style's shape.
        if request.paging.style != .link {
            return try await styledIndex(request, collection: collection, feedCursor: cursor)
        }
        let total: Int
        var body: JSONValue?
        var rendered: MockRenderedBody?
        if rendering {
            let renderer = MockPageRenderer(resource: request.resource, envelope: request.envelope)
            let page = try await renderer.page(from: request.store, query: collection.query,
                                               parent: request.parent.map { (parent: $0.parent, id: $0.id) })
            total = page.total
            rendered = page.body
        } else {
            let page: MockPage
            if let parent = request.parent {
                page = try await request.store.children(request.resource, of: parent.parent, id: parent.id, query: collection.query)
            } else {
                page = try await request.store.objects(request.resource, query: collection.query)
            }
            total = page.total
            var serialized = request.serializer.serialize(collection: page.objects.map(request.resource.wire), of: request.resource)
            if let envelope = request.envelope {
                for key in envelope.split(separator: ".").reversed() { serialized = .object([String(key): serialized]) }
            }
            body = serialized
        }
        var headers: [(name: String, value: String)] = [(name: "X-Total-Count", value: String(total))]
        if let cursor { headers.append((name: "X-Cursor", value: cursor)) }
        if let link = collection.linkHeader(total: total, request: request) { headers.append((name: "Link", value: link)) }
        var response = MockResponse(status: 200, headers: headers, body: body)
        response.rendered = rendered
        return response
    }

    /// Shows one object.
    ///
    /// ```swift
    /// let response = try await MockCRUD.show(request) // 200 {...} or 404
    /// ```
    /// - Parameters:
    ///   - request: the routed request with an `id`.
    /// - Returns: 200 with the serialized object.
    /// - Throws: `MockHTTPError` 404 when there is no such object.
    public static func show(_ request: MockRequest) async throws -> MockResponse {
        let id = try requireID(request)
        guard let object = try await request.store.object(request.resource, id: id) else { throw notFound(request, id) }
        return versionTagged(.json(request.serializer.serialize(object: request.resource.wire(object), of: request.resource)), object, request)
    }

    /// Creates an object from the body's known properties (the parent key set from a nested route,
    /// the leading parts of a composite key from `/refs/:owner/:repo`); nested to-one objects
    /// (``MockResource/toOne``) are upserted into their own resources first.
    ///
    /// ```swift
    /// let response = try await MockCRUD.create(request) // 201 {...}
    /// ```
    /// - Parameters:
    ///   - request: the routed request.
    /// - Returns: 201 with the created object (missing properties null) and a `Location` header.
    /// - Throws: `MockHTTPError` 400 `emptyBody` for a request without a body, 422 for field errors (a
    ///   composite key's missing part among them), 404 for a missing parent, 409 for a taken key.
    public static func create(_ request: MockRequest) async throws -> MockResponse {
        let parameters = request.serializer.deserialize(parameters: try requireBody(request), of: request.resource)
        var values = try request.resource.harvest(parameters, keepingKey: true)
        // Nested to-one objects go to their own resources; the foreign keys point at them.
        values = try await request.resource.storingToOne(values, existing: nil, resources: request.resources, store: request.store)
        if let parent = request.parent {
            try await requireParent(parent, request)
            values[parent.parent.key] = parent.id
        }
        // The path's parts of a composite key, and an API route's values, win over the body's.
        for (name, value) in request.keyPrefix { values[name] = value }
        for (name, value) in request.scope { values[name] = value }
        // The server numbers versions.
        if let version = request.resource.versionProperty { values[version] = .int(1) }
        let object = try await request.store.create(request.resource, values: values)
        var headers: [(name: String, value: String)] = []
        if let path = request.memberRoute?.path(of: object) {
            headers.append((name: "Location", value: path))
        } else if let id = request.resource.primaryKey.key(of: object) {
            headers.append(location(request, id))
        }
        return versionTagged(MockResponse(status: 201, headers: headers,
                                          body: request.serializer.serialize(object: request.resource.wire(object), of: request.resource)),
                             object, request)
    }

    /// The answer with the object's version as its `ETag`, for a resource that numbers versions.
    static func versionTagged(_ response: MockResponse, _ object: JSONObject, _ request: MockRequest) -> MockResponse {
        guard let property = request.resource.versionProperty, let version = object[property], !version.isNull else { return response }
        var response = response
        response.headers.append((name: "ETag", value: MockServer.tag(of: object, request)))
        return response
    }

    /// Merges the body's known properties into an object (`PUT` and `PATCH` alike): properties the body
    /// leaves out keep their values, nested ones too (`{"address": {"city": "Lyon"}}` leaves `address.zip`).
    /// A `PUT` to the whole key of a composite-key object that does not exist creates it (201 with a
    /// `Location`) when the resource allows creating.
    ///
    /// ```swift
    /// let response = try await MockCRUD.update(request) // 200 {...}
    /// ```
    /// - Parameters:
    ///   - request: the routed request with an `id`.
    /// - Returns: 200 with the updated object (201 with a created one).
    /// - Throws: `MockHTTPError` 400 `emptyBody` for a request without a body, 422 for field errors, 404 when
    ///   there is no such object.
    public static func update(_ request: MockRequest) async throws -> MockResponse {
        let id = try requireID(request)
        let parameters = request.serializer.deserialize(parameters: try requireBody(request), of: request.resource)
        var values = try request.resource.harvest(parameters, keepingKey: false)
        if !request.resource.toOne.isEmpty {
            let existing = request.resource.needsExistingForToOne(values) ? try await request.store.object(request.resource, id: id) : nil
            values = try await request.resource.storingToOne(values, existing: existing, resources: request.resources,
                                                             store: request.store)
        }
        if let version = request.resource.versionProperty {
            // The server numbers versions: one more than the object's (updates of one object take turns).
            values[version] = nil
            if case .int(let current)? = try await request.store.object(request.resource, id: id)?[version] {
                values[version] = .int(current + 1)
            }
        }
        guard let object = try await request.store.modify(request.resource, id: id, values: values) else {
            if let version = request.resource.versionProperty { values[version] = .int(1) }
            return try await putCreate(request, id: id, values: values)
        }
        return versionTagged(.json(request.serializer.serialize(object: request.resource.wire(object), of: request.resource)), object, request)
    }

    /// A `PUT` to the whole key of a composite-key object that does not exist creates it (201), when the
    /// resource allows creating: its key is all in the path, so `PUT` is how a client that names
    /// objects by key (Replica's `save`) makes one. Anything else is a 404.
    private static func putCreate(_ request: MockRequest, id: JSONValue, values: JSONObject) async throws -> MockResponse {
        let key = request.resource.primaryKey
        guard request.method == "PUT", key.kind == .composite, request.resource.actions.contains(.create),
              let parts = key.values(of: id) else { throw notFound(request, id) }
        var values = values
        for part in parts { values[part.property.name] = part.value }
        let object: JSONObject
        do {
            object = try await request.store.create(request.resource, values: values)
        } catch let error as MockHTTPError where error.status == 409 {
            // Created by another request since `modify` missed it: this PUT updates it after all.
            guard let updated = try await request.store.modify(request.resource, id: id, values: values) else { throw error }
            return versionTagged(.json(request.serializer.serialize(object: request.resource.wire(updated), of: request.resource)),
                                 updated, request)
        }
        return versionTagged(MockResponse(status: 201, headers: [location(request, id)],
                                          body: request.serializer.serialize(object: request.resource.wire(object), of: request.resource)),
                             object, request)
    }

    /// `Location: /people/7`, or `/refs/octocat/Hello-World/refs%2Fheads%2Fmain` for a composite key.
    private static func location(_ request: MockRequest, _ id: JSONValue) -> (name: String, value: String) {
        (name: "Location", value: "/\(PercentEncoding.encode(request.resource.name, allowed: .unreserved))/\(request.resource.primaryKey.path(of: id))")
    }

    /// Deletes an object.
    ///
    /// ```swift
    /// let response = try await MockCRUD.destroy(request) // 204
    /// ```
    /// - Parameters:
    ///   - request: the routed request with an `id`.
    /// - Returns: 204 without a body.
    /// - Throws: `MockHTTPError` 404 when there is no such object.
    public static func destroy(_ request: MockRequest) async throws -> MockResponse {
        let id = try requireID(request)
        guard try await request.store.delete(request.resource, id: id) else { throw notFound(request, id) }
        return .noContent
    }

    private static func requireID(_ request: MockRequest) throws -> JSONValue {
        guard let id = request.id else { throw MockHTTPError.notFound("\(request.path): no id in the route") }
        return id
    }

    /// The body of a create or update; a request with none (no bytes) is 400, not a 422 about its properties.
    private static func requireBody(_ request: MockRequest) throws -> JSONValue {
        guard let body = request.body else { throw MockHTTPError.badRequest("empty body", code: "emptyBody") }
        return body
    }

    private static func requireParent(_ parent: MockRequest.ParentReference, _ request: MockRequest) async throws {
        guard try await request.store.object(parent.resource, id: parent.id) != nil else {
            throw MockHTTPError.notFound("no \(parent.resource.name) with id \(parent.id.stringValue ?? parent.id.serialized())")
        }
    }

    private static func notFound(_ request: MockRequest, _ id: JSONValue) -> MockHTTPError {
        guard request.resource.primaryKey.kind == .composite, let parts = request.resource.primaryKey.values(of: id) else {
            return .notFound("no \(request.resource.name) with id \(id.stringValue ?? id.serialized())")
        }
        // no refs with owner octocat, repo Hello-World, ref refs/heads/gone
        let named = parts.map { "\($0.property.name) \($0.value.stringValue ?? $0.value.serialized())" }
        return .notFound("no \(request.resource.name) with \(named.joined(separator: ", "))")
    }
}
