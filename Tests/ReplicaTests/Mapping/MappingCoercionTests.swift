import Foundation
import Testing
@testable import Replica

/// The conversions from JSON values to attribute types, through a property map.
@Suite("Value coercions")
struct MappingCoercionTests {
    /// Maps `{"v": value}` onto an attribute `v` of `type` (with `transform`).
    static func convert(_ value: JSONValue, to type: AttributeType, transform: String? = nil) throws -> AttributeValue? {
        let map = try MappingFixtures.thingMap(Attribute("v", type, transform: transform))
        return try map.map(["v": value], at: JSONPointer("/things/17")!)["v"]
    }

    /// The error of mapping `{"v": value}` onto an attribute `v` of `type`.
    static func failure(_ value: JSONValue, to type: AttributeType, transform: String? = nil) -> MappingError? {
        MappingFixtures.mappingError { _ = try convert(value, to: type, transform: transform) }
    }

    @Test("integer from integers, integral doubles and integer text", arguments: [
        (JSONValue.int(42), Int64(42)), (.int(-7), -7), (.double(3.0), 3), (.double(-0.0), 0),
        (.double(1e18), 1_000_000_000_000_000_000), (.string("42"), 42), (.string(" -7 "), -7),
        (.string("\t+5\n"), 5), (.int(Int64.max), Int64.max), (.string("-9223372036854775808"), Int64.min),
    ])
    func integers(json: JSONValue, expected: Int64) throws {
        #expect(try Self.convert(json, to: .integer) == .integer(expected))
    }

