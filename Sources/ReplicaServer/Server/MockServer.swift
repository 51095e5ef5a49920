import Foundation
import Hummingbird
import Logging
import ReplicaCore
import ServiceLifecycle

/// An embedded mock REST server: resources with CRUD routes over HTTP/1.1 on loopback, backed by a
/// `MockStore`, with per-resource serializers and controllers, latency and faults.
///
/// ```swift
/// let people = MockResource("people", properties: [MockProperty("name", .string)])
/// let server = try await MockServer.start(resources: [people])
/// print(server.port)           // a free port on 127.0.0.1
/// // curl -d '{"name":"john"}' http://127.0.0.1:\(server.port)/people
/// await server.stop()
/// ```
public final class MockServer: Sendable {
    struct Registry {
        var order: [String] = []
        var resources: [String: MockResource] = [:]
        var serializers: [String: any MockSerializer] = [:]
        var controllers: [String: any MockController] = [:]
        var conditions: MockConditions
        var lastModified: [String: MockModification] = [:]
        /// The API's own routes, as given.
        var routes: [MockRoute] = []
        /// `routes` checked against their resources, in the order given; a route whose resource is not served is left out.
        var routeTable = MockRouteTable()

        /// Checks every route against the resource it names.
        mutating func compileRoutes() throws {
            let control = "/" + MockServer.controlPrefix
            if let reserved = routes.first(where: { $0.path == control || $0.path.hasPrefix(control + "/") }) {
                throw MockServerError(code: .invalidResource,
                                      message: "route \(reserved.method) \(reserved.path): \(control)/ is reserved for the server's control routes")
            }
            routeTable = MockRouteTable(try routes.compactMap { route in
                try resources[route.resource].map { try CompiledMockRoute(route, resource: $0) }
            })
        }
    }

    private enum Lifecycle {
        case stopped(lastPort: Int?)
        case running(port: Int, group: ServiceGroup, task: Task<Void, Never>)
    }

    /// The options the server was started with (the store, the bind address, limits).
    public let options: MockServerOptions
    let registry: Locked<Registry>
    let stalls = MockStallGate()
    /// What the seeds loaded before the first start.
    private let seeded = Locked(MockLoadResult())
    private let lifecycle = Locked(Lifecycle.stopped(lastPort: nil))
    let startedAt = Date().timeIntervalSince1970
    /// Every write this server made, in order: the cursors of its collections (`X-Cursor`), their
    /// `?since=` answers and its `/events` stream.
    ///
    /// ```swift
    /// let cursor = server.changes.cursor(for: "people")
    /// ```
    public let changes: MockChangeFeed

    /// Counts requests against ``MockServerOptions/rateLimit``; nil without one.
    let rateLimiter: MockRateLimiter?
    /// The responses kept for `Idempotency-Key`s.
    let idempotency: MockIdempotencyCache
    /// The outage in force, nil while the server is up (``goDown(_:)``, ``comeUp()``).
    let availability: Locked<MockOutage?>
    /// The objects being updated or deleted, one writer at a time each.
    let objectLocks = MockObjectLocks()

    /// The store as requests and loads see it: writes go into ``changes`` too.
    var recordingStore: any MockStore { FeedRecordingStore(base: options.store, feed: changes) }

    private init(options: MockServerOptions) {
        self.options = options
        self.changes = MockChangeFeed(window: options.changeWindow)
        self.rateLimiter = options.rateLimit.map(MockRateLimiter.init)
        self.idempotency = MockIdempotencyCache(retention: options.idempotencyRetention, capacity: options.idempotencyCapacity)
        self.availability = Locked(options.outage)
        self.registry = Locked(Registry(conditions: options.conditions))
    }

    /// Starts a server with resources and returns it running.
    ///
    /// ```swift
    /// let server = try await MockServer.start(resources: MockResource.resources(for: schema),
    ///                                         options: MockServerOptions(port: 8888))
    /// ```
    /// - Parameters:
    ///   - resources: the resources to serve (parents before or after children, any order).
    ///   - options: bind address, store, seeds (loaded before the port opens), conditions and limits.
    /// - Returns: the running server; `port` is the bound port.
    /// - Throws: `MockServerError` `.invalidResource` for a bad resource, `.storeFailed` when the store cannot
    ///   prepare a table, `.bindFailed` when the address cannot be bound.
    public static func start(resources: [MockResource], options: MockServerOptions = MockServerOptions()) async throws -> MockServer {
        try await start(resources: resources, routes: [], options: options)
    }

