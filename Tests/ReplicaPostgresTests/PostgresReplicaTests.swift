import Foundation
import Replica
import ReplicaPostgres
import ReplicaTestSupport
import Testing

@Suite("PostgreSQL replica")
struct PostgresReplicaTests {
    @Test("a URL is parsed and shown without its password")
    func urls() throws {
        let url = try PostgresURL("postgres://app:s3cret@db.internal:6543/cache")
        #expect(url.host == "db.internal")
        #expect(url.port == 6543)
        #expect(url.username == "app")
        #expect(url.password == "s3cret")
        #expect(url.database == "cache")
        #expect(url.description == "postgres://app@db.internal:6543/cache")
        #expect(try PostgresURL("postgresql://app@localhost/cache").port == 5432)
        let missing = #expect(throws: PostgresStoreError.self) { try PostgresURL("postgres://app:pw@localhost") }
        #expect(missing?.description == "postgres://app@localhost: the URL names no database (postgres://USER@HOST/DATABASE)")
        #expect(PostgresURL.isPostgres("blog.sqlite") == false)
    }

    @Test("connection refused, an unknown database and a schema mismatch are errors naming the URL without its password")
    func openErrors() async throws {
        let cluster = try await PostgresCluster.start()
        let schema = try TestStore.schema()
        let closedPort = try PostgresCluster.freePort()
        let refused = await #expect(throws: PostgresStoreError.self) {
            _ = try await PostgresReplica.open(url: "postgres://app:pw@127.0.0.1:\(closedPort)/cache", schema: schema)
        }
        #expect(refused?.code == .connectionRefused)
        #expect(refused?.url == "postgres://app@127.0.0.1:\(closedPort)/cache")
        #expect(refused?.description.contains("pw") == false)

