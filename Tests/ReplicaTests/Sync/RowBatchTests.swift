import Foundation
import GRDB
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// A store with entities whose values exercise every cell kind of a ``RowBatch``.
struct BatchFixture {
    static let schema: Schema = {
        do {
            return try Schema(name: "batches", keyConvention: .snakeCase) {
                Entity("Doc") {
                    Attribute("id", .integer)
                    Attribute("title", .string)
                    Attribute("body", .string)
                    Attribute("payload", .data)
                    Attribute("meta", .json)
                    Attribute("when", .date)
                    Attribute("flag", .bool)
                    Attribute("ratio", .double)
                }
                Entity("Tag", primaryKey: "slug", jsonIDKey: "slug") {
                    Attribute("slug", .string)
                    Attribute("label", .string)
                }
                Entity("Part") {
                    Attribute("id", .integer)
                    Attribute("code", .string, nullable: false)
                    Attribute("note", .string)
                }
            }
        } catch {
            fatalError("test schema: \(error)")
        }
    }()

    let store: Store
    let engine: SQLiteReplica

    init() throws {
        store = try Store.inMemory(schema: Self.schema)
        engine = try SQLiteReplica(store: store)
    }

    func load(_ entity: String, _ json: String, chunkSize: Int = 1 << 16,
              options: SyncOptions = SyncOptions()) async throws -> SyncResult {
        try await engine.importChunks(Chunked(bytes: Array(json.utf8), size: chunkSize), into: .entity(entity),
                                      options: options)
    }

    /// One row of SQL, each column as text (`NULL` for null).
    func row(_ sql: String) async throws -> [String] {
        try await store.database.read { db in
            guard let row = try Row.fetchOne(db, sql: sql) else { return [] }
            return row.databaseValues.map { value in
                value.isNull ? "NULL" : String(describing: value.storage.value ?? "")
            }
        }
    }
}

extension DatabaseValue.Storage {
    fileprivate var value: Any? {
        switch self {
        case .null: return nil
        case .int64(let i): return i
        case .double(let d): return d
        case .string(let s): return s
        case .blob(let data): return "x'" + data.map { String(format: "%02X", $0) }.joined() + "'"
        }
    }
}

@Suite("Sync row batches")
struct RowBatchTests {
    @Test("text with NUL, empty and long text, blobs, JSON, dates and booleans are stored byte for byte")
    func edgeValues() async throws {
        let fixture = try BatchFixture()
        let long = String(repeating: "abcdéfgh", count: 40_000)
        let json = """
            [{"id": 1, "title": "a\\u0000b", "body": "", "payload": "AAEC", "meta": {"k": [1, 2]},
              "when": "2024-05-01T12:34:56.250Z", "flag": true, "ratio": 0.5},
             {"id": 2, "title": "\(long)", "body": "tab\\tquote\\" \\ud83d\\ude00", "payload": "", "meta": "plain",
              "flag": false, "ratio": -0.0},
             {"id": 3, "title": null, "body": "ü", "payload": null, "meta": null, "when": 1714566896, "flag": 1},
             {"id": 4, "meta": [true, null, 1.5e3, {"a": "b"}], "title": "\\ud834\\udd1e clef"}]
            """
        let result = try await fixture.load("Doc", json, chunkSize: 1000)
        #expect(result.changes["Doc"]?.inserted.ints == [1, 2, 3, 4])
        let sql = "SELECT hex(title), length(CAST(title AS BLOB)), body, hex(payload), typeof(payload), meta, \"when\", flag, ratio "
            + "FROM \"docs\" WHERE id = "
        let one = try await fixture.row(sql + "1")
        #expect(one == ["610062", "3", "", "000102", "blob", #"{"k":[1,2]}"#, "1714566896.25", "1", "0.5"])
        let two = try await fixture.row(sql + "2")
        #expect(two[1] == String(long.utf8.count))
        #expect(two[2] == "tab\tquote\" 😀")
        #expect(Array(two[3...]) == ["", "blob", #""plain""#, "NULL", "0", "0.0"])
        let three = try await fixture.row(sql + "3")
        #expect(three == ["", "NULL", "ü", "", "null", "NULL", "1714566896.0", "1", "NULL"])
        let four = try await fixture.row(sql + "4")
        #expect(four[5] == #"[true,null,1500.0,{"a":"b"}]"#)
        #expect(four[0] == "F09D849E20636C6566")
        // The same values read through the store's own decoding.
        let rows = try fixture.store.rows("Doc")
        #expect(rows.count == 4)
        #expect(rows[0]["payload"] == .data([0, 1, 2]))
        #expect(rows[0]["meta"] == .json(["k": [1, 2]]))
        #expect(rows[1]["title"] == .string(long))
        #expect(rows[1]["payload"] == .data([]))

        // Importing the same file again changes nothing.
        let again = try await fixture.load("Doc", json, chunkSize: 333)
        #expect(again.changes.isEmpty)
    }

