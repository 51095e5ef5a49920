import Foundation
import Hummingbird
import Logging
import NIOCore
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import ServiceLifecycle
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// ``ReplicaService`` under swift-service-lifecycle against the mock server's change feed and
/// event stream, through the real HTTP client: statuses, pokes, push, graceful shutdown.
@Suite("ReplicaService: lifecycle, status, push")
struct ReplicaServiceTests {
    /// The mock server with the people-live resources and a client syncing into a fresh SQLite store.
    struct LiveAPI {
        let server: MockServer
        let client: ReplicaClient
        let transport: HTTPTransport
        let directory: TemporaryDirectory

        static func start() async throws -> LiveAPI {
            let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people-live.json"))
            let server = try await MockServer.start(resources: MockResource.resources(for: schema))
            let directory = try TemporaryDirectory("replica-service")
            let engine = try SQLiteReplica(store: try Store(path: directory.path("people.sqlite"), schema: schema))
            let transport = HTTPTransport()
            let base = try #require(URL(string: server.baseURL))
            let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(transport: transport, baseURLs: [.production: base]))
            return LiveAPI(server: server, client: client, transport: transport, directory: directory)
        }

        func stop() async {
            try? await transport.shutdown()
            await server.stop()
            directory.remove()
        }

        func add(_ json: String) async throws {
            _ = try await server.load(json: try JSONValue(parsing: json), into: "people")
        }
    }

    /// The statuses a service reported, in order. `@unchecked Sendable`: guarded by `lock`.
    final class Statuses: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [SyncStatus] = []
        func append(_ status: SyncStatus) { lock.withLock { items.append(status) } }
        var all: [SyncStatus] { lock.withLock { items } }
        var last: SyncStatus? { lock.withLock { items.last } }
        /// The outcomes of completed syncs, in order.
        var outcomes: [SyncStatus.Outcome] {
            var seen: [SyncStatus.Outcome] = []
            var lastDate: Date?
            for status in all where status.lastSuccess != nil && status.lastSuccess != lastDate {
                lastDate = status.lastSuccess
                if let outcome = status.lastOutcome { seen.append(outcome) }
            }
            return seen
        }
    }

    static func quietLogger() -> Logger {
        var logger = Logger(label: "replica-service-test")
        logger.logLevel = .critical
        return logger
    }

    @Test("under a ServiceGroup: a sync at once, a poke syncs incrementally, a graceful shutdown stops it and its statuses end stopped")
    func lifecycle() async throws {
        let api = try await LiveAPI.start()
        try await withTeardown {
            try await api.add(#"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]"#)
            let service = try ReplicaService(client: api.client, syncs: [.init("/people", every: .seconds(600))], push: false,
                                             logger: Self.quietLogger())
            let statuses = Statuses()
            let watcher = Task { for await status in service.status(of: "/people") { statuses.append(status) } }
            // No signals in the test process (SyncServiceCommandTests sends real ones to `replica sync --every`):
            // a signal a group handles stays ignored in the process and in every child it spawns after.
            let group = ServiceGroup(configuration: .init(services: [service], gracefulShutdownSignals: [],
                                                          logger: Self.quietLogger()))
            let running = Task { try await group.run() }
            // On a failure below, the group stops too.
            defer { running.cancel() }
            try await waitUntil("the first sync", timeout: .seconds(30)) { statuses.outcomes.count == 1 }
            #expect(statuses.all.first?.phase == .starting)
            let first = try #require(statuses.outcomes.first)
            #expect(first.mode == .full && first.inserted == 2 && first.pages == 1 && first.objects == 2)
            #expect(statuses.last?.phase == .waiting)
            let next = try #require(statuses.last?.nextAttempt)
            #expect(next.timeIntervalSinceNow > 500)
            #expect(statuses.last?.description.hasPrefix("/people: ok ") == true)
            #expect(statuses.last?.description.contains("(full, 1 page, 2 objects: +2 ~0 -0 in ") == true)

            try await api.add(#"[{"id": 3, "name": "cy"}]"#)
            #expect(api.client.poke("/people/3") == ["/people"])
            #expect(api.client.poke("/cars").isEmpty)
            try await waitUntil("the poked sync", timeout: .seconds(30)) { statuses.outcomes.count == 2 }
            let second = try #require(statuses.outcomes.last)
            #expect(second.mode == .incremental && second.inserted == 1 && second.objects == 1)
            #expect(try await api.client.store.count("Person", where: nil, arguments: []) == 3)

            let stopping = ContinuousClock.now
            await group.triggerGracefulShutdown()
            try await running.value
            // The loop was waiting out a 600 s interval: ending well within it shows that the shutdown
            // woke it (a loaded machine running the whole suite took 5.1 s once, so the bound is loose).
            #expect(stopping.duration(to: .now) < .seconds(60))
            await watcher.value
            #expect(statuses.last?.phase == .stopped)
            #expect(statuses.last?.description.hasSuffix(", stopped") == true)
            // Stopped: a poke wakes nothing.
            #expect(api.client.poke("/people").isEmpty)
        } teardown: {
            await api.stop()
        }
    }

    @Test("failures count up with the error and the next attempt; a success resets them")
    func failures() async throws {
        let api = try await LiveAPI.start()
        try await withTeardown {
            api.server.setConditions(MockConditions(faults: [MockFault(.status(503), method: "GET", path: "/people")]))
            let service = try ReplicaService(client: api.client, syncs: [.init("/people", every: .milliseconds(20))], push: false,
                                             logger: Self.quietLogger())
            let statuses = Statuses()
            let watcher = Task { for await status in service.statuses() { statuses.append(status) } }
            let running = Task { try await service.run() }
            defer { running.cancel() }
            try await waitUntil("two failures", timeout: .seconds(30)) { (statuses.last?.consecutiveFailures ?? 0) >= 2 }
            let failing = try #require(statuses.all.last { $0.consecutiveFailures >= 2 })
            #expect(failing.lastError?.httpStatus == 503)
            #expect(failing.lastError?.message.contains("503") == true)
            #expect(failing.lastSuccess == nil && failing.lag == nil)
            #expect(failing.description.hasPrefix("/people: failing ×"))
            api.server.setConditions(MockConditions())
            try await waitUntil("a success", timeout: .seconds(30)) { statuses.outcomes.count == 1 }
            #expect(statuses.all.last { $0.lastOutcome != nil }?.consecutiveFailures == 0)
            running.cancel()
            _ = try? await running.value
            await watcher.value
        } teardown: {
            await api.stop()
        }
    }

    @Test("push: each event of the mock server's /events syncs the paths it names, incrementally")
    func push() async throws {
        let api = try await LiveAPI.start()
        try await withTeardown {
            try await api.add(#"[{"id": 1, "name": "ann"}]"#)
            let service = try ReplicaService(client: api.client, syncs: [.init("/people", every: .seconds(600)),
                                                                         .init("/people/1/cars", every: .seconds(600))],
                                             logger: Self.quietLogger())
            let people = Statuses(), cars = Statuses()
            let watchers = [Task { for await status in service.status(of: "/people") { people.append(status) } },
                            Task { for await status in service.status(of: "/people/1/cars") { cars.append(status) } }]
            let running = Task { try await service.run() }
            defer { running.cancel() }
            // The first syncs, then one more each when the stream connects (catching up with what it did not hear).
            try await waitUntil("the first syncs and the catch-up", timeout: .seconds(30)) { people.outcomes.count == 2 && cars.outcomes.count == 2 }
            #expect(people.outcomes.map(\.mode) == [.full, .incremental] && people.outcomes.last?.objects == 0)
            try await waitUntil("the event stream", timeout: .seconds(30)) { api.server.changes.subscriberCount == 1 }
            try await api.add(#"[{"id": 2, "name": "bob"}]"#)
            try await waitUntil("the pushed sync of /people", timeout: .seconds(30)) { people.outcomes.count == 3 }
            #expect(people.outcomes.last?.mode == .incremental && people.outcomes.last?.inserted == 1)
            // A car of person 1 changes /people/1/cars (and /cars), not /people.
            _ = try await api.server.load(json: try JSONValue(parsing: #"[{"id": 10, "name": "a", "person_id": 1}]"#), into: "cars")
            try await waitUntil("the pushed sync of /people/1/cars", timeout: .seconds(30)) { cars.outcomes.count == 3 }
            #expect(cars.outcomes.last?.inserted == 1)
            #expect(people.outcomes.count == 3)
            running.cancel()
            _ = try? await running.value
            for watcher in watchers { await watcher.value }
        } teardown: {
            await api.stop()
        }
    }

    @Test("an event stream that drops reconnects with Last-Event-ID; the mock server replays what it missed")
    func reconnect() async throws {
        let api = try await LiveAPI.start()
        try await withTeardown {
            let events = EventLog()
            let connections = EventLog()
            let stream = api.client.events("/events", connection: { connections.append($0 ? "up" : "down") })
            let reader = Task { for await event in stream { events.append("\(event.id ?? "-") \(event.event) \(event.paths.first ?? "")") } }
            defer { reader.cancel() }
            try await waitUntil("connected", timeout: .seconds(30)) { connections.values == ["up"] }
            try await api.add(#"[{"id": 1, "name": "ann"}]"#)
            try await waitUntil("the first event", timeout: .seconds(30)) { events.values.count == 1 }
            #expect(events.values == ["1 change /people"])
            // The server goes away; a write lands while it is down; it comes back on the same port.
            await api.server.stop()
            try await waitUntil("dropped", timeout: .seconds(30)) { connections.values.contains("down") }
            try await api.add(#"[{"id": 2, "name": "bob"}]"#)
            try await api.server.start()
            try await waitUntil("the missed event, replayed", timeout: .seconds(30)) { events.values.count == 2 }
            #expect(events.values == ["1 change /people", "2 change /people"])
            reader.cancel()
            await reader.value
        } teardown: {
            await api.stop()
        }
    }

    @Test("a stream whose Last-Event-ID the server no longer holds gets a reset event naming every path")
    func resetEvent() async throws {
        var options = MockServerOptions()
        options.changeWindow = 1
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people-live.json"))
        let server = try await MockServer.start(resources: MockResource.resources(for: schema), options: options)
        let transport = HTTPTransport()
        try await withTeardown {
            for id in 1...3 { _ = try await server.load(json: try JSONValue(parsing: #"[{"id": \#(id)}]"#), into: "people") }
            var request = ClientRequest(method: .get, url: try #require(URL(string: server.baseURL + "/events")))
            request.headers["Last-Event-ID"] = "1"
            let response = try await transport.send(request)
            var parser = ServerSentEventParser()
            var first: ServerSentEvent?
            for try await chunk in response.body {
                if let event = parser.feed(chunk).first { first = event; break }
            }
            #expect(first?.event == "reset")
            #expect(first?.paths == ["/"])
            #expect(parser.retry == 1000)
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
        }
    }
}

/// Strings in arrival order. `@unchecked Sendable`: guarded by `lock`.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ item: String) { lock.withLock { items.append(item) } }
    var values: [String] { lock.withLock { items } }
}
