import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Import hot path")
struct FastObjectDecoderTests {
    static let schema: Schema = {
        do {
            return try Schema(name: "fast", keyConvention: .snakeCase) {
                Entity("Item") {
                    Attribute("id", .integer)
                    Attribute("name", .string)
                    Attribute("count", .integer)
                    Attribute("score", .double)
                    Attribute("active", .bool)
                    Attribute("createdAt", .date)
                    Attribute("ratio", .double, transform: "percentage")
                    Attribute("tags", .json)
                    Attribute("label", .string, nullable: false, default: .string("none"))
                }
            }
        } catch {
            fatalError("test schema: \(error)")
        }
    }()

    /// Objects the hot path decodes itself, with the values the general path gives.
    static let accepted: [String] = [
        #"{"id": 1, "name": "plain", "count": 3, "score": 1.5, "active": true, "created_at": "2024-05-01T12:34:56Z"}"#,
        #"{"id": 2, "name": "caf\u00e9 \"q\"", "count": "42", "score": 2, "active": 1, "created_at": 1714566896}"#,
        #"{"id": 3, "name": null, "count": null, "score": "3.25", "active": "false", "created_at": 1714566896123}"#,
        #"{"id": 4, "ratio": "45%", "unknown": {"deep": [1, 2]}, "label": "x"}"#,
        #"{"id": 5, "created_at": "2024-05-01T12:34:56.250+02:00", "name": "ünïcode ✓"}"#,
        #"{"id": 10, "name": 12345678901234567890, "score": -99999999999999999999}"#,
    ]

    /// Objects the hot path declines: the general path must map them (or report their error).
    static let declined: [String] = [
        #"{"id": 6, "tags": ["a", "b"]}"#,
        #"{"i\u0064": 7}"#,
        #"{"id": 8, "label": null}"#,
        #"{"id": 9, "count": "nine"}"#,
        #"[1, 2]"#,
        // Beyond a double's range: the general path reports it.
        "{\"id\": 11, \"score\": 1\(String(repeating: "0", count: 400))}",
    ]

    static func decodeFast(_ json: String) throws -> (Bool, [AttributeValue?], Int) {
        let map = try PropertyMap(entity: schema.entities[0], in: schema)
        let fast = try #require(FastObjectDecoder(map: map))
        var values = [AttributeValue?](repeating: nil, count: map.attributes.count)
        var ignored = 0
        let ok = Array(json.utf8).withUnsafeBytes { bytes -> Bool in
            var reader = JSONReader(bytes: bytes)
            return fast.decode(&reader, into: &values, ignoredKeys: &ignored)
        }
        return (ok, values, ignored)
    }

    @Test("decodes flat objects exactly as the property map does", arguments: accepted)
    func sameAsGeneralPath(json: String) throws {
        let map = try PropertyMap(entity: Self.schema.entities[0], in: Self.schema)
        let general = try map.map(value: try JSONValue(parsing: json), at: .root)
        let (ok, values, ignored) = try Self.decodeFast(json)
        #expect(ok)
        #expect(values == general.values)
        #expect(ignored == general.unknownKeyCount)
    }

    @Test("declines what only the general path handles", arguments: declined)
    func declines(json: String) throws {
        #expect(try Self.decodeFast(json).0 == false)
    }
}
