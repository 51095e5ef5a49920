import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("JSON numbers: exact integers, correctly rounded doubles")
struct JSONNumberTests {
    static let cases: [(String, JSONValue)] = [
        ("0", .int(0)),
        ("-0", .double(-0.0)),
        ("9223372036854775807", .int(.max)),
        ("-9223372036854775808", .int(.min)),
        ("9223372036854775808", .bigInteger("9223372036854775808")),
        ("-9223372036854775809", .bigInteger("-9223372036854775809")),
        ("9999999999999999999", .bigInteger("9999999999999999999")),
        ("18446744073709551616", .bigInteger("18446744073709551616")),
        ("123456789012345678901234567890", .bigInteger("123456789012345678901234567890")),
        ("9223372036854775808.0", .double(9223372036854775808.0)),
        ("123456789012345678901234567890e0", .double(1.2345678901234568e29)),
        ("1.0", .double(1.0)),
        ("1e0", .double(1.0)),
        ("0.1", .double(0.1)),
        ("3.25", .double(3.25)),
        ("-2.5E-3", .double(-0.0025)),
        ("1e22", .double(1e22)),
        ("1e23", .double(1e23)),
        ("9007199254740993", .int(9007199254740993)),
        ("9007199254740993.0", .double(9007199254740992.0)),
        ("2.2250738585072014e-308", .double(2.2250738585072014e-308)),
        ("4.9e-324", .double(.leastNonzeroMagnitude)),
        ("1e-400", .double(0.0)),
        ("1.7976931348623157e308", .double(1.7976931348623157e308)),
        ("0.30000000000000004", .double(0.30000000000000004)),
        ("123.456e-2", .double(1.23456)),
        ("0e10", .double(0)),
        ("1E+2", .double(100)),
    ]

    @Test("converts numbers exactly or correctly rounded", arguments: cases.indices)
    func converts(_ index: Int) throws {
        let (text, expected) = Self.cases[index]
        let value = try JSONValue(parsing: text)
        #expect(value == expected, "\(text) → \(value)")
        if case .double(let d) = expected, d == 0 {
            #expect(value.doubleValue?.sign == d.sign, "\(text)")
        }
    }

    @Test("agrees with the standard library on many decimal strings")
    func agreesWithStandardLibrary() throws {
        let seed = testSeed(0x4E55_3B3E)
        var generator = SeededRandom(seed: seed)
        for _ in 0..<2000 {
            let mantissa = UInt64.random(in: 0...UInt64.max, using: &generator) >> UInt64.random(in: 0...63, using: &generator)
            let exponent = Int.random(in: -330...310, using: &generator)
            let text = "\(mantissa)e\(exponent)"
            let expected = Double(text) ?? .nan
            guard expected.isFinite else { continue }
            #expect(try JSONValue(parsing: text) == .double(expected), "\(text) (REPLICA_TEST_SEED=\(seed))")
            let fraction = "\(mantissa / 1000).\(mantissa % 1000)"
            #expect(try JSONValue(parsing: fraction) == .double(Double(fraction) ?? .nan), "\(fraction) (REPLICA_TEST_SEED=\(seed))")
        }
    }

    @Test("integers beyond Int64 keep their literal: serialized as written, rounded only as doubles")
    func bigIntegers() throws {
        let text = #"{"j":12345678901234567890,"n":[-99999999999999999999999,1e400000000000000000000]}"#
        let huge = String(repeating: "9", count: 400)
        let value = try JSONValue(parsing: text.replacingOccurrences(of: "1e400000000000000000000", with: huge))
        #expect(value["j"] == .bigInteger("12345678901234567890"))
        #expect(value["j"]?.doubleValue == 1.2345678901234567e19)
        #expect(value["j"]?.int64Value == nil)
        #expect(value["n"]?[1] == .bigInteger(huge))
        #expect(value["n"]?[1]?.doubleValue == .infinity)
        #expect(value.serialized() == text.replacingOccurrences(of: "1e400000000000000000000", with: huge))
        #expect(try JSONValue(parsing: value.serialized()) == value)
        // Decodable: a big integer that fits UInt64 decodes exactly.
        #expect(try JSONValueDecoder.decode(UInt64.self, from: .bigInteger("18446744073709551615")) == .max)
        #expect(throws: (any Error).self) { try JSONValueDecoder.decode(Int64.self, from: .bigInteger("9223372036854775808")) }
        // A value built by hand that is not a literal serializes as null rather than as broken JSON.
        #expect(JSONValue.array([.bigInteger("12a"), .bigInteger("007")]).serialized() == "[null,null]")
        #expect(JSONValue.isIntegerLiteral("-0") && JSONValue.isIntegerLiteral("120") && !JSONValue.isIntegerLiteral("-"))
    }

    @Test("overflow to infinity is an error at the number")
    func outOfRange() {
        for (text, offset) in [("1e400", 0), ("[1, -1e309]", 4), ("1797693134862315799999e288", 0)] {
            guard case .failure(let error) = jsonParseResult(text) else {
                Issue.record("accepted \(text)")
                continue
            }
            #expect(error.code == .numberOutOfRange, "\(text)")
            #expect(error.byteOffset == offset, "\(text)")
        }
    }
}
