import Foundation
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaServerPostgres
import ReplicaTestSupport
import Testing

/// Issues with shared labels served by the mock server (each of its stores), synced through the
/// real HTTP client page by page (`Link: rel="next"`), created with nested label arrays.
@Suite("Many-to-many links through the mock server and the HTTP client")
struct ManyToManySyncTests {
    /// `Schemas/issues.json` with the mock server's flat routes.
    static func schema() throws -> Schema {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("Schemas/issues.json"), encoding: .utf8)
        let routes = text.range(of: #""routes": ["#).map { text[..<$0.lowerBound] } ?? ""
        return try Schema(json: Data((routes + #""routes": [{"path": "/issues", "target": "Issue", "stale": "delete"}, "#
                                      + #"{"path": "/issues/:id", "target": "Issue"}, {"path": "/labels", "target": "Label"}]}"#).utf8))
    }

    static let seed = """
        {"issues": [
          {"id": 1, "number": 1347, "title": "Found a bug", "state": "open",
           "labels": [{"id": 208045946, "name": "bug", "color": "f29513"}, {"id": 208045948, "name": "question", "color": "d876e3"}]},
          {"id": 2, "number": 1348, "title": "Add dark mode", "state": "open",
           "labels": [{"id": 208045947, "name": "enhancement", "color": "a2eeef"}, {"id": 208045946, "name": "bug", "color": "f29513"}]},
          {"id": 3, "number": 1349, "title": "Crash on start", "state": "closed",
           "labels": [{"id": 208045946, "name": "bug", "color": "f29513"}]},
          {"id": 4, "number": 1350, "title": "Docs", "state": "open", "labels": []},
          {"id": 5, "number": 1351, "title": "Linked by keys", "state": "open", "labels": [208045947]}
        ]}
        """

    static func links(_ store: Store, _ issue: Int64) throws -> [Int64] {
        try store.database.read { db in
            try Int64.fetchAll(db, sql: #"SELECT "labelID" FROM issue_labels WHERE "issueID" = ? ORDER BY 1"#, arguments: [issue])
        }
    }

    @Test("paged issues link their shared labels once; a created issue links what it posted; a deleted one unlinks",
          arguments: ["memory", "sqlite", "postgres"])
    func pagedSyncLinks(kind: String) async throws {
        let schema = try Self.schema()
        let directory = try TemporaryDirectory("replica-m2m")
        let mockStore = try await NestedKeySyncTests.mockStore(kind, in: directory)
        let server = try await MockServer.start(resources: MockResource.resources(for: schema),
                                                options: MockServerOptions(store: mockStore))
        try await withTeardown {
            #expect(try await server.load(json: try JSONValue(parsing: Self.seed)).loaded == 5)
            let store = try Store(path: directory.path("issues.sqlite"), schema: schema)
            let base = try #require(URL(string: server.baseURL))
            var configuration = ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: base])
            configuration.timeout = .seconds(60)  // a hang guard: heads have taken over 10 s in a loaded parallel run
            let client = ReplicaClient(engine: try SQLiteReplica(store: store), configuration: configuration)

            // Two issues a page; staged pages spill to the scratch file (no staging memory).
            let synced = try await client.call("/issues", params: ["_limit": 2], options: SyncOptions(stagingMemory: 0))
            #expect(synced.pages == 3)
            #expect(synced.changes["Issue"]?.inserted.integers == [1, 2, 3, 4, 5])
            #expect(synced.changes["Label"]?.inserted.integers.sorted() == [208045946, 208045947, 208045948])
            #expect(try store.count("Label") == 3)
            #expect(try (1...5).map { try Self.links(store, $0) } == [[208045946, 208045948], [208045946, 208045947],
                                                                      [208045946], [], [208045947]])
            let unchanged = try await client.call("/issues", params: ["_limit": 2])
            #expect(unchanged.changes.isEmpty)

            // A POST with nested labels: the server keeps the array, the response links them here.
            let created = try await client.call("/issues", method: .post, params: [
                "number": 1352, "title": "Labels on create",
                "labels": [["id": 208045948, "name": "question", "color": "d876e3"], ["id": 208045949, "name": "wontfix", "color": "ffffff"]],
            ])
            #expect(created.changes["Issue"]?.inserted.integers == [6])
            #expect(created.changes["Label"]?.inserted.integers == [208045949])
            #expect(created.changes["Label"]?.updated.integers == [208045948])
            #expect(try Self.links(store, 6) == [208045948, 208045949])

            // A DELETE through the client deletes the row here and its links.
            let deleted = try await client.call("/issues/1", method: .delete)
            #expect(deleted.changes["Issue"]?.deleted.integers == [1])
            #expect(try Self.links(store, 1) == [])
            // Deleted on the server behind the client's back: the next full sync deletes the issue
            // as stale, with its links, and keeps every label.
            let issues = try #require(MockResource.resources(for: schema).first)
            #expect(try await mockStore.delete(issues, id: 2))
            let after = try await client.call("/issues", params: ["_limit": 2])
            #expect(after.changes["Issue"]?.deleted.integers == [2])
            #expect(try Self.links(store, 2) == [])
            #expect(try (3...6).map { try Self.links(store, $0) } == [[208045946], [], [208045947], [208045948, 208045949]])
            #expect(try store.count("Label") == 4)
        } teardown: {
            await server.stop()
            if let postgres = mockStore as? PostgresMockStore { await postgres.close() }
            directory.remove()
        }
    }
}
