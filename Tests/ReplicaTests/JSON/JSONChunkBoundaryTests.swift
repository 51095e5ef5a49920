import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Streaming must give exactly what whole-buffer parsing gives, whatever the chunking.
@Suite("JSON streaming: chunk boundaries never change the outcome")
struct JSONChunkBoundaryTests {
    struct Case: CustomStringConvertible {
        var bytes: [UInt8]
        var patterns: [JSONPathPattern] = [.root]
        var limits: JSONLimits = .default
        var description: String { String(decoding: bytes, as: UTF8.self) }
    }

    static func text(_ text: String, _ patterns: [JSONPathPattern] = [.root], limits: JSONLimits = .default) -> Case {
        Case(bytes: Array(text.utf8), patterns: patterns, limits: limits)
    }

    static let envelope: [JSONPathPattern] = [[.key("data"), .key("posts")]]
    static let many: [JSONPathPattern] = [[.anyKey]]
    static let nestedMany: [JSONPathPattern] = [[.anyIndex, .anyKey]]

    static let cases: [Case] = [
        // Valid documents.
        text(#"[{"id":1,"name":"Ann"},{"id":2,"name":"Bob é😀"},{"id":3,"tags":["a\"b","\u00e9\ud83d\ude00","\\"]}]"#),
        text(#"[1, -2.5e3, "x", true, false, null, {"a":[]}, [[1]], 9223372036854775807, -0, "\/"]"#),
        text("[]"),
        text(" [ ] "),
        text("[\n  {\"id\": 1},\n  {\"id\": 2}\n]\n"),
        text(#"{"data":{"posts":[{"id":1},{"id":2,"t":"é"}]},"next_cursor":"abc","count":2}"#, envelope),
        text(#"{"next_cursor":null,"data":{"posts":[]}}"#, envelope),
        text(#"{"users":[{"id":1}],"posts":[{"id":10},{"id":11}],"meta":{"page":1},"n":3}"#, many),
        text(#"[{"User":[{"id":1}],"Post":[{"id":2,"body":"line\nnext"}]},{"Tag":[]}]"#, nestedMany),
        text(#"{"a":1,"b":[1,2]}"#, [[.key("missing")]]),
        text(#"{"data":{"posts":{"id":1}}}"#, envelope),
        text(#"{"data":{"posts":"none"}}"#, envelope),
        text(#"{"x":[1,2],"y":{"z":[3]}}"#),
        text("  123  "),
        text("-0.5e-3"),
        text(#""top \u0041 😀""#),
        text("true"),
        text("null"),
        text(#"[[1,2],[3,[4]],{"k":[5]}]"#, [[.anyIndex], [.index(0), .anyIndex]]),
        text(#"{"a":[{"b":[1,2]},{"b":[3]}]}"#, [[.key("a"), .anyIndex, .key("b")]]),
        text(#"{"a":[{"b":[1,2]},{"b":[3]}]}"#, [[.key("a")], [.key("a"), .anyIndex, .key("b")]]),
        text(#"{"k\"ey":[1],"\u006b":[2]}"#, [[.key("k\"ey")], [.key("k")]]),
        // Invalid documents.
        text(#"[{"id":1},{"id":2,}]"#),
        text(#"[{"id":1} {"id":2}]"#),
        text(#"[{"a":"\x"}]"#),
        text(#"[{"a":"\ud800"}]"#),
        text(#"[{"a":"\ud83d\u0041"}]"#),
        text("[{\"a\":\"é\u{1}\"}]"),
        text(#"[{"a":01}]"#),
        text("[1,2"),
        text("[1,2,"),
        text(#"[{"a":[1,2]"#),
        text(#"[{"a":"abc"#),
        text(#"{"data":{"posts":[{"id":1}"#, envelope),
        text(#"{"data":{"posts":[1,2,]},"x":1}"#, envelope),
        text(#"{"data":{"posts":[1,2]},"x":1,}"#, envelope),
        text(#"[{"a":1}]x"#),
        text(#"[{"a":1}] {}"#),
        text(#"[{"a":1]]"#),
        text(#"[{"a":tru}]"#),
        text(#"[{"a":true1}]"#),
        text("[-]"),
        text("[1.]"),
        text("[1.5.2]"),
        text("[12"),
        text(#"["abc"#),
        text(#"["\u12"#),
        text(#"{"users":[{"id":1}],"posts":[{"id":1e400}]}"#, many),
        text(#"{"users":[{"id":1}],"posts":[1e400]}"#, many),
        text(#"{"users":[{"id":1}] "posts":[]}"#, many),
        text("[[[[1]]]]", limits: JSONLimits(maxDepth: 3)),
        text(#"[{"a":{"b":{"c":1}}}]"#, limits: JSONLimits(maxDepth: 3)),
        text(#"{"a":{"b":[1]}}"#, [[.key("a")]], limits: JSONLimits(maxDepth: 2)),
        text(#"["abcdef",{"k":"abcdefgh"}]"#, limits: JSONLimits(maxStringLength: 5)),
        text(#"{"abcdefgh":[1]}"#, [[.anyKey]], limits: JSONLimits(maxStringLength: 5)),
        text(#"{"a":"abcdefghijklmnopqrstuvwxyz0123456789"}"#, [[.key("b")]], limits: JSONLimits(maxStringLength: 5)),
        text("[\n {\"a\": 1},\n {\"a\": 2,\n  \"b\": x}\n]"),
        text(""),
        text("   "),
        text("123 4"),
        text("nul"),
        Case(bytes: [0x5B, 0x22, 0xE2, 0x82, 0x22, 0x5D]),
        Case(bytes: [0x5B, 0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xF0, 0x9F, 0x98, 0x80, 0xED, 0xA0, 0x80, 0x22, 0x7D, 0x5D]),
        Case(bytes: [0xEF, 0xBB, 0xBF, 0x5B, 0x5D]),
        Case(bytes: Array(#"{"next":"x","data":{"posts":[{"s":"\#u{1}"}]}}"#.utf8), patterns: envelope),
    ]

    /// Checks one chunking of one case against whole-buffer parsing.
    static func check(_ testCase: Case, cuts: [Int], mode: ConsumerMode) {
        let whole = jsonParseResult(testCase.bytes, limits: testCase.limits)
        let streamed = streamOutcome(testCase.bytes, patterns: testCase.patterns, limits: testCase.limits, cuts: cuts, mode: mode)
        switch (whole, streamed) {
        case (.success(let value), .success(let outcome)):
            let model = modelOutcome(value, patterns: testCase.patterns)
            if mode == .partial {
                #expect(outcome.skeleton == model.skeleton, "\(testCase) cuts \(cuts)")
                #expect(outcome.matches == model.matches, "\(testCase) cuts \(cuts)")
            } else {
                #expect(withoutOffsets(outcome) == model, "\(testCase) cuts \(cuts) \(mode)")
            }
        case (.failure(let expected), .failure(let actual)):
            #expect(actual.code == expected.code, "\(testCase) cuts \(cuts) \(mode): \(actual) vs \(expected)")
            #expect(actual.byteOffset == expected.byteOffset, "\(testCase) cuts \(cuts) \(mode): \(actual) vs \(expected)")
            #expect(actual.line == expected.line && actual.column == expected.column, "\(testCase) cuts \(cuts) \(mode)")
        case (.success, .failure(let error)):
            Issue.record("\(testCase) cuts \(cuts) \(mode): streaming failed with \(error)")
        case (.failure(let error), .success):
            Issue.record("\(testCase) cuts \(cuts) \(mode): streaming accepted, whole parse failed with \(error)")
        }
    }

    @Test("every single cut position, and byte by byte", arguments: cases.indices)
    func everyCut(_ index: Int) {
        let testCase = Self.cases[index]
        let count = testCase.bytes.count
        for mode in ConsumerMode.allCases {
            Self.check(testCase, cuts: [], mode: mode)
            Self.check(testCase, cuts: Array(0...count), mode: mode)
            for cut in 0...count {
                Self.check(testCase, cuts: [cut], mode: mode)
            }
        }
        for first in 0...count {
            Self.check(testCase, cuts: [first, min(count, first + 3)], mode: .value)
        }
    }

    @Test("element byte offsets are absolute across chunks")
    func elementOffsets() {
        let bytes = Array(#"[ {"a":1}, "xy", 3 ,[4]]"#.utf8)
        for cut in 0...bytes.count {
            guard case .success(let outcome) = streamOutcome(bytes, cuts: [cut]) else {
                Issue.record("failed at cut \(cut)")
                continue
            }
            #expect(outcome.items.map(\.byteOffset) == [2, 11, 17, 20], "cut \(cut)")
        }
    }
}
