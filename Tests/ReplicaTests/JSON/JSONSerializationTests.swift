import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("JSON serialization")
struct JSONSerializationTests {
    @Test("compact output and escaping")
    func compact() {
        let value: JSONValue = ["s": "a\"b\\c\n\u{1}\u{1F}é😀/", "n": nil, "b": [true, false], "i": -42, "d": 2.0]
        #expect(value.serialized() == #"{"s":"a\"b\\c\n\u0001\u001fé😀/","n":null,"b":[true,false],"i":-42,"d":2.0}"#)
    }

    @Test("sorted keys and pretty printing")
    func pretty() {
        let value: JSONValue = ["b": [1, [:]], "a": [], "c": ["x": 1]]
        #expect(value.serialized(sortedKeys: true) == #"{"a":[],"b":[1,{}],"c":{"x":1}}"#)
        #expect(value.serialized(pretty: true, sortedKeys: true) == """
            {
              "a": [],
              "b": [
                1,
                {}
              ],
              "c": {
                "x": 1
              }
            }
            """)
    }

    @Test("doubles round-trip in shortest form; non-finite become null")
    func doubles() throws {
        for d in [0.1, 1e20, 1e-7, .leastNonzeroMagnitude, 1.7976931348623157e308, -0.0, 3.25, 2.0, 123456789.125] {
            let text = JSONValue.double(d).serialized()
            #expect(try JSONValue(parsing: text) == .double(d), "\(text)")
        }
        #expect(JSONValue.double(.nan).serialized() == "null")
        #expect(JSONValue.array([.double(.infinity)]).serialized() == "[null]")
        #expect(JSONValue.int(.min).serialized() == "-9223372036854775808")
    }

    @Test("parse(serialize(v)) == v")
    func roundTrip() throws {
        let value: JSONValue = [
            "users": [["id": 1, "name": "Ann \u{0}\u{7F}", "tags": ["a", "b"], "score": 3.5, "ok": true, "x": nil]],
            "meta": ["next": "c\u{2028}", "count": .int(.max), "min": .int(.min), "ratio": 0.1],
            "deep": [[[[["z": -0.0]]]]],
        ]
        for pretty in [false, true] {
            for sorted in [false, true] {
                let text = value.serialized(pretty: pretty, sortedKeys: sorted)
                #expect(try JSONValue(parsing: text) == value)
                #expect(try JSONValue(parsing: value.serializedBytes(pretty: pretty, sortedKeys: sorted)) == value)
            }
        }
    }
}