    @Test("integer failures name the value and why", arguments: [
        (JSONValue.string("abc"), #"cannot convert "abc" to integer"#),
        (.double(1.5), "cannot convert 1.5 to integer (it has a fractional part)"),
        (.double(9223372036854775808), "cannot convert 9.223372036854776e+18 to integer (it is out of the 64-bit integer range)"),
        (.string("9223372036854775808"), #"cannot convert "9223372036854775808" to integer (it is out of the 64-bit integer range)"#),
        (.bigInteger("12345678901234567890"), "cannot convert 12345678901234567890 to integer (it is out of the 64-bit integer range)"),
        (.bigInteger("-9223372036854775809"), "cannot convert -9223372036854775809 to integer (it is out of the 64-bit integer range)"),
        (.string("4.0"), #"cannot convert "4.0" to integer"#),
        (.string(""), #"cannot convert "" to integer"#),
        (.string("0x10"), #"cannot convert "0x10" to integer"#),
        (.bool(true), "cannot convert true to integer"),
        (.array([1]), "cannot convert [1] to integer"),
    ])
    func integerFailures(json: JSONValue, message: String) throws {
        let error = Self.failure(json, to: .integer)
        #expect(error?.code == .invalidValue)
        #expect(error?.message == message)
        #expect(error?.pointer == JSONPointer("/things/17/v"))
        #expect(error?.entity == "Thing")
        #expect(error?.attribute == "v")
    }

    @Test("the error text matches the brief's example")
    func errorText() throws {
        let schema = try Schema(name: "t", entities: [
            Entity("User") { Attribute("id", .integer); Attribute("age", .integer) },
        ])
        let users = try MappingFixtures.map("User", in: schema)
        let error = MappingFixtures.mappingError { _ = try users.map(["id": 1, "age": "abc"], at: JSONPointer("/users/17")!) }
        #expect(error?.description == #"User.age at /users/17/age: cannot convert "abc" to integer"#)
        #expect(error?.value == #""abc""#)
    }

    @Test("long offending values are truncated")
    func truncation() throws {
        let long = String(repeating: "x", count: 500)
        let error = Self.failure(.string(long), to: .integer)
        #expect(error?.value == "\"" + String(repeating: "x", count: 59) + "…\"")
        let array = JSONValue.array((0..<100).map { JSONValue.int($0) })
        #expect(Self.failure(array, to: .string)?.value?.hasSuffix(",21,22,…") == true)
        #expect(JSONValue.string("a\"b\\c\nd\u{1}").excerpt() == #""a\"b\\c\nd\u0001""#)
        #expect(JSONValue.object(["k": [nil, false]]).excerpt() == #"{"k":[null,false]}"#)
    }

    @Test("double from numbers and numeric text", arguments: [
        (JSONValue.int(3), 3.0), (.double(2.5), 2.5), (.string("2.5"), 2.5), (.string(" -1e3 "), -1000),
        (.string(".5"), 0.5), (.string("+4"), 4), (.bigInteger("12345678901234567890"), 1.2345678901234567e19),
    ])
    func doubles(json: JSONValue, expected: Double) throws {
        #expect(try Self.convert(json, to: .double) == .double(expected))
    }

    @Test("double failures", arguments: [
        JSONValue.string("abc"), .string("nan"), .string("inf"), .string("0x1p3"), .string("1e999"), .string(""),
        .bool(false), .object([:]),
    ])
    func doubleFailures(json: JSONValue) throws {
        let error = Self.failure(json, to: .double)
        #expect(error?.code == .invalidValue)
        #expect(error?.message == "cannot convert \(json.excerpt()) to double")
    }

    @Test("a big integer beyond a double's range fails as a double, quoting its literal")
    func doubleOverflow() throws {
        let literal = "1" + String(repeating: "0", count: 400)
        let error = Self.failure(.bigInteger(literal), to: .double)
        #expect(error?.message == "cannot convert \(literal.prefix(60))… to double (it is out of the range of a double)")
        #expect(error?.pointer?.description == "/things/17/v")
    }

    @Test("bool from booleans, 1/0 and text", arguments: [
        (JSONValue.bool(true), true), (.bool(false), false), (.int(1), true), (.int(0), false),
        (.double(1), true), (.double(0), false),
        (.string("true"), true), (.string("FALSE"), false), (.string(" True "), true),
        (.string("1"), true), (.string("0"), false), (.string("yes"), true), (.string("No"), false),
    ])
    func bools(json: JSONValue, expected: Bool) throws {
        #expect(try Self.convert(json, to: .bool) == .bool(expected))
    }

    @Test("bool failures", arguments: [
        JSONValue.int(2), .int(-1), .double(0.5), .string("y"), .string("on"), .string(""), .array([]),
    ])
    func boolFailures(json: JSONValue) throws {
        #expect(Self.failure(json, to: .bool)?.message == "cannot convert \(json.excerpt()) to bool")
    }

    @Test("string from text, numbers and bools", arguments: [
        (JSONValue.string(" as is "), " as is "), (.int(42), "42"), (.double(1.5), "1.5"), (.double(2), "2.0"),
        (.bool(true), "true"), (.bool(false), "false"), (.string(""), ""),
        (.bigInteger("12345678901234567890"), "12345678901234567890"), (.bigInteger("-99999999999999999999"), "-99999999999999999999"),
    ])
    func strings(json: JSONValue, expected: String) throws {
        #expect(try Self.convert(json, to: .string) == .string(expected))
    }

    @Test("string failures for arrays and objects")
    func stringFailures() throws {
        #expect(Self.failure(["a"], to: .string)?.message == #"cannot convert ["a"] to string"#)
        #expect(Self.failure(["k": 1], to: .string)?.message == #"cannot convert {"k":1} to string"#)
    }

    @Test("json keeps any value as is")
    func json() throws {
        let nested: JSONValue = ["a": [1, 2.5, "x", nil, ["b": true]]]
        #expect(try Self.convert(nested, to: .json) == .json(nested))
        #expect(try Self.convert("text", to: .json) == .json("text"))
        #expect(try Self.convert(nil, to: .json) == .null)
        #expect(try Self.convert(["j": .bigInteger("12345678901234567890")], to: .json) == .json(["j": .bigInteger("12345678901234567890")]))
    }

    @Test("percentage: 45, \"45\", \"45%\" → 0.45", arguments: [
        (JSONValue.int(45), 0.45), (.string("45"), 0.45), (.string("45%"), 0.45), (.string(" 45 % "), 0.45),
        (.double(12.5), 0.125), (.string("-10%"), -0.1), (.int(0), 0), (.string("100%"), 1),
    ])
    func percentages(json: JSONValue, expected: Double) throws {
        #expect(try Self.convert(json, to: .double, transform: "percentage") == .double(expected))
    }

    @Test("percentage failures", arguments: [JSONValue.string("abc%"), .string("%"), .string("45%%"), .bool(true)])
    func percentageFailures(json: JSONValue) throws {
        #expect(Self.failure(json, to: .double, transform: "percentage")?.message
            == "cannot convert \(json.excerpt()) to percentage")
    }

    @Test("data from base64, standard and URL-safe, with or without padding", arguments: [
        ("aGVsbG8=", Array("hello".utf8)), ("aGVsbG8", Array("hello".utf8)), ("aGk=", Array("hi".utf8)),
        ("aGk", Array("hi".utf8)), ("", []), ("+/8=", [0xFB, 0xFF]), ("-_8=", [0xFB, 0xFF]), ("-_8", [0xFB, 0xFF]),
        ("AAECAwQF", [0, 1, 2, 3, 4, 5]),
    ])
    func base64(text: String, bytes: [UInt8]) throws {
        #expect(try Self.convert(.string(text), to: .data) == .data(bytes))
    }

    @Test("data failures", arguments: [
        JSONValue.string("a"), .string("aGVsbG8=="), .string("aGk=="), .string("aG=k"), .string("aGVs bG8="),
        .string("a==="), .string("é"), .int(5),
    ])
    func base64Failures(json: JSONValue) throws {
        #expect(Self.failure(json, to: .data)?.message == "cannot convert \(json.excerpt()) to data (expected base64 text)")
    }
}