    /// Starts a server with resources and an API's own routes (`GET /pet/:petId`, `POST /pet`) beside
    /// RESTEasy's, and returns it running. See ``MockRoute`` for what each route does.
    ///
    /// ```swift
    /// let server = try await MockServer.start(resources: resources,
    ///                                         routes: [MockRoute("GET", "/pet/:petId", resource: "pets")])
    /// ```
    /// - Parameters:
    ///   - resources: the resources to serve (parents before or after children, any order).
    ///   - routes: the API's routes, each naming one of `resources`.
    ///   - options: bind address, store, seeds (loaded before the port opens), conditions and limits.
    /// - Returns: the running server.
    /// - Throws: `MockServerError` `.invalidResource` for a bad resource or route (one naming a resource
    ///   not served or a property its resource lacks, or a path that is no ``RoutePattern``), `.storeFailed`, `.bindFailed`; a seed's errors
    ///   (``load(file:into:)``), the port never opened.
    public static func start(resources: [MockResource], routes: [MockRoute],
                             options: MockServerOptions = MockServerOptions()) async throws -> MockServer {
        let server = MockServer(options: options)
        for resource in resources { try server.validate(resource, adding: resources) }
        let names = Set(resources.map(\.name))
        if let stray = routes.first(where: { !names.contains($0.resource) }) {
            throw MockServerError(code: .invalidResource,
                                  message: "route \(stray.method) \(stray.path): no resource '\(stray.resource)'")
        }
        try server.registry.withLock { registry in
            for resource in resources { registry.resources[resource.name] = resource }
            registry.routes = routes
            try registry.compileRoutes()
            registry.resources = [:]
        }
        // Validated together above: a child may come before its parent.
        for resource in resources { try await server.register(resource) }
        // Loaded before the port opens: no client ever sees the collections empty or half loaded.
        var seeded = MockLoadResult()
        for seed in options.seeds {
            switch seed {
            case .file(let path, let resource): seeded.add(try await server.load(file: path, into: resource))
            case .json(let json, let resource): seeded.add(try await server.load(json: json, into: resource))
            }
        }
        server.seeded.withLock { $0 = seeded }
        for (name, serializer) in options.serializers { server.setSerializer(serializer, for: name) }
        try await server.start()
        return server
    }

    /// Starts a server for a schema: a resource per entity (``MockResource/resources(for:)``), served at
    /// RESTEasy's paths and at the schema's own routes (``MockRoute/routes(for:)``), so a client of the
    /// API the schema describes finds its paths.
    ///
    /// ```swift
    /// let schema = try Schema(contentsOf: URL(fileURLWithPath: "Schemas/blog.json"))
    /// let server = try await MockServer.start(schema: schema)
    /// // GET /users/1/posts lists the posts whose user_id is 1; GET /posts/3 shows one.
    /// ```
    /// - Parameters:
    ///   - schema: the schema.
    ///   - options: bind address, store, seeds (loaded before the port opens), conditions and limits.
    /// - Returns: the running server.
    /// - Throws: as ``start(resources:routes:options:)``.
    public static func start(schema: Schema, options: MockServerOptions = MockServerOptions()) async throws -> MockServer {
        var options = options
        for (name, serializer) in JSONAPISerializer.serializers(for: schema) where options.serializers[name] == nil {
            options.serializers[name] = serializer
        }
        return try await start(resources: MockResource.resources(for: schema), routes: MockRoute.routes(for: schema), options: options)
    }

    /// What ``MockServerOptions/seeds`` loaded before the server started listening (empty without seeds).
    ///
    /// ```swift
    /// print(server.seedResult)   // loaded 20000, rejected 0
    /// ```
    public var seedResult: MockLoadResult {
        seeded.withLock { $0 }
    }

    /// The API's own routes being served, as given.
    ///
    /// ```swift
    /// server.routes.map(\.description)   // ["GET /pet/:petId → pets", "POST /pet → pets"]
    /// ```
    public var routes: [MockRoute] {
        registry.withLock { $0.routes }
    }

    /// The bound port while running; the last bound port once stopped; 0 before the first start.
    public var port: Int {
        lifecycle.withLock { state in
            switch state {
            case .running(let port, _, _): return port
            case .stopped(let last): return last ?? 0
            }
        }
    }

