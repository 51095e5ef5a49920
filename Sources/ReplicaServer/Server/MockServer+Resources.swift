import Foundation

extension MockServer {
    /// The resources being served, in the order they were added.
    public var resources: [MockResource] {
        registry.withLock { registry in registry.order.compactMap { registry.resources[$0] } }
    }

    /// Serves a resource (replacing one of the same name), preparing its storage; works while running.
    ///
    /// ```swift
    /// try await server.addResource(MockResource("tags", properties: [MockProperty("label", .string)]))
    /// ```
    /// - Parameters:
    ///   - resource: the resource.
    /// - Throws: `MockServerError` `.invalidResource` for a bad definition, `.storeFailed` from the store.
    public func addResource(_ resource: MockResource) async throws {
        try validate(resource, adding: [])
        try await register(resource)
    }

    /// Prepares the store's table of a validated resource and serves it.
    func register(_ resource: MockResource) async throws {
        try await options.store.addResource(resource)
        registry.withLock { registry in
            if registry.resources[resource.name] == nil { registry.order.append(resource.name) }
            registry.resources[resource.name] = resource
            registry.lastModified[resource.name] = MockModification(time: startedAt)
            // A replaced resource's routes are checked again; one that no longer fits it stops matching.
            registry.routeTable = MockRouteTable(registry.routes.compactMap { route in
                registry.resources[route.resource].flatMap { try? CompiledMockRoute(route, resource: $0) }
            })
        }
    }

    /// Replaces the API's own routes (see ``MockRoute``); works while running.
    ///
    /// ```swift
    /// try server.setRoutes([MockRoute("GET", "/pet/findByStatus", resource: "pets")])
    /// ```
    /// - Parameters:
    ///   - routes: the routes, each naming a served resource.
    /// - Throws: `MockServerError` `.invalidResource` for a route naming a resource not served or a
    ///   property its resource lacks, or with a path that is no ``RoutePattern``; the routes are then
    ///   left as they were.
    public func setRoutes(_ routes: [MockRoute]) throws {
        try registry.withLock { registry in
            if let stray = routes.first(where: { registry.resources[$0.resource] == nil }) {
                throw MockServerError(code: .invalidResource,
                                      message: "route \(stray.method) \(stray.path): no resource '\(stray.resource)'")
            }
            var updated = registry
            updated.routes = routes
            try updated.compileRoutes()
            registry = updated
        }
    }

    /// Stops serving a resource; with `dropData` its objects are deleted from the store too.
    ///
    /// ```swift
    /// try await server.removeResource(named: "tags")
    /// ```
    /// - Parameters:
    ///   - name: the resource name.
    ///   - dropData: also drop the resource's table or objects.
    /// - Throws: `MockServerError` `.unknownResource`, or `.storeFailed` from the store.
    public func removeResource(named name: String, dropData: Bool = false) async throws {
        let removed: MockResource? = registry.withLock { registry in
            registry.order.removeAll { $0 == name }
            registry.serializers[name] = nil
            registry.controllers[name] = nil
            registry.routeTable = registry.routeTable.removing(resource: name)
            return registry.resources.removeValue(forKey: name)
        }
        guard let removed else { throw MockServerError(code: .unknownResource, message: "no resource '\(name)'") }
        if dropData { try await recordingStore.dropResource(removed) }
    }

    /// Sets a resource's serializer (nil for pass-through); takes effect on the next request.
    ///
    /// ```swift
    /// server.setSerializer(ReshapingSerializer(collectionEnvelope: ["data", "posts"]), for: "posts")
    /// ```
    /// - Parameters:
    ///   - serializer: the serializer, or nil for the default.
    ///   - resource: the resource name.
    public func setSerializer(_ serializer: (any MockSerializer)?, for resource: String) {
        registry.withLock { $0.serializers[resource] = serializer }
    }

    /// Sets a resource's controller (nil for CRUD); takes effect on the next request.
    ///
    /// ```swift
    /// server.setController(AuditingController(), for: "people")
    /// ```
    /// - Parameters:
    ///   - controller: the controller, or nil for `CRUDController`.
    ///   - resource: the resource name.
    public func setController(_ controller: (any MockController)?, for resource: String) {
        registry.withLock { $0.controllers[resource] = controller }
    }

    /// The latency and faults in force.
    public var conditions: MockConditions {
        registry.withLock { $0.conditions }
    }

    /// Replaces latency and faults; takes effect on the next request.
    ///
    /// ```swift
    /// server.setConditions(MockConditions(faults: [MockFault(.status(503), probability: 0.2)]))
    /// ```
    /// - Parameters:
    ///   - conditions: the new conditions.
    public func setConditions(_ conditions: MockConditions) {
        registry.withLock { $0.conditions = conditions }
    }

    /// Checks a resource's names and parents.
    func validate(_ resource: MockResource, adding batch: [MockResource]) throws {
        func fail(_ message: String) -> MockServerError {
            MockServerError(code: .invalidResource, message: "resource '\(resource.name)': \(message)")
        }
        if resource.name.isEmpty || resource.name.contains("/") { throw fail("a name must be one non-empty path segment") }
        if resource.name == MockServer.controlPrefix { throw fail("the name is reserved for the server's control routes (/_replica/down, /_replica/up)") }
        if resource.properties.contains(where: { $0.name.isEmpty }) { throw fail("a property name is empty") }
        if let collision = resource.keyPaths.collision { throw fail(collision) }
        let known = Set(registry.withLock { Array($0.resources.keys) } + batch.map(\.name) + [resource.name])
        for parent in resource.parents where !known.contains(parent.resource) {
            throw fail("unknown parent resource '\(parent.resource)'")
        }
    }

    /// Records a write to a resource, for `Last-Modified` (after the store has the write).
    func touch(_ resource: String) {
        let now = Date().timeIntervalSince1970
        registry.withLock { $0.lastModified[resource, default: MockModification(time: now)].write(at: now) }
    }

    /// Records that a read of a resource begins (before the store is read) and returns its modification time.
    func beginRead(_ resource: String) -> MockModification {
        registry.withLock { registry in
            registry.lastModified[resource, default: MockModification(time: startedAt)].read()
            return registry.lastModified[resource, default: MockModification(time: startedAt)]
        }
    }
}