        let unknown = await #expect(throws: PostgresStoreError.self) {
            _ = try await PostgresReplica.open(url: "postgres://postgres:pw@127.0.0.1:\(cluster.port)/nothing_here", schema: schema)
        }
        #expect(unknown?.code == .unknownDatabase)
        #expect(unknown?.description == "postgres://postgres@127.0.0.1:\(cluster.port)/nothing_here: database \"nothing_here\" does not exist")

        let url = try await cluster.makeDatabase()
        let replica = try await PostgresReplica.open(url: url, schema: schema)
        await replica.close()
        let blog = try TestStore.schema("blog.json")
        let mismatch = await #expect(throws: StoreError.self) { _ = try await PostgresReplica.open(url: url, schema: blog) }
        #expect(mismatch?.code == .incompatibleSchema)
        #expect(mismatch?.description == "\(url): the database holds schema 'people', not 'blog'")
        // Reopening without a schema uses the recorded one.
        let reopened = try await PostgresReplica.open(url: url)
        #expect(reopened.schema.name == "people")
        await reopened.close()
    }

    @Test("a higher schema version adds its attribute to the existing table, keeping the rows")
    func additiveMigration() async throws {
        let url = try await PostgresCluster.start().makeDatabase()
        let schema = try TestStore.schema()
        let replica = try await PostgresReplica.open(url: url, schema: schema)
        _ = try await withTeardown {
            try await replica.sync(.get, "/people", body: peopleJSON([(1, "Ann", 1)]))
        } teardown: {
            await replica.close()
        }
        var json = try String(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"), encoding: .utf8)
        json = json.replacingOccurrences(of: "\"version\": 1", with: "\"version\": 2")
            .replacingOccurrences(of: "\"avatar\": \"data\"", with: "\"avatar\": \"data\",\n        \"nickname\": \"string\"")
        let newer = try Schema(json: Data(json.utf8), file: "people v2")
        let migrated = try await PostgresReplica.open(url: url, schema: newer)
        try await withTeardown {
            _ = try await migrated.sync(.get, "/people/1", body: Data(#"{"id": 1, "nickname": "A"}"#.utf8))
            let row = try #require(try await migrated.rows(RowQuery("Person")).first)
            #expect(row["name"] == .string("Ann"))
            #expect(row["nickname"] == .string("A"))
        } teardown: {
            await migrated.close()
        }
    }

    @Test("an observer of another replica on the same database gets its syncs' change sets, keys and all")
    func otherProcessesSeeCommits() async throws {
        let url = try await PostgresCluster.start().makeDatabase()
        let schema = try TestStore.schema()
        let writer = try await PostgresReplica.open(url: url, schema: schema)
        let watcher = try await PostgresReplica.open(url: url)
        try await withTeardown {
            let changes = await watcher.changes(for: ["Person"])
            var iterator = changes.makeAsyncIterator()
            _ = try await writer.sync(.get, "/people", body: peopleJSON([(1, "Ann", 1), (2, "Bob", 2)]))
            let small = try #require(await iterator.next())
            #expect(small["Person"]?.inserted.integers == [1, 2])

            // Too many keys for a NOTIFY payload: they travel through the changes table.
            let many = (1...3_000).map { (id: $0, name: "P\($0)", kids: Optional($0 % 4)) }
            _ = try await writer.sync(.get, "/people", body: peopleJSON(many))
            let large = try #require(await iterator.next())
            #expect(large["Person"]?.inserted.integers == Array(3...3_000).map(Int64.init))
            #expect(large["Person"]?.updated.integers == [1, 2])
            #expect(large.sequence > small.sequence)
        } teardown: {
            await writer.close()
            await watcher.close()
        }
    }

    @Test("two replicas syncing one collection at once never interleave: the result is one sync whole")
    func manyWriters() async throws {
        let url = try await PostgresCluster.start().makeDatabase()
        let schema = try TestStore.schema()
        let a = try await PostgresReplica.open(url: url, schema: schema)
        let b = try await PostgresReplica.open(url: url)
        try await withTeardown {
            for round in 0..<5 {
                let first = peopleJSON((1...4_000).map { (id: $0, name: "A\(round)", kids: Optional(1)) })
                let second = peopleJSON((2_001...6_000).map { (id: $0, name: "B\(round)", kids: Optional(2)) })
                async let one = a.sync(.get, "/people", body: first)
                async let two = b.sync(.get, "/people", body: second)
                let (resultA, resultB) = try await (one, two)
                let rows = try await a.rows(RowQuery("Person"))
                let names = Set(rows.map { $0["name"] })
                // The later commit's collection, whole: its rows and nothing else.
                #expect(names.count == 1)
                if names == [.string("A\(round)")] {
                    #expect(rows.map(\.primaryKey) == (1...4_000).map { .integer(Int64($0)) })
                    #expect(resultA.changes.sequence > resultB.changes.sequence)
                } else {
                    #expect(names == [.string("B\(round)")])
                    #expect(rows.map(\.primaryKey) == (2_001...6_000).map { .integer(Int64($0)) })
                    #expect(resultB.changes.sequence > resultA.changes.sequence)
                }
            }
        } teardown: {
            await a.close()
            await b.close()
        }
    }
}

@Suite("PostgreSQL SQL text")
struct PostgresSQLTests {
    @Test("placeholders are numbered outside literals, quoted identifiers and comments")
    func placeholders() {
        #expect(PostgresSQLProbe.numbered("a = ? AND b <> '?' AND \"c?\" = ? -- ?\n OR d = ?")
                == "a = $1 AND b <> '?' AND \"c?\" = $2 -- ?\n OR d = $3")
    }

    @Test("bare attribute names in a where-clause read their columns whatever their case, as on SQLite")
    func attributeNames() {
        let names = ["id", "name", "numberOfKids"]
        #expect(PostgresSQLProbe.quoting("numberofkids > ? AND NAME = 'numberOfKids' AND lower(name) = ?", names)
                == "\"numberOfKids\" > ? AND \"name\" = 'numberOfKids' AND lower(\"name\") = ?")
        #expect(PostgresSQLProbe.quoting("\"numberOfKids\" IS NULL OR t.id = 1", names) == "\"numberOfKids\" IS NULL OR t.id = 1")
    }

    @Test("SQLite's numeric conditions (every row, no row) read as PostgreSQL's booleans; values stay numbers")
    func numericConditions() {
        let names = ["id", "numberOfKids"]
        let empty = RowPredicate.in("id", []) && .greater("numberOfKids", .integer(1))
        #expect(PostgresSQLProbe.condition(empty.sql, names) == #"((FALSE) AND ("numberOfKids" > ?))"#)
        #expect(PostgresSQLProbe.condition((!RowPredicate.in("id", [])).sql, names) == "(NOT (FALSE))")
        #expect(PostgresSQLProbe.condition(" 1 ", names) == "TRUE")
        #expect(PostgresSQLProbe.condition("id IN (1) OR numberOfKids = 0", names) == #""id" IN (1) OR "numberOfKids" = 0"#)
    }
}

@Suite("Opening a store by URL")
struct OpenReplicaStoreTests {
    @Test("postgres:// opens a PostgreSQL replica; sqlite:, file: and plain paths an SQLite engine; both read alike")
    func byURL() async throws {
        let url = try await PostgresCluster.start().makeDatabase()
        let directory = try TemporaryDirectory("replica-open")
        defer { directory.remove() }
        let schema = try TestStore.schema()
        let urls = [url, "sqlite:" + directory.path("a.sqlite"),
                    "file://" + directory.path("b.sqlite"), directory.path("c.sqlite")]
        for location in urls {
            let store = try await openReplicaStore(url: location, schema: schema)
            #expect((store is PostgresReplica) == location.hasPrefix("postgres://"), "\(location)")
            _ = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 2)]), options: SyncOptions())
            #expect(try await store.rows(RowQuery("Person")).map { $0["name"] } == [.string("Ann")], "\(location)")
            await store.close()
        }
        #expect(FileManager.default.fileExists(atPath: directory.path("a.sqlite")))
        #expect(FileManager.default.fileExists(atPath: directory.path("b.sqlite")))
        let refused = await #expect(throws: PostgresStoreError.self) {
            _ = try await openReplicaStore(url: "postgresql://app:pw@127.0.0.1:\(try PostgresCluster.freePort())/cache")
        }
        #expect(refused?.code == .connectionRefused)
    }
}
