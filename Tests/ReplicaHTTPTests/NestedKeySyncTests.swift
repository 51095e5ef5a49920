import Foundation
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaServerPostgres
import ReplicaTestSupport
import Testing

@Suite("Sync from the mock server keeps values under dotted JSON keys")
struct NestedKeySyncTests {
    /// A fresh mock store of each kind: in memory, an SQLite file, a database of the test PostgreSQL cluster.
    static func mockStore(_ kind: String, in directory: TemporaryDirectory) async throws -> any MockStore {
        switch kind {
        case "sqlite": return try SQLiteMockStore(path: directory.path("mock.sqlite"))
        case "postgres": return try PostgresMockStore(url: try await PostgresCluster.start().makeDatabase())
        default: return MemoryMockStore()
        }
    }

    @Test("seeded nested values, a save and a merge reach the SQLite replica through real HTTP",
          arguments: ["memory", "sqlite", "postgres"])
    func syncKeepsNestedValues(kind: String) async throws {
        let schema = try Schema(json: Data(nestedPlacesSchema.utf8))
        let resources = MockResource.resources(for: schema)
        let places = try #require(resources.first)
        let directory = try TemporaryDirectory("replica-http")
        let mockStore = try await Self.mockStore(kind, in: directory)
        let server = try await MockServer.start(resources: resources, options: MockServerOptions(store: mockStore))
        try await withTeardown {
            let seed = try JSONValue(parsing: """
                {"places": [{"id": 1, "name": "home", "address": {"city": "Paris", "zip": "75001", "geo": {"lat": 48.5}}},
                            {"id": 2, "name": "nowhere"}]}
                """)
            #expect(try await server.load(json: seed).loaded == 2)

            let store = try Store(path: directory.path("places.sqlite"), schema: schema)
            let engine = try SQLiteReplica(store: store)
            let base = try #require(URL(string: server.baseURL))
            var configuration = ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: base])
            configuration.timeout = .seconds(60)  // a hang guard: heads have taken over 10 s in a loaded parallel run
            let client = ReplicaClient(engine: engine, configuration: configuration)

            let synced = try await client.call("/places")
            #expect(synced.sync.objectCount == 2)
            #expect(try store.rows("Place").map(\.names) == Array(repeating: ["id", "name", "city", "zip", "lat"], count: 2))
            #expect(try store.rows("Place").map(\.values) == [
                [.integer(1), .string("home"), .string("Paris"), .string("75001"), .double(48.5)],
                [.integer(2), .string("nowhere"), .null, .null, .null],
            ])

            // The client's body nests the values (`map.encode`); the server stores each one.
            let saved = try await client.save("Place", ["name": .string("office"), "city": .string("Lyon"), "zip": .string("69001"),
                                                        "lat": .double(45.75)])
            #expect(saved?.values == [.integer(3), .string("office"), .string("Lyon"), .string("69001"), .double(45.75)])
            #expect(try await mockStore.object(places, id: 3) == JSONObject([
                ("id", 3), ("name", "office"), ("address.city", "Lyon"), ("address.zip", "69001"), ("address.geo.lat", 45.75)]))

            // A load that merges one nested member keeps the others; the next sync sees both.
            #expect(try await server.load(json: try JSONValue(parsing: #"[{"id": 1, "address": {"zip": "75002"}}]"#), into: "places").loaded == 1)
            try await client.call("/places")
            #expect(try store.rows("Place").map(\.values) == [
                [.integer(1), .string("home"), .string("Paris"), .string("75002"), .double(48.5)],
                [.integer(2), .string("nowhere"), .null, .null, .null],
                [.integer(3), .string("office"), .string("Lyon"), .string("69001"), .double(45.75)],
            ])
        } teardown: {
            await server.stop()
            if let postgres = mockStore as? PostgresMockStore { await postgres.close() }
            directory.remove()
        }
    }
}
