import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// The one-pass hot path: streamed objects decoded in place, straight from the stream's bytes,
/// before the parser looks for their end. It must take the common objects and give every other
/// one, untouched, to the regular path (scan, deliver, map), which stores or reports it exactly.
@Suite("Import hot path in place")
struct InPlaceDecodingTests {
    static let schema = FastObjectDecoderTests.schema

    /// Objects beside those of ``FastObjectDecoderTests``: spacing, key order, repeated and
    /// unknown keys, and malformed ones, whose errors must not change.
    static let extra: [String] = [
        "{ \"id\" :\n 20 , \"name\"\t: \"spaced\" ,\r\n \"active\" : false }",
        #"{"created_at": "2024-02-29T00:00:00Z", "active": true, "id": 21, "name": "keys in another order"}"#,
        #"{"id": 22, "name": "first", "name": "second"}"#,
        #"{"id": 23, "nickname": "not an attribute"}"#,
        // Not a day: the regular path reports it.
        #"{"id": 24, "created_at": "2023-02-29T00:00:00Z"}"#,
        #"{"id": 25, "score": 1e400}"#,
        #"{"id": 26, "name": "trailing comma",}"#,
        "{\"id\": 27, \"name\": \"raw tab\tinside\"}",
        #"{"id": 28 "name": "no comma"}"#,
        #"{"id": 29, "count": 01}"#,
        #"{}"#,
        #"{"id": 30, "name": "caf\u00e9", "count": -0, "score": -0.0, "active": null}"#,
    ]

    static var cases: [String] { FastObjectDecoderTests.accepted + FastObjectDecoderTests.declined + extra }

    /// What an import of `json` into `Item` gave: the changes, the rows and the ignored keys, or the error.
    static func importOutcome(_ json: String, chunkSize: Int) async throws -> String {
        let store = try Store.inMemory(schema: schema)
        let engine = try SQLiteReplica(store: store)
        do {
            let result = try await engine.importChunks(Chunked(bytes: Array(json.utf8), size: chunkSize), into: .entity("Item"),
                                                       options: SyncOptions(onInvalid: .skip))
            let rows = try store.rows("Item").map { "\($0.values)" }
            return "\(result.changes.entities) \(rows) \(result.ignoredKeys.map(\.description)) "
                + "\(result.skipped.map(\.description)) \(result.objectCount)"
        } catch {
            return "error: \(error)"
        }
    }

    @Test("each object stores (or fails) exactly as on the regular path, which a one-byte chunk size forces",
          arguments: cases)
    func sameAsRegularPath(_ object: String) async throws {
        let json = "[" + object + ", {\"id\": 99, \"name\": \"after\"}]"
        let inPlace = try await Self.importOutcome(json, chunkSize: 1 << 16)
        let regular = try await Self.importOutcome(json, chunkSize: 1)
        #expect(inPlace == regular)
    }

    @Test("plain objects are taken in place; unknown, repeated or escaped keys, nested values and bad JSON are not")
    func takenInPlace() throws {
        let map = try PropertyMap(entity: Self.schema.entities[0], in: Self.schema)
        let fast = try #require(FastObjectDecoder(map: map))
        let taken = Self.cases.map { object -> Bool in
            var batch = RowBatch()
            var order = fast.makeKeyOrder()
            var parser = JSONStreamParser()
            var inPlace = false
            let document = Array(("[" + object + "]").utf8)
            do {
                try document.withUnsafeBytes { bytes in
                    try parser.feed(bytes, direct: { tokenizer in
                        batch.beginRow(entity: 0, attributeCount: fast.attributeCount)
                        inPlace = fast.decodeInPlace(&tokenizer, into: &batch, order: &order)
                        return inPlace
                    }, { _ in })
                }
                _ = try parser.finish()
            } catch {
                #expect(!inPlace, "\(object) was taken in place, yet it is not valid JSON")
            }
            return inPlace
        }
        let accepted = FastObjectDecoderTests.accepted.count, declined = FastObjectDecoderTests.declined.count
        // The hot path's accepted objects, but the one with an unknown key with a nested value.
        #expect(taken[..<accepted] == [true, true, true, false, true, true])
        #expect(taken[accepted..<(accepted + declined)].allSatisfy { !$0 })
        #expect(Array(taken[(accepted + declined)...]) == [true, true, false, false, false, false, false, false, false, false, false, true])
    }

    @Test("keys given in another order than the last object's are still matched")
    func keyOrderChanges() throws {
        let map = try PropertyMap(entity: Self.schema.entities[0], in: Self.schema)
        let fast = try #require(FastObjectDecoder(map: map))
        var batch = RowBatch()
        var order = fast.makeKeyOrder()
        var parser = JSONStreamParser()
        var taken = 0
        let document = Array(#"[{"id": 1, "name": "a", "count": 1}, {"count": 2, "id": 2, "name": "b"}, {"name": "c", "id": 3}]"#.utf8)
        try document.withUnsafeBytes { bytes in
            try parser.feed(bytes, direct: { tokenizer in
                batch.beginRow(entity: 0, attributeCount: fast.attributeCount)
                guard fast.decodeInPlace(&tokenizer, into: &batch, order: &order) else {
                    batch.discardRow()
                    return false
                }
                batch.commitRow(isTopLevel: true)
                taken += 1
                return true
            }, { _ in Issue.record("an object went the regular path") })
        }
        _ = try parser.finish()
        #expect(taken == 3)
        let names = (0..<3).map { row in batch.value(of: batch.cells[batch.rows[row].firstCell + 1]) }
        #expect(names == [.string("a"), .string("b"), .string("c")])
    }
}
