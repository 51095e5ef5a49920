import Foundation
import PostgresNIO
import Replica
import ReplicaHTTP
import ReplicaPostgres
import ReplicaServer
import ReplicaTestSupport
import Testing

/// The HTTP client syncing into PostgreSQL: validators shared by every service on the database,
/// paged calls committed whole or not at all, deletes announced to other processes.
@Suite("ReplicaClient on PostgreSQL")
struct PostgresClientTests {
    /// A mock API serving people, and two services (replicas with their own clients) sharing one database.
    struct Fleet {
        let server: MockServer
        let transport: HTTPTransport
        let url: String
        let first: PostgresReplica
        let second: PostgresReplica
        let people: MockResource

        static func start() async throws -> Fleet {
            let schema = try TestStore.schema()
            let resources = MockResource.resources(for: schema)
            let people = try #require(resources.first { $0.name == "people" })
            let server = try await MockServer.start(resources: resources)
            let url = try await PostgresCluster.start().makeDatabase()
            let first = try await PostgresReplica.open(url: url, schema: schema)
            let second = try await PostgresReplica.open(url: url)
            return Fleet(server: server, transport: HTTPTransport(), url: url, first: first, second: second, people: people)
        }

        func client(_ replica: PostgresReplica, configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> ReplicaClient {
            var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: try #require(URL(string: server.baseURL))])
            configure(&configuration)
            return ReplicaClient(store: replica, configuration: configuration)
        }

        func stop() async {
            try? await transport.shutdown()
            await server.stop()
            await first.close()
            await second.close()
        }

        func load(_ json: String) async throws {
            _ = try await server.load(json: try JSONValue(parsing: json), into: "people")
        }

        func names() async throws -> [String] {
            try await first.rows(RowQuery("Person", sort: [.ascending("id")])).map { $0["name"]?.description ?? "-" }
        }

        func cacheRows() async throws -> String {
            try await PostgresCluster.start().psql(url, "SELECT url, etag IS NOT NULL, octet_length(keys) FROM replica_http_cache ORDER BY url")
        }
    }

