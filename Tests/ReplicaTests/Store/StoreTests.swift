import Foundation
import GRDB
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Store")
struct StoreTests {
    static func allTypesSchema() throws -> Schema {
        try Schema(name: "types") {
            Entity("Thing") {
                Attribute("id", .integer)
                Attribute("text", .string)
                Attribute("number", .integer)
                Attribute("ratio", .double)
                Attribute("flag", .bool)
                Attribute("when", .date)
                Attribute("bytes", .data)
                Attribute("doc", .json)
            }
        }
    }

    /// Inserts `values` (by attribute name) into the entity's table.
    static func insert(_ store: Store, _ entityName: String, _ values: [String: AttributeValue]) throws {
        let entity = try store.requireEntity(entityName)
        let names = values.keys.sorted()
        let sql = "INSERT INTO \(entity.tableName.quotedIdentifier) ("
            + names.map(\.quotedIdentifier).joined(separator: ", ") + ") VALUES ("
            + names.map { _ in "?" }.joined(separator: ", ") + ")"
        try store.database.write { db in
            try db.execute(sql: sql, arguments: StatementArguments(names.map { values[$0]?.databaseValue ?? .null }))
        }
    }

    @Test("every attribute type round-trips through the store")
    func typesRoundTrip() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.path("types.sqlite"), schema: try Self.allTypesSchema())
        let doc: JSONValue = ["tags": ["a", "b"], "nested": ["x": 1.5, "y": nil, "ok": true], "big": .int(Int64.max)]
        let rows: [[String: AttributeValue]] = [
            ["id": .integer(1), "text": .string("héllo 👋 'quoted' \"double\""), "number": .integer(Int64.max),
             "ratio": .double(0.1), "flag": .bool(true), "when": .date(Date(timeIntervalSince1970: 1_714_566_896.123)),
             "bytes": .data([0, 1, 2, 255, 0]), "doc": .json(doc)],
            ["id": .integer(2), "text": .string(""), "number": .integer(Int64.min), "ratio": .double(-1e300),
             "flag": .bool(false), "when": .date(Date(timeIntervalSince1970: -86_400)), "bytes": .data([]),
             "doc": .json(.array([]))],
            ["id": .integer(3), "text": .null, "number": .null, "ratio": .null, "flag": .null, "when": .null,
             "bytes": .null, "doc": .null],
        ]
        for row in rows { try Self.insert(store, "Thing", row) }
        let read = try store.rows("Thing")
        #expect(read.count == 3)
        for (expected, actual) in zip(rows, read) {
            for (name, value) in expected {
                #expect(actual[name] == value, "\(name)")
            }
        }
        // The storage classes are the documented ones.
        let storage = try store.database.read { db in
            try Row.fetchOne(db, sql: "SELECT typeof(flag), typeof(\"when\"), typeof(doc), typeof(bytes) FROM things WHERE id = 1")
        }
        #expect(storage?[0] == "integer")
        #expect(storage?[1] == "real")
        #expect(storage?[2] == "text")
        #expect(storage?[3] == "blob")
    }

    @Test("where-clause, arguments, sort and limit")
    func querying() throws {
        let store = try Store.inMemory(schema: try Schema(contentsOf: TestSupport.schemaFile("blog.json")))
        for (id, name) in [(1, "Cleo"), (2, "Ann"), (3, "Bob"), (4, "Ann")] {
            try Self.insert(store, "User", ["userID": .integer(Int64(id)), "name": .string(name)])
        }
        let sorted = try store.rows("User", sort: [.ascending("name")])
        #expect(sorted.map(\.primaryKey) == [.integer(2), .integer(4), .integer(3), .integer(1)])
        let descending = try store.rows("users", sort: [.descending("name")], limit: 2)
        #expect(descending.map(\.primaryKey) == [.integer(1), .integer(3)])
        let filtered = try store.rows("User", where: "name = ?", arguments: [.string("Ann")])
        #expect(filtered.map(\.primaryKey) == [.integer(2), .integer(4)])
        #expect(try store.count("User", where: "userID > ?", arguments: [.integer(1)]) == 3)
        #expect(try store.rows("User", sort: [.ascending("userID")], limit: 2, offset: 1).map(\.primaryKey)
                == [.integer(2), .integer(3)])

        let unknown = #expect(throws: StoreError.self) { try store.rows("Users2") }
        #expect(unknown?.code == .unknownEntity)
        let badSort = #expect(throws: StoreError.self) { try store.rows("User", sort: [.ascending("nmae")]) }
        #expect(badSort?.code == .unknownAttribute)
        let badSQL = #expect(throws: StoreError.self) { try store.rows("User", where: "name = = ?") }
        #expect(badSQL?.code == .sqlite)
        #expect(try SortKey.parseList("name,-age") == [.ascending("name"), .descending("age")])
    }

    @Test("rows decode into a Decodable struct")
    func decodable() throws {
        struct User: Decodable, Equatable {
            var userID: Int
            var name: String
            var email: String?
            var friends: [Int]?
            var createdAt: Date?
        }
        let store = try Store.inMemory(schema: try Schema(contentsOf: TestSupport.schemaFile("blog.json")))
        try Self.insert(store, "User", ["userID": .integer(7), "name": .string("Ann"), "email": .string("ann@example.com"),
                                        "friends": .json([1, 2, 3]), "createdAt": .date(Date(timeIntervalSince1970: 1000))])
        try Self.insert(store, "User", ["userID": .integer(8), "name": .string("Bob")])
        let users = try store.fetch(User.self, from: "User")
        #expect(users == [
            User(userID: 7, name: "Ann", email: "ann@example.com", friends: [1, 2, 3], createdAt: Date(timeIntervalSince1970: 1000)),
            User(userID: 8, name: "Bob", email: nil, friends: nil, createdAt: nil),
        ])
        struct Wrong: Decodable { var name: Int }
        let error = #expect(throws: StoreError.self) { try store.fetch(Wrong.self, from: "User") }
        #expect(error?.code == .decoding)
        #expect(error?.message.contains("User 7") == true)
    }

    @Test("hostile entity and attribute names are quoted, never executed")
    func hostileNames() throws {
        let hostile = "\"; DROP TABLE x; --"
        let schema = try Schema(name: "hostile") {
            Entity("x", tableName: "x") { Attribute("id", .integer) }
            Entity("order", tableName: "order") {
                Attribute("id", .integer)
                Attribute(hostile, .string, default: .string("it's"))
                Attribute("select", .integer)
                Index([hostile, "select"])
            }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.path("hostile.sqlite"), schema: schema)
        try Self.insert(store, "x", ["id": .integer(1)])
        try Self.insert(store, "order", ["id": .integer(1), hostile: .string("a'; DELETE FROM x; --"), "select": .integer(2)])
        try Self.insert(store, "order", ["id": .integer(2), "select": .integer(1)])
        let rows = try store.rows("order", sort: [.descending(hostile)])
        #expect(rows.map { $0[hostile] } == [.string("it's"), .string("a'; DELETE FROM x; --")])
        #expect(try store.count("x") == 1)
        let tables = try store.database.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        }
        #expect(tables == ["order", "replica_meta", "x"])
        let reopened = try Store(path: directory.path("hostile.sqlite"))
        #expect(reopened.schema == schema)
    }
}
