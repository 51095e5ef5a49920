import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Parses `text`, returning the error instead of throwing it.
func jsonParseResult(_ text: String, limits: JSONLimits = .default) -> Result<JSONValue, JSONParseError> {
    jsonParseResult(Array(text.utf8), limits: limits)
}

func jsonParseResult(_ bytes: [UInt8], limits: JSONLimits = .default) -> Result<JSONValue, JSONParseError> {
    do {
        return .success(try JSONValue(parsing: bytes, limits: limits))
    } catch let error as JSONParseError {
        return .failure(error)
    } catch {
        Issue.record("unexpected error type \(error)")
        return .failure(JSONParseError(code: .unexpectedCharacter, byteOffset: -1, line: 0, column: 0, message: ""))
    }
}

@Suite("JSON parsing: RFC 8259 accept and reject rules")
struct JSONParsingTests {
    static let accepted: [(String, JSONValue)] = [
        ("null", .null),
        ("true", true),
        ("false", false),
        ("0", 0),
        ("-1", -1),
        ("\"\"", ""),
        ("\"abc\"", "abc"),
        ("[]", []),
        ("{}", [:]),
        (" \t\r\n[ 1 , 2 ]\n", [1, 2]),
        (#"{"a":{"b":[true,false,null]}}"#, ["a": ["b": [true, false, nil]]]),
        (#""\" \\ \/ \b \f \n \r \t""#, .string("\" \\ / \u{8} \u{C} \n \r \t")),
        (#""\u0041\u00e9\u20AC""#, "Aé€"),
        (#""\ud83d\ude00""#, "😀"),
        (#""\uD834\uDD1E""#, "𝄞"),
        ("\"é€😀\"", "é€😀"),
        ("\"\u{7F}\"", "\u{7F}"),
        ("1e5", .double(1e5)),
        ("1E+5", .double(1e5)),
        ("1e-5", .double(1e-5)),
        ("-0.5e-2", .double(-0.005)),
        ("0.25", .double(0.25)),
        ("[1,[2,[3,{}]]]", [1, [2, [3, [:]]]]),
        (#"{"a":1,"a":2}"#, ["a": 2]),
        (#"{"":0}"#, ["": 0]),
    ]

    @Test("accepts everything RFC 8259 allows", arguments: accepted.indices)
    func accepts(_ index: Int) throws {
        let (text, expected) = Self.accepted[index]
        #expect(try JSONValue(parsing: text) == expected, "\(text)")
    }

    /// (input, code, byte offset)
    static let rejected: [(String, JSONParseError.Code, Int)] = [
        ("", .unexpectedEnd, 0),
        ("   ", .unexpectedEnd, 3),
        ("[1,2,]", .unexpectedCharacter, 5),
        (#"{"a":1,}"#, .unexpectedCharacter, 7),
        ("[1 2]", .unexpectedCharacter, 3),
        (#"{"a" 1}"#, .unexpectedCharacter, 5),
        (#"{"a":}"#, .unexpectedCharacter, 5),
        ("{1:2}", .unexpectedCharacter, 1),
        ("{'a':1}", .unexpectedCharacter, 1),
        ("01", .invalidNumber, 1),
        ("-01", .invalidNumber, 2),
        ("+1", .invalidNumber, 0),
        (".5", .invalidNumber, 0),
        ("1.", .unexpectedEnd, 2),
        ("[1.]", .invalidNumber, 3),
        ("[1.e5]", .invalidNumber, 3),
        ("[1e]", .invalidNumber, 3),
        ("[1e+]", .invalidNumber, 4),
        ("[-]", .invalidNumber, 2),
        ("[1.5.3]", .invalidNumber, 4),
        ("[0x10]", .unexpectedCharacter, 2),
        ("-", .unexpectedEnd, 1),
        ("NaN", .unexpectedCharacter, 0),
        ("Infinity", .unexpectedCharacter, 0),
        ("-Infinity", .invalidNumber, 1),
        ("nul", .unexpectedEnd, 3),
        ("nulx", .unexpectedCharacter, 3),
        ("tru", .unexpectedEnd, 3),
        ("True", .unexpectedCharacter, 0),
        ("[truex]", .unexpectedCharacter, 5),
        ("undefined", .unexpectedCharacter, 0),
        ("abc", .unexpectedCharacter, 0),
        ("[", .unexpectedEnd, 1),
        ("[1", .unexpectedEnd, 2),
        ("[1,", .unexpectedEnd, 3),
        ("{", .unexpectedEnd, 1),
        (#"{"a""#, .unexpectedEnd, 4),
        (#"{"a":"#, .unexpectedEnd, 5),
        ("]", .unexpectedCharacter, 0),
        ("[}", .unexpectedCharacter, 1),
        (#"{"a":1]"#, .unexpectedCharacter, 6),
        ("[1]]", .trailingCharacters, 3),
        ("1 2", .trailingCharacters, 2),
        ("{} x", .trailingCharacters, 3),
        ("\"abc", .unexpectedEnd, 4),
        (#""\x""#, .invalidEscape, 1),
        (#""\u12G4""#, .invalidEscape, 1),
        (#""\u12""#, .invalidEscape, 1),
        (#""\ud800""#, .invalidUnicode, 1),
        (#""\ud800x""#, .invalidUnicode, 1),
        (#""\ud800\u0041""#, .invalidUnicode, 1),
        (#""\udc00""#, .invalidUnicode, 1),
        (#""a\ude00\ud800""#, .invalidUnicode, 2),
        ("\"a\u{1}b\"", .controlCharacter, 2),
        ("\"a\nb\"", .controlCharacter, 2),
        ("\"\t\"", .controlCharacter, 1),
        ("[1,\u{0C}2]", .unexpectedCharacter, 3),
        ("\u{A0}1", .unexpectedCharacter, 0),
    ]

    @Test("rejects everything RFC 8259 rejects, at the right byte", arguments: rejected.indices)
    func rejects(_ index: Int) {
        let (text, code, offset) = Self.rejected[index]
        guard case .failure(let error) = jsonParseResult(text) else {
            Issue.record("accepted \(text.debugDescription)")
            return
        }
        #expect(error.code == code, "\(text.debugDescription): \(error)")
        #expect(error.byteOffset == offset, "\(text.debugDescription): \(error)")
        #expect(error.message.contains("expected"), "\(error)")
    }

    /// Raw bytes that are not well-formed UTF-8 inside a string: (bytes, offset of the bad sequence).
    static let invalidUTF8: [([UInt8], Int)] = [
        ([0x22, 0xC0, 0xAF, 0x22], 1),  // overlong '/'
        ([0x22, 0xC1, 0xBF, 0x22], 1),  // overlong
        ([0x22, 0xE0, 0x80, 0xAF, 0x22], 1),  // overlong 3-byte
        ([0x22, 0xF0, 0x80, 0x80, 0xAF, 0x22], 1),  // overlong 4-byte
        ([0x22, 0xED, 0xA0, 0x80, 0x22], 1),  // UTF-8 encoded surrogate D800
        ([0x22, 0xED, 0xBF, 0xBF, 0x22], 1),  // surrogate DFFF
        ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 1),  // > U+10FFFF
        ([0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], 1),
        ([0x22, 0xFF, 0x22], 1),
        ([0x22, 0x80, 0x22], 1),  // lone continuation
        ([0x22, 0x61, 0xC3, 0x22], 2),  // truncated 2-byte
        ([0x22, 0xE2, 0x82, 0x22], 1),  // truncated 3-byte
        ([0x22, 0xF0, 0x9F, 0x98, 0x22], 1),  // truncated 4-byte
        ([0x22, 0xE2, 0x28, 0xA1, 0x22], 1),
    ]

    @Test("rejects invalid UTF-8 in strings", arguments: invalidUTF8.indices)
    func rejectsInvalidUTF8(_ index: Int) {
        let (bytes, offset) = Self.invalidUTF8[index]
        guard case .failure(let error) = jsonParseResult(bytes) else {
            Issue.record("accepted \(bytes)")
            return
        }
        #expect(error.code == .invalidUTF8)
        #expect(error.byteOffset == offset)
    }

    @Test("accepts the UTF-8 boundary code points")
    func acceptsUTF8Boundaries() throws {
        for scalar in [0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x10FFFF] {
            let character = String(Character(Unicode.Scalar(UInt32(scalar)).unsafelyUnwrapped))
            #expect(try JSONValue(parsing: "\"\(character)\"") == .string(character))
        }
    }

    @Test("rejects a leading byte order mark")
    func rejectsByteOrderMark() {
        guard case .failure(let error) = jsonParseResult([0xEF, 0xBB, 0xBF] + Array("[]".utf8)) else {
            Issue.record("accepted a BOM")
            return
        }
        #expect(error.code == .unexpectedCharacter)
        #expect(error.byteOffset == 0)
        #expect(error.message.contains("byte order mark"))
    }

    @Test("errors give line, column and a readable description")
    func errorLocation() {
        let text = "{\n  \"a\": [1,\n    2 3]\n}"
        guard case .failure(let error) = jsonParseResult(text) else {
            Issue.record("accepted")
            return
        }
        #expect(error.code == .unexpectedCharacter)
        #expect(error.byteOffset == 19)
        #expect(error.line == 3)
        #expect(error.column == 7)
        #expect(error.description == "byte 19 (line 3, column 7): unexpected '3': expected ',' or ']' after array element")
    }

    /// (bytes, the error's offset, its message) for a backslash followed by a byte that starts no escape.
    static let badEscapes: [([UInt8], Int, String)] = [
        ([0x22, 0x61, 0x5C, 0x00, 0x22], 2, "invalid escape: '\\' followed by byte 0x00; "),
        (Array(#"["\x"]"#.utf8), 2, "invalid escape '\\x': "),
        ([0x22, 0x5C, 0x20, 0x22], 1, "invalid escape: '\\' followed by space; "),
        ([0x22, 0x5C, 0x0A, 0x22], 1, "invalid escape: '\\' followed by line feed; "),
        ([0x22, 0x5C, 0xC3, 0xA9, 0x22], 1, "invalid escape: '\\' followed by byte 0xC3; "),
    ]

    @Test("an invalid escape names the byte after the backslash, at the backslash's byte offset", arguments: badEscapes.indices)
    func invalidEscapeMessage(_ index: Int) {
        let (bytes, offset, start) = Self.badEscapes[index]
        let message = start + #"expected one of \" \\ \/ \b \f \n \r \t \uXXXX"#
        guard case .failure(let error) = jsonParseResult(bytes) else {
            Issue.record("accepted \(bytes)")
            return
        }
        #expect(error.code == .invalidEscape)
        #expect(error.byteOffset == offset)
        #expect(error.message == message)
        #expect(error.description == "byte \(offset) (line 1, column \(offset + 1)): \(message)")
    }

    @Test("a stream cut between the backslash and the NUL byte fails with the same message and offset")
    func invalidEscapeAcrossChunks() throws {
        var parser = JSONStreamParser()
        let bytes: [UInt8] = Array(#"[1,"ab\"#.utf8) + [0x00, 0x22, 0x5D]
        try parser.feed(Array(bytes[..<7])) { _ in }
        #expect {
            try parser.feed(Array(bytes[7...])) { _ in }
        } throws: { error in
            guard let error = error as? JSONParseError else { return false }
            return error.code == .invalidEscape && error.byteOffset == 6 && error.message
                == #"invalid escape: '\' followed by byte 0x00; expected one of \" \\ \/ \b \f \n \r \t \uXXXX"#
        }
    }

    @Test("codes match in catch clauses")
    func catchByCode() {
        do {
            _ = try JSONValue(parsing: "[")
            Issue.record("accepted")
        } catch JSONParseError.Code.unexpectedEnd {
            // expected
        } catch {
            Issue.record("wrong error \(error)")
        }
    }

    @Test("all entry points agree")
    func entryPoints() throws {
        let text = #"{"a":[1,2.5,"x"]}"#
        let expected: JSONValue = ["a": [1, 2.5, "x"]]
        #expect(try JSONValue(parsing: text) == expected)
        #expect(try JSONValue(parsing: Array(text.utf8)) == expected)
        #expect(try JSONValue(parsing: Data(text.utf8)) == expected)
        #expect(try Array(text.utf8).withUnsafeBytes { try JSONValue(parsing: $0) } == expected)
    }
}

import Foundation
