import Foundation
import Replica
import ReplicaHTTP
import ReplicaPostgres
import ReplicaServer
import ReplicaTestSupport
import Testing

/// Incremental sync against the mock server's change feed, through the real HTTP client, on
/// SQLite and PostgreSQL: `X-Cursor` on the full listing, `?since=` answers with items and
/// tombstones committed in one transaction with the cursor, and a 410 for an expired cursor
/// answered by a full sync that deletes stale rows.
@Suite("Incremental sync from the mock server's change feed")
struct IncrementalFeedTests {
    struct Feed {
        let server: MockServer
        let transport: HTTPTransport
        let client: ReplicaClient
        let opened: TestStore
        let base: URL

        static func start(_ kind: StoreKind, window: Int = 100) async throws -> Feed {
            let schema = try TestStore.schema("people-live.json")
            var options = MockServerOptions()
            options.changeWindow = window
            let server = try await MockServer.start(resources: MockResource.resources(for: schema), options: options)
            let opened: TestStore
            do {
                opened = try await TestStore.make(kind, schema: schema)
            } catch {
                await server.stop()
                throw error
            }
            let transport = HTTPTransport()
            let base = try #require(URL(string: server.baseURL))
            let client = ReplicaClient(store: opened.store, configuration: ClientConfiguration(transport: transport, baseURLs: [.production: base]))
            return Feed(server: server, transport: transport, client: client, opened: opened, base: base)
        }

        /// Runs `body` against a started feed, stopped afterwards whether `body` throws or not.
        static func with(_ kind: StoreKind, window: Int = 100, _ body: (Feed) async throws -> Void) async throws {
            let feed = try await start(kind, window: window)
            try await withTeardown {
                try await body(feed)
            } teardown: {
                await feed.stop()
            }
        }

        func stop() async {
            try? await transport.shutdown()
            await server.stop()
            await opened.close()
        }

        /// Sends a request to the API directly (another client's write), expecting a 2xx.
        func send(_ method: HTTPMethod, _ path: String, _ body: String? = nil) async throws {
            var request = ClientRequest(method: method, url: base.appendingPathComponent(path))
            if let body {
                request.body = .bytes(Array(body.utf8))
                request.headers["Content-Type"] = "application/json"
            }
            let response = try await transport.send(request)
            _ = try await response.body.collect(upTo: 1 << 20)
            #expect((200..<300).contains(response.status), "\(method) \(path) answered \(response.status)")
        }

        func names() async throws -> [String] {
            try await opened.store.rows(RowQuery("Person", sort: [.ascending("id")])).map { $0["name"]?.description ?? "-" }
        }
    }

