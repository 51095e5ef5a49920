import Foundation
import Replica
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// The stores the behaviour tests run against.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres
    var testDescription: String { rawValue }
}

/// A fresh, empty store of one kind and what closes it.
struct TestStore {
    let store: any ReplicaStore
    let close: @Sendable () async -> Void
    /// The PostgreSQL URL, for tests that open a second replica on the same database.
    let url: String?
    /// The SQLite file, for tests that open a second replica on it.
    var path: String? = nil

    static func schema(_ name: String = "people.json") throws -> Schema {
        try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas").appendingPathComponent(name))
    }

    static func make(_ kind: StoreKind, schema: Schema? = nil) async throws -> TestStore {
        let schema = try schema ?? Self.schema()
        switch kind {
        case .sqlite:
            let directory = try TemporaryDirectory("replica-store")
            let engine = try SQLiteReplica(store: Store(path: directory.path("test.sqlite"), schema: schema))
            return TestStore(store: engine, close: { directory.remove() }, url: nil, path: directory.path("test.sqlite"))
        case .postgres:
            let url = try await PostgresCluster.start().makeDatabase()
            let replica = try await PostgresReplica.open(url: url, schema: schema)
            return TestStore(store: replica, close: { await replica.close() }, url: url)
        }
    }
}

/// A JSON array of people.
func peopleJSON(_ people: [(id: Int, name: String, kids: Int?)]) -> Data {
    let objects = people.map { person in
        var fields = ["\"id\": \(person.id)", "\"name\": \"\(person.name)\""]
        if let kids = person.kids { fields.append("\"numberOfKids\": \(kids)") }
        return "{" + fields.joined(separator: ", ") + "}"
    }
    return Data(("[" + objects.joined(separator: ", ") + "]").utf8)
}

