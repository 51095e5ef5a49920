import Foundation
import GRDB
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Store migrations")
struct MigrationTests {
    static func version1() throws -> Schema {
        try Schema(name: "app", version: 1) {
            Entity("User") {
                Attribute("id", .integer)
                Attribute("name", .string, nullable: false)
                Attribute("age", .integer)
            }
        }
    }

    /// A new database at `path` with version 1 and Ann in it.
    static func createVersion1(at path: String) throws {
        let store = try Store(path: path, schema: try version1())
        try StoreTests.insert(store, "User", ["id": .integer(1), "name": .string("Ann"), "age": .integer(30)])
    }

    /// Everything the database holds, to prove nothing changed: its schema SQL, the recorded
    /// Replica schema and every row of every table.
    static func fingerprint(_ path: String) throws -> (String, String?) {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            var dump = ""
            let tables = try Row.fetchAll(db, sql: "SELECT type, name, sql FROM sqlite_master ORDER BY type, name")
            for table in tables {
                dump += "\(table["type"] as String? ?? "") \(table["name"] as String? ?? ""): \(table["sql"] as String? ?? "")\n"
                if table["type"] == "table", let name: String = table["name"] {
                    for row in try Row.fetchAll(db, sql: "SELECT * FROM \(name.quotedIdentifier)") { dump += "  \(row)\n" }
                }
            }
            let recorded = try String.fetchOne(db, sql: "SELECT value FROM replica_meta WHERE key = 'schema'")
            return (dump, recorded)
        }
    }

    @Test("a new entity gets a table, a new attribute a column with its default, a new index is created")
    func additiveMigration() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("app.sqlite")
        try Self.createVersion1(at: path)
        let version2 = try Schema(name: "app", version: 2) {
            Entity("User") {
                Attribute("id", .integer)
                Attribute("name", .string, nullable: false)
                Attribute("age", .integer)
                Attribute("active", .bool, nullable: false, default: .bool(true))
                Attribute("nickname", .string)
                Index(["name"])
            }
            Entity("Team") {
                Attribute("id", .string)
                Attribute("title", .string)
            }
        }
        let store = try Store(path: path, schema: version2)
        let users = try store.rows("User")
        #expect(users.count == 1)
        #expect(users[0]["active"] == .bool(true))
        #expect(users[0]["nickname"] == .null)
        #expect(users[0]["name"] == .string("Ann"))
        try StoreTests.insert(store, "Team", ["id": .string("t1"), "title": .string("Core")])
        #expect(try store.count("Team") == 1)
        let indexes = try store.database.read { db in try db.indexes(on: "users").map(\.name) }
        #expect(indexes.contains("users_name_index"))
        // Reopening without a schema uses the recorded version 2.
        let reopened = try Store(path: path)
        #expect(reopened.schema == version2)
        #expect(reopened.schema.version == 2)
    }

    @Test("a new many-to-many relationship creates its join table, indexed both ways; changing its columns is refused")
    func joinTableMigration() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("app.sqlite")
        try Self.createVersion1(at: path)
        func version(_ number: Int, keys: [String]? = nil) throws -> Schema {
            try Schema(name: "app", version: number) {
                Entity("User") {
                    Attribute("id", .integer)
                    Attribute("name", .string, nullable: false)
                    Attribute("age", .integer)
                    Relationship.toMany("teams", "Team", through: "memberships", keys: keys)
                }
                Entity("Team") {
                    Attribute("id", .string)
                    Relationship.toMany("members", "User", through: "memberships", keys: keys.map { Array($0.reversed()) })
                }
            }
        }
        let store = try Store(path: path, schema: try version(2))
        #expect(try store.count("User") == 1)
        let sql = try store.database.read { db in
            try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE tbl_name = 'memberships' ORDER BY type DESC")
        }
        #expect(sql == [#"CREATE TABLE "memberships" ("userID" INTEGER NOT NULL, "teamID" TEXT NOT NULL, "#
                        + #"PRIMARY KEY ("userID", "teamID")) WITHOUT ROWID"#,
                        #"CREATE INDEX "memberships_teamID_index" ON "memberships" ("teamID", "userID")"#])
        let error = #expect(throws: StoreError.self) { try Store(path: path, schema: try version(3, keys: ["member", "team"])) }
        #expect(error?.message == "join table 'memberships': its columns changed from userID, teamID to member, team; "
                + "Replica migrates additively and does not rename columns")
    }

    @Test("a changed attribute type is refused, naming entity and attribute, and the file is left untouched")
    func refusedTypeChange() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("app.sqlite")
        try Self.createVersion1(at: path)
        let before = try Self.fingerprint(path)
        let changed = try Schema(name: "app", version: 2) {
            Entity("User") {
                Attribute("id", .integer)
                Attribute("name", .string, nullable: false)
                Attribute("age", .string)
            }
            Entity("Team") { Attribute("id", .integer) }
        }
        let error = #expect(throws: StoreError.self) { try Store(path: path, schema: changed) }
        #expect(error?.code == .incompatibleSchema)
        #expect(error?.message.contains("entity 'User', attribute 'age': type changed from integer to string") == true)
        #expect(error?.path == path)
        let after = try Self.fingerprint(path)
        #expect(after.0 == before.0)
        #expect(after.1 == before.1)
        // The new entity of the refused schema was not created either.
        let store = try Store(path: path)
        #expect(store.schema == (try Self.version1()))
        #expect(throws: StoreError.self) { try store.rows("Team") }
    }

    @Test("changes that cannot be applied safely are refused",
          arguments: [
            ("primary key", "primary key changed from 'id' to 'name'"),
            ("nullability", "attribute 'age': changed from nullable to non-null"),
            ("non-null without default", "attribute 'score': a non-null attribute added to an existing entity needs a default"),
            ("same version", "differs from the one recorded at version 1"),
            ("older version", "newer than the given version"),
            ("other schema", "holds schema 'app', not 'other'"),
          ])
    func refusedChanges(change: String, message: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("app.sqlite")
        _ = try Store(path: path, schema: try Self.version1())
        let schema: Schema
        switch change {
        case "primary key":
            schema = try Schema(name: "app", version: 2) {
                Entity("User", primaryKey: "name") {
                    Attribute("id", .integer, nullable: false)
                    Attribute("name", .string, nullable: false)
                    Attribute("age", .integer)
                }
            }
        case "nullability":
            schema = try Schema(name: "app", version: 2) {
                Entity("User") {
                    Attribute("id", .integer)
                    Attribute("name", .string, nullable: false)
                    Attribute("age", .integer, nullable: false)
                }
            }
        case "non-null without default":
            schema = try Schema(name: "app", version: 2) {
                Entity("User") {
                    Attribute("id", .integer)
                    Attribute("name", .string, nullable: false)
                    Attribute("age", .integer)
                    Attribute("score", .double, nullable: false)
                }
            }
        case "same version":
            schema = try Schema(name: "app", version: 1) {
                Entity("User") {
                    Attribute("id", .integer)
                    Attribute("name", .string, nullable: false)
                    Attribute("age", .integer)
                    Attribute("email", .string)
                }
            }
        case "older version":
            _ = try Store(path: path, schema: try Schema(name: "app", version: 3, entities: try Self.version1().entities))
            schema = try Schema(name: "app", version: 2, entities: try Self.version1().entities)
        default:
            schema = try Schema(name: "other", version: 2, entities: try Self.version1().entities)
        }
        let before = try Self.fingerprint(path)
        let error = #expect(throws: StoreError.self) { try Store(path: path, schema: schema) }
        #expect(error?.code == .incompatibleSchema)
        #expect(error?.message.contains(message) == true, "\(error.map(String.init(describing:)) ?? "")")
        #expect(try Self.fingerprint(path).1 == before.1)
    }

    @Test("a recorded schema is read as a schema file is: a key given twice in it is refused, naming where")
    func recordedSchemaWithDuplicateKey() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("app.sqlite")
        _ = try Store(path: path, schema: try Self.version1())
        let recorded = #"{"name": "app", "version": 1, "entities": {"User": {"attributes": {"id": "integer"}}, "#
            + #""User": {"attributes": {"id": "string"}}}}"#
        do {
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            try queue.write { db in
                try db.execute(sql: "UPDATE replica_meta SET value = ? WHERE key = 'schema'", arguments: [recorded])
            }
        }
        let error = #expect(throws: StoreError.self) { try Store(path: path) }
        #expect(error?.code == .corruptMetadata)
        #expect(error?.message == "the recorded schema cannot be read: \(path) (recorded schema): /entities/User: "
                + "key 'User' is given twice in one object: at byte 43 (line 1, column 44) and again at byte 86 (line 1, column 87)")
    }

    @Test("a database without a recorded schema needs one")
    func missingSchema() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let error = #expect(throws: StoreError.self) { try Store(path: directory.path("empty.sqlite")) }
        #expect(error?.code == .missingSchema)
    }

    @Test("opening with the same schema again changes nothing")
    func sameSchema() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("app.sqlite")
        _ = try Store(path: path, schema: try Self.version1())
        let before = try Self.fingerprint(path)
        _ = try Store(path: path, schema: try Self.version1())
        #expect(try Self.fingerprint(path).1 == before.1)
    }

    @Test("an outbox an earlier version made (without precondition and sent_at) gains the columns on open; its mutations read as before")
    func outboxUpgrade() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("people.sqlite")
        let schema = try Schema(contentsOf: TestSupport.schemaFile("people.json"))
        do {
            let replica = try SQLiteReplica(store: Store(path: path, schema: schema))
            try await replica.saveLocally("Person", ["name": .string("Cy")])
            await replica.close()
        }
        let earlier = try DatabaseQueue(path: path)
        try await earlier.write { db in
            try db.execute(sql: "ALTER TABLE replica_outbox DROP COLUMN sent_at")
            try db.execute(sql: "ALTER TABLE replica_outbox DROP COLUMN precondition")
        }
        try earlier.close()

        let replica = try SQLiteReplica(store: Store(path: path, schema: schema))
        let columns = try await replica.store.database.read { db in try db.columns(in: "replica_outbox").map(\.name) }
        #expect(Array(columns.suffix(2)) == ["precondition", "sent_at"])
        let outbox = try await replica.outbox()
        #expect(outbox.map(\.description) == ["#1 create Person -1 (name)"])
        #expect(outbox.first?.sentAt == nil)
        // Never taken by a push: the delete takes it back.
        #expect(try await replica.deleteLocally("Person", key: .integer(-1)) == nil)
        #expect(try await replica.outbox().isEmpty)
        await replica.close()
    }
}