    @Test("one service's validators serve every service: the second one's call is a 304 and writes nothing")
    func sharedValidators() async throws {
        let fleet = try await Fleet.start()
        try await withTeardown {
        try await fleet.load(#"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]"#)
        let first = try fleet.client(fleet.first)
        let second = try fleet.client(fleet.second)

        let synced = try await first.call("/people")
        #expect(synced.status == 200)
        #expect(synced.changes["Person"]?.inserted.integers == [1, 2])

        let watching = await fleet.first.changes(for: ["Person"])
        let again = try await second.call("/people")
        #expect(again.notModified)
        #expect(again.status == 304)
        #expect(again.changes.isEmpty)

        // The API changes: the next call of either service syncs exactly the difference, and
        // the other service hears of it through LISTEN.
        _ = try await fleet.server.options.store.delete(fleet.people, id: .int(1))
        try await fleet.load(#"[{"id": 2, "name": "bea"}, {"id": 3, "name": "cy"}]"#)
        let changed = try await second.call("/people")
        #expect(changed.status == 200)
        #expect(changed.changes["Person"]?.inserted.integers == [3])
        #expect(changed.changes["Person"]?.updated.integers == [2])
        #expect(changed.changes["Person"]?.deleted.integers == [1])
        var iterator = watching.makeAsyncIterator()
        let heard = await iterator.next()
        #expect(heard?["Person"]?.deleted.integers == [1])
        #expect(try await fleet.names() == ["bea", "cy"])
        #expect(try await first.call("/people").notModified)
        } teardown: {
            await fleet.stop()
        }
    }

    @Test("a paged call whose third page fails leaves the rows and the validators as they were; the retry commits every page")
    func pagedFailureRollsBack() async throws {
        let fleet = try await Fleet.start()
        try await withTeardown {
        let people = (1...10).map { #"{"id": \#($0), "name": "p\#($0)"}"# }.joined(separator: ", ")
        try await fleet.load("[\(people)]")
        let client = try fleet.client(fleet.first) { $0.timeout = .seconds(30) }
        let path = "/people?_sort=id&_page=1&_limit=4"

        fleet.server.setConditions(MockConditions(faults: [MockFault(.status(500), method: "GET", path: "/people", query: ["_page": "3"])]))
        await #expect(throws: ClientError.self) { try await client.call(path) }
        #expect(try await fleet.names() == [])
        #expect(try await fleet.cacheRows() == "")

        fleet.server.setConditions(MockConditions())
        let result = try await client.call(path)
        #expect(result.pages == 3)
        #expect(result.changes["Person"]?.inserted.integers == Array(1...10))
        #expect(try await fleet.names().count == 10)
        // One record per page, each with its validator and its page's keys: the 8-byte mark, the
        // count, 4, 4 and 2 consecutive integers a byte each, no texts.
        let records = try await fleet.cacheRows().split(separator: "\n").map { $0.split(separator: "|").dropFirst().joined(separator: "|") }
        #expect(records == ["t|14", "t|14", "t|12"])

        // Unchanged: every page answers 304 from the shared records.
        let unchanged = try await fleet.client(fleet.second).call(path)
        #expect(unchanged.notModified)
        #expect(unchanged.unchangedPages == 3)
        } teardown: {
            await fleet.stop()
        }
    }

    @Test("client.delete removes the row, and the change set reaches the other service")
    func delete() async throws {
        let fleet = try await Fleet.start()
        try await withTeardown {
        try await fleet.load(#"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]"#)
        let client = try fleet.client(fleet.first)
        try await client.call("/people")
        let watching = await fleet.second.changes(for: ["Person"])
        try await client.delete("Person", id: .integer(2))
        var iterator = watching.makeAsyncIterator()
        let heard = await iterator.next()
        #expect(heard?["Person"]?.deleted.integers == [2])
        #expect(try await fleet.names() == ["ann"])
        // Deleting a row that is not there writes and announces nothing.
        #expect(try await fleet.first.delete("Person", key: .integer(2)).isEmpty)
        await #expect(throws: SyncError.self) { try await fleet.first.delete("Nobody", key: .integer(1)) }
        } teardown: {
            await fleet.stop()
        }
    }
}

@Suite("Sync sessions on PostgreSQL")
struct PostgresSessionTests {
    @Test("pages staged apart commit in one transaction; a discarded session writes nothing", arguments: StoreKind.allCases)
    func stagedPages(_ kind: StoreKind) async throws {
        let opened = try await TestStore.make(kind)
        try await withTeardown {
        let store = opened.store
        let plain = try await store.sync(.get, "/people", body: Data(#"[{"id": 9, "name": "old"}]"#.utf8), options: SyncOptions())
        #expect(plain.writeLockDuration != nil)

        let discarded = try store.session(.get, "/people", options: SyncOptions())
        _ = try await discarded.stage(body: Data(#"[{"id": 1, "name": "ann"}]"#.utf8))
        discarded.discard()
        #expect(try await store.count("Person", where: nil, arguments: []) == 1)

        let session = try store.session(.get, "/people", options: SyncOptions())
        let first = try await session.stage(body: Data(#"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]"#.utf8))
        #expect(first.keys.integers == [1, 2])
        #expect(try await store.count("Person", where: nil, arguments: []) == 1)
        _ = try await session.stage(body: Data(#"[{"id": 3, "name": "cy"}]"#.utf8))
        session.vouch(for: PrimaryKeys([.integer(9)]))
        let result = try await session.commit(complete: true)
        #expect(result.changes["Person"]?.inserted.integers == [1, 2, 3])
        #expect(result.changes["Person"]?.deleted.isEmpty ?? true)
        #expect(result.objectCount == 3)
        #expect(result.writeLockDuration != nil)

        // Without the vouched key, a complete traversal deletes the row no page listed.
        let next = try store.session(.get, "/people", options: SyncOptions())
        _ = try await next.stage(body: Data(#"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bo"}]"#.utf8))
        _ = try await next.stage(body: Data(#"[{"id": 3, "name": "cy"}]"#.utf8))
        let second = try await next.commit(complete: true)
        #expect(second.changes["Person"]?.updated.integers == [2])
        #expect(second.changes["Person"]?.deleted.integers == [9])
        await #expect(throws: SyncError.self) { try await next.commit(complete: true) }
        } teardown: {
            await opened.close()
        }
    }
}
