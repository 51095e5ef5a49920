import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// The statements the writer prepares: which columns their "some value differs" test compares first.
@Suite("Upsert statements")
struct UpsertStatementTests {
    static let schema: Schema = {
        do {
            return try Schema(name: "mix") {
                Entity("Mix") {
                    Attribute("id", .integer)
                    Attribute("name", .string, nullable: false)
                    Attribute("photo", .data)
                    Attribute("count", .integer)
                    Attribute("note", .string)
                    Attribute("when", .date)
                    Attribute("flag", .bool)
                }
            }
        } catch {
            fatalError("test schema: \(error)")
        }
    }()

    var entity: Entity { Self.schema.entities[0] }

    @Test("the differs test compares numbers, then text, then blobs, each in attribute order")
    func upsertOrder() {
        let sql = UpsertStatements.upsertSQL(entity, present: Array(repeating: true, count: 7))
        #expect(sql == #"INSERT INTO "mixes" ("id", "name", "photo", "count", "note", "when", "flag") VALUES (?, ?, ?, ?, ?, ?, ?) "#
                + #"ON CONFLICT("id") DO UPDATE SET "name" = excluded."name", "photo" = excluded."photo", "count" = excluded."count", "#
                + #""note" = excluded."note", "when" = excluded."when", "flag" = excluded."flag" "#
                + #"WHERE "count" IS NOT excluded."count" OR "when" IS NOT excluded."when" OR "flag" IS NOT excluded."flag" "#
                + #"OR "name" IS NOT excluded."name" OR "note" IS NOT excluded."note" OR "photo" IS NOT excluded."photo""#)
    }

    @Test("a partial object's update numbers its values, so the differs test can compare them in any order")
    func partialUpdateOrder() {
        let sql = UpsertStatements.updateSQL(entity, present: [true, false, true, false, true, true])
        #expect(sql == #"UPDATE "mixes" SET "photo" = ?1, "note" = ?2, "when" = ?3 WHERE "id" = ?4 "#
                + #"AND ("when" IS NOT ?3 OR "note" IS NOT ?2 OR "photo" IS NOT ?1)"#)
        #expect(UpsertStatements.updateSQL(entity, present: [true]) == nil, "nothing but the key: nothing to update")
    }

    @Test("partial objects (no required name) update, keep or skip rows by every present value")
    func partialObjects() async throws {
        let store = try Store.inMemory(schema: Self.schema)
        let engine = try SQLiteReplica(store: store)
        func load(_ json: String) async throws -> SyncResult {
            try await engine.importChunks(Chunked(bytes: Array(json.utf8), size: 1 << 16), into: .entity("Mix"))
        }
        _ = try await load(#"[{"id": 1, "name": "a", "count": 1, "note": "x"}, {"id": 2, "name": "b", "count": 2, "note": "y"}]"#)
        // Row 1: only the note differs; row 2: nothing differs; row 3 is new and lacks its name.
        let partial = try await load(#"[{"id": 1, "count": 1, "note": "z"}, {"id": 2, "count": 2, "note": "y"}]"#)
        #expect(partial.changes["Mix"]?.updated.ints == [1])
        #expect(partial.changes["Mix"]?.inserted.isEmpty ?? true)
        let rows = try store.rows("Mix")
        #expect(rows.map { $0["name"] } == [.string("a"), .string("b")])
        #expect(rows.map { $0["note"] } == [.string("z"), .string("y")])
        #expect(rows.map { $0["count"] } == [.integer(1), .integer(2)])
        let counted = try await load(#"[{"id": 2, "count": 3, "note": "y"}]"#)
        #expect(counted.changes["Mix"]?.updated.ints == [2])
        #expect(try store.rows("Mix").map { $0["count"] } == [.integer(1), .integer(3)])
    }
}
