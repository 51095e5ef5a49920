import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("JSON limits: errors, never crashes")
struct JSONLimitsTests {
    @Test("nesting up to maxDepth is accepted, one more is an error at its bracket")
    func depth() throws {
        let limits = JSONLimits(maxDepth: 10)
        let ok = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
        #expect(try JSONValue(parsing: ok, limits: limits) != .null)
        let tooDeep = String(repeating: "[", count: 11) + String(repeating: "]", count: 11)
        guard case .failure(let error) = jsonParseResult(tooDeep, limits: limits) else {
            Issue.record("accepted")
            return
        }
        #expect(error.code == .tooDeep)
        #expect(error.byteOffset == 10)
        let objects = String(repeating: #"{"a":"#, count: 11) + "1" + String(repeating: "}", count: 11)
        guard case .failure(let objectError) = jsonParseResult(objects, limits: limits) else {
            Issue.record("accepted")
            return
        }
        #expect(objectError.code == .tooDeep)
        #expect(objectError.byteOffset == 50)
    }

    @Test("a very deep document fails cleanly with the default limit")
    func hostileDepth() {
        let text = String(repeating: "[", count: 100_000)
        guard case .failure(let error) = jsonParseResult(text) else {
            Issue.record("accepted")
            return
        }
        #expect(error.code == .tooDeep)
        #expect(error.byteOffset == 512)
    }

    @Test("deep nesting within a large limit parses without recursion")
    func deepButAllowed() throws {
        let limits = JSONLimits(maxDepth: 20_000)
        let text = String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000)
        #expect(try JSONValue(parsing: text, limits: limits).arrayValue?.count == 1)
    }

    @Test("strings up to maxStringLength bytes are accepted, longer ones are not")
    func stringLength() throws {
        let limits = JSONLimits(maxStringLength: 5)
        #expect(try JSONValue(parsing: #"["abcde"]"#, limits: limits) == ["abcde"])
        #expect(try JSONValue(parsing: #"["é€"]"#, limits: limits) == ["é€"])
        for text in [#"["abcdef"]"#, #"["abcd\n"]"#, #"["abcdefghijklmnop"]"#, #"{"abcdefg":1}"#, #"["abcdefgh"#] {
            guard case .failure(let error) = jsonParseResult(text, limits: limits) else {
                Issue.record("accepted \(text)")
                continue
            }
            #expect(error.code == .stringTooLong, "\(text)")
            #expect(error.byteOffset == 1, "\(text)")
        }
    }

    @Test("documents longer than maxDocumentSize are rejected")
    func documentSize() throws {
        let limits = JSONLimits(maxDocumentSize: 8)
        #expect(try JSONValue(parsing: "[1,2,3]", limits: limits) == [1, 2, 3])
        guard case .failure(let error) = jsonParseResult("[1,2,3,4]", limits: limits) else {
            Issue.record("accepted")
            return
        }
        #expect(error.code == .documentTooLarge)
        #expect(error.byteOffset == 8)
    }
}
