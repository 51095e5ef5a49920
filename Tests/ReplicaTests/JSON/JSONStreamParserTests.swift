import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("JSONStreamParser: delivery, skeleton, matches, errors")
struct JSONStreamParserTests {
    struct ConsumerError: Error, Equatable { var index: Int }

    @Test("an envelope path streams its array and keeps the metadata in the skeleton")
    func envelope() throws {
        let text = #"{"data":{"posts":[{"id":1},{"id":2}],"total":2},"next_cursor":"abc"}"#
        let result = try JSONStreamParser.collect(Array(text.utf8), patterns: [[.key("data"), .key("posts")]], chunkSize: 7)
        #expect(result.items.map(\.pointer.description) == ["/data/posts/0", "/data/posts/1"])
        #expect(result.items.map(\.value) == [["id": 1], ["id": 2]])
        #expect(result.skeleton == ["data": ["posts": [], "total": 2], "next_cursor": "abc"])
        #expect(result.matches == [JSONStreamMatch(pointer: JSONPointer("/data/posts")!, patternIndex: 0, isStreamedArray: true, elementCount: 2)])
    }

    @Test("MANY shape: every member array streams; other members are delivered whole")
    func many() throws {
        let text = #"{"users":[{"id":1},{"id":2}],"posts":[{"id":9}],"meta":{"page":1},"next":"x"}"#
        let result = try JSONStreamParser.collect(Array(text.utf8), patterns: [[.anyKey]])
        #expect(result.items.map(\.pointer.description) == ["/users/0", "/users/1", "/posts/0", "/meta", "/next"])
        #expect(result.skeleton == ["users": [], "posts": [], "meta": [:], "next": "x"])
        #expect(result.matches.map(\.isStreamedArray) == [true, true, false, false])
    }

    @Test("nested MANY shape [.anyIndex, .anyKey]")
    func nestedMany() throws {
        let text = #"[{"User":[{"id":1}],"Post":[{"id":2},{"id":3}]}]"#
        let result = try JSONStreamParser.collect(Array(text.utf8), patterns: [[.anyIndex, .anyKey]])
        #expect(result.items.map(\.pointer.description) == ["/0/User/0", "/0/Post/0", "/0/Post/1"])
        #expect(result.skeleton == [["User": [], "Post": []]])
    }

