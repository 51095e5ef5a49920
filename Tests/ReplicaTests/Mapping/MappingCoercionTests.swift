import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

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

    @Test("data failures name the offending character and its position", arguments: [
        (JSONValue.string("a"), "the last group of 4 has a single character, which encodes no whole byte"),
        (.string("aGVsbG8=="), "2 '=' at the end, from character 8, where the last group of 4 needs 1"),
        (.string("aGk=="), "2 '=' at the end, from character 4, where the last group of 4 needs 1"),
        (.string("aGVs="), "1 '=' at the end, from character 5, where the last group of 4 is already complete"),
        (.string("aG=k"), "'=' at character 3 is padding before the end of the text"),
        (.string("aGVs bG8="), "' ' (a space) at character 5 is not a base64 character"),
        (.string("aGVs\tbG8="), "U+0009 at character 5 is not a base64 character"),
        (.string("aGVsbG8*"), "'*' at character 8 is not a base64 character"),
        (.string("aGVs\nbG8\nb*=="), "'*' at character 11 (line 3) is not a base64 character"),
        (.string("a==="), "3 '=' at the end, from character 2: padding is one or two '='"),
        (.string("é"), "U+00E9 at character 1 is not a base64 character"),
        (.string("aGé8"), "U+00E9 at character 3 is not a base64 character"),
    ])
    func base64Failures(json: JSONValue, reason: String) throws {
        #expect(Self.failure(json, to: .data)?.message == "cannot convert \(json.excerpt()) to data (expected base64 text: \(reason))")
    }

    @Test("data that is not text says so")
    func base64NotText() throws {
        #expect(Self.failure(.int(5), to: .data)?.message == "cannot convert 5 to data (expected base64 text)")
    }

    /// "Hello, World!" six times with a line feed after each (84 bytes), as GitHub's contents API and MIME encode it.
    static let fileText = String(repeating: "Hello, World!\n", count: 6)

    @Test("data reads base64 broken into lines: GitHub's 60 characters with \\n, MIME's 76 with \\r\\n, any padding")
    func base64LineBreaks() throws {
        let bytes = Array(Self.fileText.utf8)
        let encoded = Data(bytes).base64EncodedString()
        // GitHub (Ruby's Base64.encode64): lines of 60 characters, each ended by \n, the last one too.
        let github = stride(from: 0, to: encoded.count, by: 60).map { start -> String in
            let from = encoded.index(encoded.startIndex, offsetBy: start)
            return String(encoded[from..<(encoded.index(from, offsetBy: 60, limitedBy: encoded.endIndex) ?? encoded.endIndex)]) + "\n"
        }.joined()
        #expect(github.filter { $0 == "\n" }.count == 2)
        #expect(try Self.convert(.string(github), to: .data) == .data(bytes))
        let mime = Data(bytes).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
        #expect(mime.contains("\r\n"))
        #expect(try Self.convert(.string(mime), to: .data) == .data(bytes))
        #expect(try Self.convert(.string("aGVs\nbG8\n"), to: .data) == .data(Array("hello".utf8)))
        #expect(try Self.convert(.string("aGVs\r\nbG8=\r\n"), to: .data) == .data(Array("hello".utf8)))
        let urlSafe = github.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        #expect(try Self.convert(.string(urlSafe), to: .data) == .data(bytes))
    }

    @Test("GitHub's contents-API response maps through a schema: content as data, and as text with the base64 transform")
    func githubContents() throws {
        let schema = try Schema(json: Data(#"""
            {"name": "github", "entities": {
              "RepoFile": {"primaryKey": "sha", "attributes": {
                "sha": "string", "name": "string", "path": "string", "size": "integer", "encoding": "string",
                "content": "data"}},
              "RepoText": {"primaryKey": "sha", "attributes": {
                "sha": "string", "content": {"type": "string", "transform": "base64"}}}}}
            """#.utf8))
        // The shape GitHub documents for GET /repos/{owner}/{repo}/contents/{path} of a file.
        let body = #"""
            {
              "type": "file",
              "encoding": "base64",
              "size": 84,
              "name": "README.md",
              "path": "README.md",
              "content": "SGVsbG8sIFdvcmxkIQpIZWxsbywgV29ybGQhCkhlbGxvLCBXb3JsZCEKSGVs\nbG8sIFdvcmxkIQpIZWxsbywgV29ybGQhCkhlbGxvLCBXb3JsZCEK\n",
              "sha": "3d21ec53a331a6f037a91c368710b99387d012c1",
              "url": "https://api.github.com/repos/octokit/octokit.rb/contents/README.md",
              "git_url": "https://api.github.com/repos/octokit/octokit.rb/git/blobs/3d21ec53a331a6f037a91c368710b99387d012c1",
              "html_url": "https://github.com/octokit/octokit.rb/blob/master/README.md",
              "download_url": "https://raw.githubusercontent.com/octokit/octokit.rb/master/README.md",
              "_links": {"self": "https://api.github.com/repos/octokit/octokit.rb/contents/README.md"}
            }
            """#
        let mapping = try SchemaMapping(schema: schema)
        let response = try JSONValue(parsing: Array(body.utf8))
        let file = try mapping.requireMap("RepoFile").map(value: response, at: .root)
        #expect(file["content"] == .data(Array(Self.fileText.utf8)))
        #expect(file["size"] == .integer(84))
        let text = try mapping.requireMap("RepoText")
        #expect(try text.map(value: response, at: .root)["content"] == .string(Self.fileText))
        #expect(text.encode(["content": .string(Self.fileText)])["content"] == .string(Data(Self.fileText.utf8).base64EncodedString()))
    }

    @Test("the base64 transform on text refuses bytes that are not UTF-8, and types other than string and data")
    func base64TransformFailures() throws {
        #expect(Self.failure(.string("/w=="), to: .string, transform: "base64")?.message
                == #"cannot convert "/w==" to text (the decoded bytes are not UTF-8 text; a data attribute keeps any bytes)"#)
        #expect(try Self.convert(.string("aGk="), to: .data, transform: "base64") == .data(Array("hi".utf8)))
        let wrongType = MappingFixtures.mappingError { _ = try Self.convert(.string("aGk="), to: .integer, transform: "base64") }
        #expect(wrongType?.message == "transform 'base64' needs a string or a data attribute, not an integer")
    }
}