    /// `http://host:port`.
    public var baseURL: String { "http://\(options.host.contains(":") ? "[\(options.host)]" : options.host):\(port)" }

    /// Whether the server is accepting requests.
    public var isRunning: Bool {
        lifecycle.withLock { if case .running = $0 { return true } else { return false } }
    }

    /// Starts a stopped server again, on the port it had (or `options.port` the first time).
    ///
    /// ```swift
    /// await server.stop()
    /// try await server.start()   // same port, same store
    /// ```
    /// - Throws: `MockServerError` `.invalidState` when already running, `.bindFailed` when binding fails.
    public func start() async throws {
        // A restart on the port it just released may find the socket not yet closed: retry briefly.
        let restarting = isRestart
        var attempt = 0
        while true {
            do {
                return try await startOnce()
            } catch let error as MockServerError where error.code == .bindFailed && restarting && attempt < 40 {
                attempt += 1
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    private var isRestart: Bool {
        lifecycle.withLock { state in
            if case .stopped(let last) = state { return last != nil }
            return false
        }
    }

    private func startOnce() async throws {
        let lastPort: Int? = lifecycle.withLock { state in
            if case .stopped(let last) = state { return last ?? options.port }
            return nil
        }
        guard let port = lastPort else { throw MockServerError(code: .invalidState, message: "the server is already running") }
        stalls.close()
        changes.open()
        let bound = MockOneShot<Int>()
        var logger = Logger(label: "replica.mock-server")
        logger.logLevel = .critical
        let app = Application(
            responder: MockResponder(server: self),
            server: MockHTTPChannel.builder(options: options),
            configuration: ApplicationConfiguration(address: .hostname(options.host, port: port), serverName: nil),
            onServerRunning: { channel in
                bound.resolve(.success(channel.localAddress?.port ?? port))
            },
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let host = options.host
        let task = Task {
            do {
                try await group.run()
                bound.resolve(.failure(MockServerError(code: .bindFailed, message: "\(host):\(port): the server stopped before listening")))
            } catch {
                bound.resolve(.failure(MockServerError(code: .bindFailed, message: "\(host):\(port): \(error)")))
            }
        }
        do {
            let actual = try await bound.value()
            lifecycle.withLock { $0 = .running(port: actual, group: group, task: task) }
        } catch {
            await task.value
            throw error
        }
    }

    /// Ends every stall in progress now (`.stall` and `.stallBody` faults): a stalled answer's
    /// connection closes, a stalled body sends the rest. Requests that meet a stall fault afterwards
    /// stall as before. A test can so hold a response exactly as long as it needs, however slowly
    /// the machine runs, instead of guessing a duration.
    ///
    /// ```swift
    /// server.setConditions(MockConditions(faults: [
    ///     MockFault(.stallBody(afterBytes: 4000, duration: .seconds(120)), method: "GET", path: "/people"),
    /// ]))
    /// let sync = Task { try await client.call("/people") }   // parses the first 4000 bytes, then waits
    /// // … whatever must happen while the body is held …
    /// server.releaseStalls()                                  // the rest of the body goes out
    /// try await sync.value
    /// ```
    /// - Returns: how many stalled requests were released.
    @discardableResult
    public func releaseStalls() -> Int {
        stalls.releaseWaiting()
    }

    /// Stops accepting connections, finishes requests in flight (stalled ones are released and dropped)
    /// and returns once the server is down. Does nothing on a stopped server.
    ///
    /// ```swift
    /// await server.stop()
    /// ```
    public func stop() async {
        let running: (Int, ServiceGroup, Task<Void, Never>)? = lifecycle.withLock { state in
            guard case .running(let port, let group, let task) = state else { return nil }
            state = .stopped(lastPort: port)
            return (port, group, task)
        }
        guard let (_, group, task) = running else { return }
        stalls.open()
        changes.close()
        await group.triggerGracefulShutdown()
        await task.value
    }

    /// Waits until the server stops (by `stop()` from elsewhere).
    ///
    /// ```swift
    /// try await server.waitUntilStopped()
    /// ```
    public func waitUntilStopped() async {
        let task: Task<Void, Never>? = lifecycle.withLock { state in
            if case .running(_, _, let task) = state { return task }
            return nil
        }
        await task?.value
    }
}