    @Test("a pattern that matches nothing is reported")
    func unmatched() throws {
        var parser = JSONStreamParser(patterns: [[.key("data"), .key("posts")], [.key("users")]])
        try parser.feed(Array(#"{"users":[1,2],"error":"nope"}"#.utf8)) { _ in }
        let skeleton = try parser.finish()
        #expect(parser.unmatchedPatterns == [0])
        #expect(skeleton == ["users": [], "error": "nope"])
    }

    @Test("the default pattern streams a top-level array and delivers anything else whole")
    func defaultPattern() throws {
        let array = try JSONStreamParser.collect(Array("[1,[2],{}]".utf8))
        #expect(array.items.map(\.value) == [1, [2], [:]])
        #expect(array.skeleton == [])
        let object = try JSONStreamParser.collect(Array(#"{"a":[1]}"#.utf8))
        #expect(object.items.map(\.value) == [["a": [1]]])
        #expect(object.items.first?.pointer == .root)
        #expect(object.skeleton == [:])
        let number = try JSONStreamParser.collect(Array("42".utf8), chunkSize: 1)
        #expect(number.items.map(\.value) == [42])
        #expect(number.skeleton == 42)
    }

    @Test("errors thrown by the consumer propagate unchanged and close the parser")
    func consumerErrors() throws {
        var parser = JSONStreamParser()
        #expect(throws: ConsumerError(index: 1)) {
            try parser.feed(Array("[10,11,12]".utf8)) { element in
                if element.index == 1 { throw ConsumerError(index: 1) }
            }
        }
        #expect(throws: JSONParseError.self) { try parser.feed(Array("1".utf8)) { _ in } }
        do {
            _ = try parser.finish()
            Issue.record("finish after an error succeeded")
        } catch JSONParseError.Code.streamClosed {}
    }

    @Test("an element the consumer does not read is still validated")
    func unreadElementsAreValidated() {
        for mode in [ConsumerMode.partial] {
            guard case .failure(let error) = streamOutcome(Array(#"[{"a":1,"b":[1,2,}]"#.utf8), cuts: [5], mode: mode) else {
                Issue.record("accepted")
                continue
            }
            #expect(error.code == .unexpectedCharacter)
            #expect(error.byteOffset == 17)
        }
        var parser = JSONStreamParser()
        #expect(throws: JSONParseError.self) {
            try parser.feed(Array(#"[{"a":"\q"}]"#.utf8)) { _ in }
        }
    }

    @Test("a truncated large array fails at finish with the end offset")
    func truncated() throws {
        var parser = JSONStreamParser()
        var count = 0
        let chunk = Array(String(repeating: #"{"id":1},"#, count: 1000).utf8)
        try parser.feed(Array("[".utf8)) { _ in }
        for _ in 0..<10 {
            try parser.feed(chunk) { _ in count += 1 }
        }
        #expect(count == 10_000)
        do {
            _ = try parser.finish()
            Issue.record("accepted")
        } catch let error as JSONParseError {
            #expect(error.code == .unexpectedEnd)
            #expect(error.byteOffset == 1 + 10 * chunk.count)
        }
    }

    @Test("reader errors inside elements carry stream offsets, lines and columns")
    func readerErrorsAreAbsolute() {
        let text = "[\n{\"a\":1},\n{\"a\":1.e3}]"
        for cut in [0, 5, 13, 17] {
            guard case .failure(let error) = streamOutcome(Array(text.utf8), cuts: [cut], mode: .reader) else {
                Issue.record("accepted")
                continue
            }
            #expect(error.code == .invalidNumber)
            #expect(error.byteOffset == 18)
            #expect(error.line == 3 && error.column == 8)
        }
    }

    @Test("JSONElement exposes raw bytes, pointer and a validating reader")
    func elementView() throws {
        var parser = JSONStreamParser(patterns: [[.key("rows")]])
        var seen: [String] = []
        try parser.feed(Data(#"{"rows":[{"id":5,"name":"x"},"#.utf8)) { element in
            seen.append(String(decoding: element.bytes, as: UTF8.self))
            var reader = element.reader()
            #expect(try reader.next() == .beginObject)
            guard case .key(let key) = try reader.next() else { Issue.record("no key"); return }
            #expect(key == "id")
            #expect(try reader.next() == .number(.int(5)))
            #expect(element.pointer.description == "/rows/0")
            #expect(element.byteOffset == 9)
        }
        try parser.feed(Data(#"{"id":6}]}"#.utf8)) { element in
            seen.append(String(decoding: element.bytes, as: UTF8.self))
        }
        #expect(try parser.finish() == ["rows": []])
        #expect(seen == [#"{"id":5,"name":"x"}"#, #"{"id":6}"#])
        #expect(parser.matches.first?.elementCount == 2)
    }

    @Test("a value straddling chunks longer than maxStreamedValueSize is an error")
    func streamedValueLimit() {
        let limits = JSONLimits(maxStreamedValueSize: 64)
        let big = "[" + #"{"s":""# + String(repeating: "x", count: 100) + #""}]"#
        guard case .failure(let error) = streamOutcome(Array(big.utf8), limits: limits, cuts: [10, 20, 90]) else {
            Issue.record("accepted")
            return
        }
        #expect(error.code == .valueTooLarge)
        #expect(error.byteOffset == 1)
    }

    @Test("random documents agree with whole-buffer parsing under random chunking")
    func randomDocuments() throws {
        let seed = testSeed(0x57_4EA3)
        var generator = SeededRandom(seed: seed)
        for round in 0..<40 {
            let value = randomValue(depth: 0, using: &generator)
            let document: JSONValue = ["meta": ["round": .int(Int64(round))], "items": .array((0..<20).map { _ in randomValue(depth: 1, using: &generator) })]
            let bytes = document.serializedBytes(pretty: round % 2 == 0)
            var cuts: [Int] = []
            var position = 0
            while position < bytes.count {
                position += Int.random(in: 1...40, using: &generator)
                cuts.append(min(position, bytes.count))
            }
            let patterns: [JSONPathPattern] = [[.key("items")]]
            guard case .success(let outcome) = streamOutcome(bytes, patterns: patterns, cuts: cuts) else {
                Issue.record("failed on \(String(decoding: bytes, as: UTF8.self)) (REPLICA_TEST_SEED=\(seed), round \(round))")
                continue
            }
            #expect(withoutOffsets(outcome) == modelOutcome(try JSONValue(parsing: bytes), patterns: patterns),
                    "REPLICA_TEST_SEED=\(seed), round \(round)")
            _ = value
        }
    }

    func randomValue(depth: Int, using generator: inout SeededRandom) -> JSONValue {
        let strings = ["", "a", "é€😀", "quote\"back\\slash", "ctl\u{1}\n\t", "long " + String(repeating: "z", count: 30)]
        switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int64.random(in: .min ... .max, using: &generator) >> Int64.random(in: 0...63, using: &generator))
        case 3: return .double(Double.random(in: -1e6...1e6, using: &generator))
        case 4: return .string(strings[Int.random(in: 0..<strings.count, using: &generator)])
        case 5: return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            return .object(JSONObject((0..<Int.random(in: 0...4, using: &generator)).map { ("k\($0)", randomValue(depth: depth + 1, using: &generator)) }))
        }
    }
}