    @Test("a full sync records X-Cursor; the next sync upserts the changed objects and deletes the tombstones", arguments: StoreKind.allCases)
    func itemsAndTombstones(_ kind: StoreKind) async throws {
        try await Feed.with(kind) { feed in
            _ = try await feed.server.load(json: try JSONValue(parsing: #"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}, {"id": 3, "name": "cy"}]"#),
                                          into: "people")
            let full = try await feed.client.call("/people")
            #expect(full.mode == .full)
            #expect(full.headers["X-Cursor"] != nil)
            #expect(full.changes["Person"]?.inserted.integers == [1, 2, 3])

            try await feed.send(.patch, "/people/2", #"{"name": "bo"}"#)
            try await feed.send(.delete, "/people/3")
            try await feed.send(.post, "/people", #"{"id": 4, "name": "dee"}"#)
            // Created, then deleted before the next sync: a tombstone for a row never synced.
            try await feed.send(.post, "/people", #"{"id": 5, "name": "eve"}"#)
            try await feed.send(.delete, "/people/5")

            let delta = try await feed.client.call("/people")
            #expect(delta.mode == .incremental)
            #expect(delta.sync.objectCount == 2)
            #expect(delta.changes["Person"]?.inserted.integers == [4])
            #expect(delta.changes["Person"]?.updated.integers == [2])
            #expect(delta.changes["Person"]?.deleted.integers == [3])
            #expect(try await feed.names() == ["ann", "bo", "dee"])

            // Nothing changed since: an empty answer, nothing written, the cursor moves on.
            let quiet = try await feed.client.call("/people")
            #expect(quiet.mode == .incremental && quiet.changes.isEmpty && quiet.sync.objectCount == 0)
        }
    }

    @Test("a nested route's feed lists only its parent's children; other parents' tombstones never reach it", arguments: StoreKind.allCases)
    func scopedFeed(_ kind: StoreKind) async throws {
        try await Feed.with(kind) { feed in
            _ = try await feed.server.load(json: try JSONValue(parsing: """
                {"people": [{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}],
                 "cars": [{"id": 10, "name": "a", "person_id": 1}, {"id": 20, "name": "b", "person_id": 2}]}
                """))
            _ = try await feed.client.call("/people/1/cars")
            _ = try await feed.client.call("/people/2/cars")
            try await feed.send(.delete, "/cars/20")
            try await feed.send(.patch, "/cars/10", #"{"color": "red"}"#)
            let first = try await feed.client.call("/people/1/cars")
            #expect(first.mode == .incremental)
            #expect(first.changes["Car"]?.updated.integers == [10])
            #expect(first.changes["Car"]?.deleted.isEmpty ?? true)
            #expect(try await feed.opened.store.count("Car", where: nil, arguments: []) == 2)
            let second = try await feed.client.call("/people/2/cars")
            #expect(second.changes["Car"]?.deleted.integers == [20])
            #expect(try await feed.opened.store.count("Car", where: nil, arguments: []) == 1)
        }
    }

    @Test("a cursor older than the feed's window answers 410; the client syncs in full and deletes stale rows", arguments: StoreKind.allCases)
    func expiredCursor(_ kind: StoreKind) async throws {
        try await Feed.with(kind, window: 3) { feed in
            _ = try await feed.server.load(json: try JSONValue(parsing: #"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]"#),
                                          into: "people")
            _ = try await feed.client.call("/people")
            for index in 3...6 { try await feed.send(.post, "/people", #"{"id": \#(index), "name": "p\#(index)"}"#) }
            try await feed.send(.delete, "/people/1")
            // The raw answer first: 410 with the feed's reason.
            let raw = try await feed.transport.send(ClientRequest(method: .get, url: try #require(URL(string: feed.server.baseURL + "/people?since="
                                                                                                            + feed.server.changes.epoch + ".1"))))
            let body = String(decoding: try await raw.body.collect(upTo: 1 << 16), as: UTF8.self)
            #expect(raw.status == 410)
            #expect(body.contains("older than the 3 changes the server keeps"))

            let resync = try await feed.client.call("/people")
            #expect(resync.mode == .resync)
            #expect(resync.changes["Person"]?.deleted.integers == [1])
            #expect(resync.changes["Person"]?.inserted.integers == [3, 4, 5, 6])
            #expect(try await feed.names() == ["bob", "p3", "p4", "p5", "p6"])
            // The full sync recorded a fresh cursor: the next call is incremental again.
            try await feed.send(.patch, "/people/2", #"{"name": "bo"}"#)
            let next = try await feed.client.call("/people")
            #expect(next.mode == .incremental)
            #expect(next.changes["Person"]?.updated.integers == [2])
        }
    }

    @Test("a failed incremental answer leaves the rows and the cursor as they were", arguments: StoreKind.allCases)
    func failedDeltaRollsBack(_ kind: StoreKind) async throws {
        try await Feed.with(kind) { feed in
            _ = try await feed.server.load(json: try JSONValue(parsing: #"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]"#),
                                          into: "people")
            _ = try await feed.client.call("/people")
            try await feed.send(.delete, "/people/1")
            try await feed.send(.patch, "/people/2", #"{"name": "bo"}"#)
            feed.server.setConditions(MockConditions(faults: [MockFault(.truncateBody(afterBytes: 20), method: "GET", path: "/people")]))
            await #expect(throws: (any Error).self) { try await feed.client.call("/people") }
            #expect(try await feed.names() == ["ann", "bob"])
            feed.server.setConditions(MockConditions())
            let retry = try await feed.client.call("/people")
            #expect(retry.mode == .incremental)
            #expect(retry.changes["Person"]?.deleted.integers == [1])
            #expect(try await feed.names() == ["bo"])
        }
    }
}