    @Test("thousands of rows over many batches, with shapes changing from row to row")
    func manyBatchesChangingShapes() async throws {
        let fixture = try BatchFixture()
        func object(_ i: Int, version: Int) -> String {
            var fields = [#""id": \#(i)"#]
            if i % 3 != 0 { fields.append(#""title": "t\#(i).\#(version)""#) }
            if i % 5 == 0 { fields.append(#""body": null"#) }
            if i % 7 == 0 { fields.append(#""meta": {"n": \#(i)}"#) }      // the general path
            if i % 11 == 0 { fields.append(#""body": "e\"\#(i)""#) }         // escapes
            if i % 13 == 0 { fields.append(#""payload": "AQ==""#) }
            fields.append(#""ratio": \#(Double(i) / 4)"#)
            return "{" + fields.joined(separator: ", ") + "}"
        }
        let count = 10_000
        let first = "[" + (1...count).map { object($0, version: 1) }.joined(separator: ",\n") + "]"
        let inserted = try await fixture.load("Doc", first, chunkSize: 4096)
        #expect(inserted.changes["Doc"]?.inserted.ints == (1...count).map(Int64.init))
        #expect(inserted.objectCount == count)
        // Only titled rows change; rows without a title keep theirs (absent means untouched).
        let second = "[" + (1...count).map { object($0, version: 2) }.joined(separator: ",\n") + "]"
        let updated = try await fixture.load("Doc", second)
        let titled = (1...count).filter { $0 % 3 != 0 }.map(Int64.init)
        #expect(updated.changes["Doc"]?.updated.ints == titled)
        #expect(updated.changes["Doc"]?.inserted.isEmpty ?? true)
        let sql = "SELECT title, body, quote(payload), meta, ratio FROM \"docs\" WHERE id = "
        let row770 = try await fixture.row(sql + "770")
        #expect(row770 == ["t770.2", "e\"770", "NULL", #"{"n":770}"#, "192.5"])
        let row1365 = try await fixture.row(sql + "1365")
        #expect(row1365 == ["NULL", "NULL", "X'01'", #"{"n":1365}"#, "341.25"])
        let row9999 = try await fixture.row(sql + "9999")
        #expect(row9999 == ["NULL", "e\"9999", "NULL", "NULL", "2499.75"])
        let row10000 = try await fixture.row(sql + "10000")
        #expect(row10000 == ["t10000.2", "NULL", "NULL", "NULL", "2500.0"])
        let unchanged = try await fixture.load("Doc", second, chunkSize: 100_000)
        #expect(unchanged.changes.isEmpty)
        #expect(try fixture.store.count("Doc") == count)
    }

    @Test("text primary keys: change sets, unchanged rows and stale-row deletion")
    func textKeys() async throws {
        let fixture = try BatchFixture()
        let long = String(repeating: "k", count: 5000)
        let first = #"[{"slug": "", "label": "empty"}, {"slug": "ü", "label": "u"}, {"slug": "\#(long)"},"#
            + #" {"slug": "a\"b", "label": "quote"}, {"slug": "x", "label": "x"}]"#
        let result = try await fixture.load("Tag", first)
        #expect(result.changes["Tag"]?.inserted.strings == ["", "ü", long, "a\"b", "x"])
        let options = SyncOptions(stalePolicy: .delete)
        let second = #"[{"slug": "ü", "label": "u2"}, {"slug": "\#(long)"}, {"slug": "a\"b", "label": "quote"}, {"slug": ""}]"#
        let next = try await fixture.load("Tag", second, options: options)
        #expect(next.changes["Tag"]?.updated.strings == ["ü"])
        #expect(next.changes["Tag"]?.inserted.isEmpty ?? true)
        #expect(next.changes["Tag"]?.deleted.strings == ["x"])
        #expect(try fixture.store.count("Tag") == 4)
    }

    @Test("objects lacking a required attribute update existing rows first")
    func partialObjects() async throws {
        let fixture = try BatchFixture()
        _ = try await fixture.load("Part", #"[{"id": 1, "code": "A", "note": "n"}, {"id": 2, "code": "B"}]"#)
        let partial = try await fixture.load("Part", #"[{"id": 1, "note": "m"}, {"id": 2}, {"id": 1, "note": "m"}]"#)
        #expect(partial.changes["Part"]?.updated.ints == [1])
        #expect(try await fixture.row(#"SELECT code, note FROM "parts" WHERE id = 1"#) == ["A", "m"])
        let failure = await #expect(throws: SyncError.self) {
            try await fixture.load("Part", #"[{"id": 3, "code": "C"}, {"id": 4, "note": "no code"}]"#)
        }
        #expect(failure?.code == .database)
        #expect(failure?.message.contains("Part 4") == true)
        #expect(try fixture.store.count("Part") == 2)
    }

    @Test("a batch rolls back a discarded row, keeps unusual keys, and is reusable")
    func batchBuilding() {
        var batch = RowBatch()
        batch.append(PlannedRow(entity: 0, values: [.bool(true), .string("kept"), nil], isTopLevel: true), keyIndex: 0)
        batch.beginRow(entity: 0, attributeCount: 3)
        batch.set(.string("dropped"), 1)
        batch.discardRow()
        batch.beginRow(entity: 1, attributeCount: 2)
        batch.setInteger(7, 0)
        batch.set(.data([]), 1)
        batch.commitRow(isTopLevel: false)
        #expect(batch.count == 2)
        #expect(batch.rows[0].mask == 0b011)
        #expect(batch.key(ofRow: 0, keyIndex: 0) == .bool(true))
        #expect(batch.key(ofRow: 1, keyIndex: 0) == .integer(7))
        #expect(batch.value(of: batch.cells[1]) == .string("kept"))
        #expect(batch.value(of: batch.cells[2]) == nil)
        #expect(batch.value(of: batch.cells[4]) == .data([]))
        #expect(batch.arena.count == 1 + "kept".utf8.count)

        let pool = RowBatchPool(capacity: 2)
        pool.recycle(batch)
        let reused = pool.take()
        #expect(reused.isEmpty && reused.cells.isEmpty && reused.otherKeys.isEmpty)
        #expect(reused.arena == [0])
    }

    @Test("composite keys ride in the batch and survive a spill to the staging file; other unusual keys stay in memory")
    func compositeKeysSpill() throws {
        var batch = RowBatch()
        batch.append(PlannedRow(entity: 0, values: [.string("o"), .string("r"), .string("refs/heads/main"), .string("aa")],
                                isTopLevel: true), keyIndexes: [0, 1, 2])
        batch.append(PlannedRow(entity: 0, values: [.string("o"), .string("s"), .string("refs/heads/main"), nil], isTopLevel: false),
                     keyIndexes: [0, 1, 2])
        batch.append(PlannedRow(entity: 1, values: [.integer(4), .string("x")], isTopLevel: true), keyIndexes: [0])
        let expected: [AttributeValue] = [.compositeKey([.string("o"), .string("r"), .string("refs/heads/main")]),
                                          .compositeKey([.string("o"), .string("s"), .string("refs/heads/main")]), .integer(4)]
        #expect((0..<3).map { batch.key(ofRow: $0, keyIndex: 0) } == expected)
        var seen = [PrimaryKeys(), PrimaryKeys()]
        batch.collectTopLevelKeys(keyIndexes: [0, 0], tracked: [true, true], into: &seen)
        #expect(seen == [PrimaryKeys([expected[0]]), PrimaryKeys([.integer(4)])])

        let staged = StagedRows(memoryBudget: 0)
        try staged.append(batch)
        var odd = RowBatch()
        odd.append(PlannedRow(entity: 1, values: [.double(1.5), .string("y")], isTopLevel: true), keyIndex: 0)
        try staged.append(odd)
        var replayed: [AttributeValue] = []
        var texts: [String] = []
        try staged.replay { batch in
            replayed += (0..<batch.count).map { batch.key(ofRow: $0, keyIndex: 0) }
            texts += batch.cells.compactMap { $0.kind == .text ? batch.text(of: $0) : nil }
        }
        #expect(replayed == expected + [.double(1.5)])
        #expect(texts == ["o", "r", "refs/heads/main", "aa", "o", "s", "refs/heads/main", "x", "y"])
        #expect(StagedRows.encodeTuples([0: .double(1.5)]) == nil)
        #expect(try StagedRows.decodeTuples(Array((StagedRows.encodeTuples([2: expected[0]]) ?? "").utf8)) == [2: expected[0]])
    }
}
