import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// A key given twice in one object of a schema file is refused (parsers disagree on which value
/// wins), naming the file, the JSON pointer of the member and where both occurrences are.
@Suite("Schema files: duplicate keys")
struct SchemaDuplicateKeyTests {
    static func error(_ json: String, file: String = "bad.json") -> SchemaError? {
        #expect(throws: SchemaError.self) { try Schema(json: Data(json.utf8), file: file) }
    }

    @Test("an entity given twice is refused with its pointer and both byte offsets, not silently last-wins")
    func duplicateEntity() throws {
        let json = """
            {
              "name": "people",
              "entities": {
                "Person": {"attributes": {"id": "integer"}},
                "Person": {"attributes": {"id": "string"}}
              }
            }

            """
        let error = try #require(Self.error(json, file: "people.json"))
        #expect(error.code == .duplicateKey)
        #expect(error.file == "people.json")
        #expect(error.pointer == JSONPointer("/entities/Person"))
        #expect(error.byteOffset == 91)
        #expect(error.description == "people.json: /entities/Person: key 'Person' is given twice in one object: "
                + "at byte 42 (line 4, column 5) and again at byte 91 (line 5, column 5)")
    }

    @Test("an attribute given twice is refused")
    func duplicateAttribute() throws {
        let json = #"{"name": "t", "entities": {"User": {"attributes": {"id": "integer", "name": "string", "name": "integer"}}}}"#
        let error = try #require(Self.error(json))
        #expect(error.code == .duplicateKey)
        #expect(error.byteOffset == 86)
        #expect(error.description == "bad.json: /entities/User/attributes/name: key 'name' is given twice in one object: "
                + "at byte 68 (line 1, column 69) and again at byte 86 (line 1, column 87)")
    }

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var json: String
        var pointer: String
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "a top-level key", json: #"{"name": "a", "name": "b", "entities": {}}"#, pointer: "/name"),
        Case(name: "a key of an attribute object",
             json: #"{"name": "t", "entities": {"U": {"attributes": {"id": {"type": "integer", "type": "string"}}}}}"#,
             pointer: "/entities/U/attributes/id/type"),
        Case(name: "a relationship",
             json: #"{"name": "t", "entities": {"U": {"attributes": {"id": "integer"}, "relationships": {"#
                + #""p": {"toMany": "U", "inverse": "u"}, "p": {"toMany": "U", "inverse": "u"}}}}}"#,
             pointer: "/entities/U/relationships/p"),
        Case(name: "a key of the second route",
             json: #"{"name": "t", "entities": {"U": {"attributes": {"id": "integer"}}}, "routes": ["#
                + #"{"path": "/a", "target": "U"}, {"path": "/b", "target": "U", "target": "DATA"}]}"#,
             pointer: "/routes/1/target"),
        Case(name: "a route's header, escaped in the pointer",
             json: #"{"name": "t", "entities": {}, "routes": [{"path": "/a", "target": "DATA", "#
                + #""headers": {"X-A/B~": "1", "X-A/B~": "2"}}]}"#,
             pointer: "/routes/0/headers/X-A~1B~0"),
        Case(name: "a key of an index after the first",
             json: #"{"name": "t", "entities": {"U": {"attributes": {"id": "integer"}, "indexes": ["#
                + #"{"attributes": ["id"]}, {"attributes": ["id"], "unique": true, "unique": false}]}}}"#,
             pointer: "/entities/U/indexes/1/unique"),
        Case(name: "a key inside a json default",
             json: #"{"name": "t", "entities": {"U": {"attributes": {"id": "integer", "#
                + #""meta": {"type": "json", "default": {"a": [1, {"b": 1, "b": 2}]}}}}}}"#,
             pointer: "/entities/U/attributes/meta/default/a/1/b"),
        Case(name: "the same key written with an escape",
             json: #"{"name": "t", "entities": {"Person": {"attributes": {"id": "integer"}}, "Per\u0073on": {"attributes": {}}}}"#,
             pointer: "/entities/Person"),
    ]

    @Test("any object of the schema document is checked", arguments: cases)
    func anyObject(_ bad: Case) throws {
        let error = try #require(Self.error(bad.json))
        #expect(error.code == .duplicateKey)
        #expect(error.pointer?.description == bad.pointer)
        #expect(String(describing: error).hasPrefix("bad.json: \(bad.pointer): key '"), "\(error)")
        // The offset is where the key's second occurrence opens its quote.
        let offset = try #require(error.byteOffset)
        let bytes = Array(bad.json.utf8)
        #expect(offset > 0 && offset < bytes.count && bytes[offset] == UInt8(ascii: "\""))
        let key = try #require(JSONPointer(bad.pointer)?.components.last)
        guard case .key(let name) = key else { Issue.record("\(bad.pointer) ends with an index"); return }
        #expect(error.message.hasPrefix("key '\(name)' is given twice in one object: at byte "), "\(error.message)")
    }

    @Test("the first key given twice in document order is named, though a later object repeats one too")
    func firstInDocumentOrder() throws {
        let json = #"{"name": "t", "entities": {"A": {"attributes": {"id": "integer", "id": "string"}}, "A": {"attributes": {}}}}"#
        let error = try #require(Self.error(json))
        #expect(error.pointer == JSONPointer("/entities/A/attributes/id"))
        #expect(error.message == "key 'id' is given twice in one object: at byte 48 (line 1, column 49) "
                + "and again at byte 65 (line 1, column 66)")
    }

    @Test("a parsed schema whose text gave a key twice is refused too, without offsets; one key per object loads")
    func parsedValue() throws {
        let value = try JSONValue(parsing: #"{"name": "t", "entities": {"U": {"attributes": {"id": "integer"}}, "U": {"attributes": {"id": "string"}}}}"#)
        let error = #expect(throws: SchemaError.self) { try Schema(jsonValue: value, file: "parsed.json") }
        #expect(error?.code == .duplicateKey)
        #expect(error?.byteOffset == nil)
        #expect(error?.description == "parsed.json: /entities/U: key 'U' is given twice in one object")
        // The same key in different objects is no duplicate.
        let fine = try Schema(json: Data(#"{"name": "t", "entities": {"A": {"attributes": {"id": "integer"}}, "B": {"attributes": {"id": "string"}}}}"#.utf8))
        #expect(fine.entities.map(\.name) == ["A", "B"])
    }
}
