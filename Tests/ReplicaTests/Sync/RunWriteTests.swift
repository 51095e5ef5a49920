import Foundation
import GRDB
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Runs of rows written together (``UpsertStatements/writeRun(_:_:cells:arena:outcomes:)``): a
/// range scan, an in-memory comparison and multi-row upserts must store and report exactly what
/// the one-row where-differs upsert does, row after row, for every kind of value and key order.
@Suite("Runs of rows written together")
struct RunWriteTests {
    static let schema: Schema = {
        do {
            return try Schema(name: "runs") {
                Entity("Run") {
                    Attribute("id", .integer)
                    Attribute("name", .string)
                    Attribute("count", .integer)
                    Attribute("score", .double)
                    Attribute("flag", .bool)
                    Attribute("when", .date)
                    Attribute("tags", .json)
                    Attribute("photo", .data)
                }
            }
        } catch {
            fatalError("test schema: \(error)")
        }
    }()

    /// Values of every kind, `null` among them, with the edge cases a byte comparison could get wrong.
    static let names = [#""Ann""#, #""""#, #""Zoë \"Jr\"""#, #""a\u0000b""#, #""a\u0000c""#, "null", #""日本""#]
    static let counts = ["0", "-1", "42", "9223372036854775807", "null"]
    static let scores = ["0.0", "-0.0", "1.5", "1e300", "2.5", "null"]
    static let whens = [#""2024-02-29T12:00:00Z""#, #""1970-01-01T00:00:00Z""#, "null"]
    static let tags = [#"["a", "b"]"#, #"{"k": 1}"#, "[]", "null"]
    static let photos = [#""""#, #""AAEC""#, #""AAED""#, "null"]

    /// One object with values picked by `choice`, the attribute `omit` left out (none when `nil`).
    static func object(_ id: Int64, _ choice: [Int], omitting omit: String? = nil) -> String {
        let fields: [(String, String)] = [
            ("name", names[choice[0] % names.count]), ("count", counts[choice[1] % counts.count]),
            ("score", scores[choice[2] % scores.count]), ("flag", ["true", "false", "null"][choice[3] % 3]),
            ("when", whens[choice[4] % whens.count]), ("tags", tags[choice[5] % tags.count]),
            ("photo", photos[choice[6] % photos.count]),
        ]
        let body = fields.filter { $0.0 != omit }.map { "\"\($0.0)\": \($0.1)" }
        return "{\"id\": \(id), " + body.joined(separator: ", ") + "}"
    }

    /// A first collection of `count` objects, and a second that keeps a third of them as they are,
    /// changes one value in a third (each attribute in turn, the same kind for another value or
    /// `null`), leaves the rest out and adds as many new ones.
    static func collections(count: Int, seed: UInt64, keyStep: Int64 = 1) -> (first: [String], second: [String]) {
        var random = SeededRandom(seed: seed)
        var first: [String] = []
        var second: [String] = []
        for index in 0..<count {
            let id = Int64(index + 1) * keyStep
            let choice = (0..<7).map { _ in random.below(97) }
            first.append(object(id, choice))
            switch index % 3 {
            case 0: second.append(object(id, choice))
            case 1:
                var changed = choice
                changed[index % 7] += 1 + random.below(3)
                second.append(object(id, changed))
            default: break
            }
            second.append(object(Int64(count + index + 1) * keyStep, (0..<7).map { _ in random.below(97) }))
        }
        return (first, second)
    }

    /// The store's rows as text, and each row's storage classes, in key order.
    static func contents(_ store: Store) async throws -> [String] {
        try await store.database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT id, quote(name), quote(count), quote(score), quote(flag), quote("when"), quote(tags), quote(photo),
                       typeof(name) || typeof(count) || typeof(score) || typeof(photo) FROM runs ORDER BY id
                """).map { "\($0)" }
        }
    }

    /// Imports `objects` as one array (one transaction: runs of rows).
    static func importAll(_ objects: [String], into engine: SQLiteReplica) async throws -> SyncResult {
        try await engine.importChunks(Chunked(bytes: Array(("[" + objects.joined(separator: ",\n") + "]").utf8), size: 1 << 16),
                                      into: .entity("Run"))
    }

    /// Imports each object on its own (one row: the one-row upsert) and gathers the keys reported.
    static func importEach(_ objects: [String], into engine: SQLiteReplica) async throws -> (inserted: Set<Int64>, updated: Set<Int64>) {
        var inserted: Set<Int64> = [], updated: Set<Int64> = []
        for object in objects {
            let result = try await importAll([object], into: engine)
            inserted.formUnion(result.changes["Run"]?.inserted.integers ?? [])
            updated.formUnion(result.changes["Run"]?.updated.integers ?? [])
        }
        return (inserted, updated.subtracting(inserted))
    }

    enum Order: String, CaseIterable, CustomTestStringConvertible {
        case ascending, shuffled, descending, sparse
        var testDescription: String { rawValue }
    }

    @Test("a second collection stores and reports what one-row upserts do: new, changed, unchanged rows",
          arguments: Order.allCases)
    func sameAsOneRowUpserts(_ order: Order) async throws {
        var (first, second) = Self.collections(count: 300, seed: 7, keyStep: order == .sparse ? 10 : 1)
        switch order {
        case .ascending, .sparse: second.sort { Self.key($0) < Self.key($1) }
        case .descending: second.sort { Self.key($0) > Self.key($1) }
        case .shuffled:
            var random = SeededRandom(seed: 11)
            for index in second.indices.reversed() where index > 0 { second.swapAt(index, random.below(index + 1)) }
        }
        let together = try SQLiteReplica(store: try Store.inMemory(schema: Self.schema))
        let oneByOne = try SQLiteReplica(store: try Store.inMemory(schema: Self.schema))
        _ = try await Self.importAll(first, into: together)
        _ = try await Self.importEach(first, into: oneByOne)
        #expect(try await Self.contents(together.store) == Self.contents(oneByOne.store))

        let result = try await Self.importAll(second, into: together)
        let expected = try await Self.importEach(second, into: oneByOne)
        let changes = try #require(result.changes["Run"])
        #expect(Set(changes.inserted.integers) == expected.inserted)
        #expect(Set(changes.updated.integers) == expected.updated)
        // 300 new rows; of the 200 kept, 100 as they were and 100 with one value changed (a few of
        // those to a value SQLite holds equal, as -0.0 and 0.0, so unchanged after all).
        #expect(changes.inserted.count == 300 && (60...100).contains(changes.updated.count))
        #expect(try await Self.contents(together.store) == Self.contents(oneByOne.store))

        // Again: nothing changes.
        let again = try await Self.importAll(second, into: together)
        #expect(again.changes.isEmpty)
    }

    @Test("a repeated key, an attribute left out, and stored values of another storage class are written as SQLite would")
    func repeatsAndOtherStorageClasses() async throws {
        let (first, _) = Self.collections(count: 60, seed: 3)
        var second = first
        // Key 5 twice in the run: the last one wins.
        second.append(Self.object(5, [1, 2, 3, 1, 1, 1, 1]))
        // A run without `name`: its update leaves the stored names as they are.
        let withoutName = (0..<30).map { Self.object(Int64(2000 + $0), [$0, $0, $0, $0, $0, $0, $0], omitting: "name") }
        let changedWithoutName = (0..<30).map { Self.object(Int64(2000 + $0), [$0, $0 + 1, $0, $0, $0, $0, $0], omitting: "name") }
        let together = try SQLiteReplica(store: try Store.inMemory(schema: Self.schema))
        let oneByOne = try SQLiteReplica(store: try Store.inMemory(schema: Self.schema))
        for engine in [together, oneByOne] {
            _ = try await Self.importAll(first + withoutName, into: engine)
            // Values of another storage class than the attribute's, as another program might have left them.
            try await engine.store.database.write { db in
                try db.execute(sql: "UPDATE runs SET count = 'abc', score = 'x' WHERE id IN (7, 8)")
                try db.execute(sql: "UPDATE runs SET name = x'00' WHERE id = 9")
            }
        }
        let result = try await Self.importAll(second + changedWithoutName, into: together)
        let expected = try await Self.importEach(second + changedWithoutName, into: oneByOne)
        let changes = try #require(result.changes["Run"])
        #expect(Set(changes.updated.integers) == expected.updated)
        #expect(changes.inserted.isEmpty && expected.inserted.isEmpty)
        #expect(Set<Int64>([7, 8, 9]).isSubset(of: expected.updated), "a stored value of another class differs")
        #expect(expected.updated.filter { $0 >= 2000 }.count == 30)
        #expect(try await Self.contents(together.store) == Self.contents(oneByOne.store))
        let names = try await together.store.database.read { db in
            try String.fetchAll(db, sql: "SELECT typeof(name) FROM runs WHERE id BETWEEN 2000 AND 2029")
        }
        #expect(names.count == 30 && Set(names).count == 1, "an attribute left out stays as it was")
    }

    @Test("a row SQLite refuses inside a run is named, and nothing of the import is kept")
    func refusedRowIsNamed() async throws {
        let (first, second) = Self.collections(count: 100, seed: 5)
        let engine = try SQLiteReplica(store: try Store.inMemory(schema: Self.schema))
        _ = try await Self.importAll(first, into: engine)
        let before = try await Self.contents(engine.store)
        try await engine.store.database.write { db in
            try db.execute(sql: """
                CREATE TRIGGER refuse_137 BEFORE INSERT ON runs WHEN NEW.id = 137 BEGIN SELECT RAISE(ABORT, 'no row 137 here'); END
                """)
        }
        await #expect {
            _ = try await Self.importAll(second.sorted { Self.key($0) < Self.key($1) }, into: engine)
        } throws: { error in
            guard let error = error as? SyncError else { return false }
            return error.code == .database && error.message.contains("Run 137: no row 137 here")
        }
        #expect(try await Self.contents(engine.store) == before)
    }

    @Test("the statements a run prepares")
    func statements() throws {
        let entity = Self.schema.entities[0]
        let present = [true, true, false, true, false, false, false, true]
        let compared = UpsertStatements.comparedAttributes(entity, present: present)
        #expect(compared == [1, 3, 7])
        #expect(UpsertStatements.runScanSQL(entity, compared: compared)
                == #"SELECT "id", "name", "score", "photo" FROM "runs" WHERE "id" BETWEEN ?1 AND ?2 ORDER BY "id""#)
        #expect(UpsertStatements.multiRowUpsertSQL(entity, present: present, rows: 2)
                == #"INSERT INTO "runs" ("id", "name", "score", "photo") VALUES (?, ?, ?, ?), (?, ?, ?, ?) "#
                + #"ON CONFLICT("id") DO UPDATE SET "name" = excluded."name", "score" = excluded."score", "photo" = excluded."photo""#)
        #expect(UpsertStatements.multiRowUpsertSQL(entity, present: [true], rows: 1)
                == #"INSERT INTO "runs" ("id") VALUES (?) ON CONFLICT("id") DO NOTHING"#)
    }

    @Test("rows a statement: 32, fewer where SQLite's limit on bound parameters would be passed, never none")
    func rowsPerStatement() {
        #expect(UpsertStatements.rowsPerStatement(present: 8, parameterLimit: 32_766) == 32)
        #expect(UpsertStatements.rowsPerStatement(present: 64, parameterLimit: 999) == 15)
        #expect(UpsertStatements.rowsPerStatement(present: 64, parameterLimit: 32_766) == 32)
        #expect(UpsertStatements.rowsPerStatement(present: 64, parameterLimit: 50) == 1)
    }

    static func key(_ object: String) -> Int64 {
        let digits = object.dropFirst(#"{"id": "#.count).prefix { $0.isNumber }
        return Int64(digits) ?? 0
    }
}