/// The same behaviour, asserted on SQLite and on PostgreSQL.
@Suite("Store behaviour on SQLite and PostgreSQL")
struct StoreBehaviourTests {
    @Test("an upsert writes only rows whose values differ, and the change set names exactly them", arguments: StoreKind.allCases)
    func upsertWhereDiffers(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        try await withTeardown {
            let store = test.store
            let first = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 2), (2, "Bob", 0), (3, "Cy", nil)]),
                                             options: SyncOptions())
            #expect(first.changes["Person"]?.inserted.integers == [1, 2, 3])
            #expect(first.changes["Person"]?.updated.isEmpty == true)

            let same = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 2), (2, "Bob", 0), (3, "Cy", nil)]),
                                            options: SyncOptions())
            #expect(same.changes.isEmpty)

            let changed = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 3), (2, "Bob", 0), (3, "Cyrus", nil)]),
                                               options: SyncOptions())
            #expect(changed.changes["Person"]?.updated.integers == [1, 3])
            #expect(changed.changes["Person"]?.inserted.isEmpty == true)
            let rows = try await store.rows(RowQuery("Person", sort: [.ascending("id")]))
            #expect(rows.map { $0["name"] } == [.string("Ann"), .string("Bob"), .string("Cyrus")])
            #expect(rows.map { $0["numberOfKids"] } == [.integer(3), .integer(0), .null])
        } teardown: {
            await test.close()
        }
    }

    @Test("a complete collection deletes the rows it no longer lists, inside its scope only", arguments: StoreKind.allCases)
    func scopedStaleDeletion(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        try await withTeardown {
            let store = test.store
            _ = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 1), (2, "Bob", 1)]), options: SyncOptions())
            let cars = #"[{"id": 10, "name": "a", "color": "red"}, {"id": 11, "name": "b", "color": "blue"}]"#
            _ = try await store.sync(.get, "/people/1/cars", body: Data(cars.utf8), options: SyncOptions())
            let bobs = #"[{"id": 20, "name": "c", "color": "green"}]"#
            _ = try await store.sync(.get, "/people/2/cars", body: Data(bobs.utf8), options: SyncOptions())

            let fewer = try await store.sync(.get, "/people/1/cars", body: Data(#"[{"id": 11, "name": "b", "color": "blue"}]"#.utf8),
                                             options: SyncOptions())
            #expect(fewer.changes["Car"]?.deleted.integers == [10])
            #expect(fewer.changes["Car"]?.updated.isEmpty == true)
            let left = try await store.rows(RowQuery("Car", sort: [.ascending("id")]))
            #expect(left.map(\.primaryKey) == [.integer(11), .integer(20)])
            #expect(left.map { $0["personID"] } == [.integer(1), .integer(2)])

            // An empty page of a complete collection empties the scope.
            let none = try await store.sync(.get, "/people/1/cars", body: Data("[]".utf8), options: SyncOptions())
            #expect(none.changes["Car"]?.deleted.integers == [11])
            #expect(try await store.count("Car", where: nil, arguments: []) == 1)
        } teardown: {
            await test.close()
        }
    }

    @Test("a sync that fails halfway leaves the store exactly as it was", arguments: StoreKind.allCases)
    func failedSyncRollsBack(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        try await withTeardown {
            let store = test.store
            _ = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 1)]), options: SyncOptions())
            var many = (2...3_000).map { (id: $0, name: "P\($0)", kids: Optional(1)) }
            many.insert((1, "Changed", 9), at: 0)
            var body = peopleJSON(many)
            body.removeLast()
            body.append(contentsOf: Array(#", {"id": 5000, "name": }]"#.utf8))
            await #expect(throws: SyncError.self) {
                _ = try await store.sync(.get, "/people", body: body, options: SyncOptions())
            }
            let rows = try await store.rows(RowQuery("Person"))
            #expect(rows.count == 1)
            #expect(rows.first?["name"] == .string("Ann"))
            #expect(rows.first?["numberOfKids"] == .integer(1))
        } teardown: {
            await test.close()
        }
    }

    @Test("an object without an attribute keeps its stored value; the last of two objects with one key wins",
          arguments: StoreKind.allCases)
    func partialAndDuplicateObjects(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        try await withTeardown {
            let store = test.store
            _ = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 2), (2, "Bob", 4)]), options: SyncOptions())
            let partial = try await store.sync(.get, "/people/1", body: Data(#"{"id": 1, "name": "Anna"}"#.utf8), options: SyncOptions())
            #expect(partial.changes["Person"]?.updated.integers == [1])
            let twice = #"[{"id": 2, "name": "Bob", "numberOfKids": 5}, {"id": 2, "name": "Robert", "numberOfKids": 6}, {"id": 1, "name": "Anna", "numberOfKids": 2}]"#
            let result = try await store.sync(.get, "/people", body: Data(twice.utf8), options: SyncOptions())
            #expect(result.changes["Person"]?.updated.integers == [2])
            let rows = try await store.rows(RowQuery("Person", sort: [.ascending("id")]))
            #expect(rows.map { $0["name"] } == [.string("Anna"), .string("Robert")])
            #expect(rows.map { $0["numberOfKids"] } == [.integer(2), .integer(6)])
        } teardown: {
            await test.close()
        }
    }

    @Test("rows sort as on SQLite: NULL first ascending, text by its bytes, the key breaking ties", arguments: StoreKind.allCases)
    func ordering(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        try await withTeardown {
            let store = test.store
            let body = #"[{"id": 1, "name": "b"}, {"id": 2, "name": "B"}, {"id": 3, "name": null}, {"id": 4, "name": "a"}, {"id": 5, "name": "b"}, {"id": 6, "name": "é"}]"#
            _ = try await store.sync(.get, "/people", body: Data(body.utf8), options: SyncOptions())
            let ascending = try await store.rows(RowQuery("Person", sort: [.ascending("name")]))
            #expect(ascending.map(\.primaryKey) == [3, 2, 4, 1, 5, 6].map { .integer($0) })
            let descending = try await store.rows(RowQuery("Person", sort: [.descending("name")], limit: 3))
            #expect(descending.map(\.primaryKey) == [6, 1, 5].map { .integer($0) })
            let filtered = try await store.rows(RowQuery("Person", where: "name = ? OR id = ?", arguments: [.string("b"), .integer(4)]))
            #expect(filtered.map(\.primaryKey) == [1, 4, 5].map { .integer($0) })
            #expect(try await store.count("Person", where: "name IS NULL", arguments: []) == 1)
        } teardown: {
            await test.close()
        }
    }

    @Test("values of every type round-trip", arguments: StoreKind.allCases)
    func typesRoundTrip(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        try await withTeardown {
            let store = test.store
            let body = #"[{"id": 1, "name": "tab\there \\ \"q\" \n line", "numberOfKids": -9000000000, "kilometersWalked": 1.5e-7, "avatar": "AAEC/w=="}]"#
            _ = try await store.sync(.get, "/people", body: Data(body.utf8), options: SyncOptions())
            let row = try #require(try await store.rows(RowQuery("Person")).first)
            #expect(row["name"] == .string("tab\there \\ \"q\" \n line"))
            #expect(row["numberOfKids"] == .integer(-9_000_000_000))
            #expect(row["kilometersWalked"] == .double(1.5e-7))
            #expect(row["avatar"] == .data([0, 1, 2, 255]))
        } teardown: {
            await test.close()
        }
    }

    @Test("observers get each commit's exact change set", arguments: StoreKind.allCases)
    func changeStream(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        try await withTeardown {
            let store = test.store
            let changes = await store.changes(for: ["Person"])
            _ = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 1), (2, "Bob", 1)]), options: SyncOptions())
            _ = try await store.sync(.get, "/people", body: peopleJSON([(2, "Bob", 2)]), options: SyncOptions())
            var iterator = changes.makeAsyncIterator()
            let first = try #require(await iterator.next())
            #expect(first["Person"]?.inserted.integers == [1, 2])
            let second = try #require(await iterator.next())
            #expect(second["Person"]?.updated.integers == [2])
            #expect(second["Person"]?.deleted.integers == [1])
            #expect(second.sequence > first.sequence)
        } teardown: {
            await test.close()
        }
    }
}
