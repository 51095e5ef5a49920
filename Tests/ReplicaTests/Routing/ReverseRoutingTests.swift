import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Reverse routing")
struct ReverseRoutingTests {
    @Test("substitutes values in order")
    func basics() throws {
        let pattern = try RoutePattern("/users/:id/posts")
        #expect(try pattern.path(with: ["id": "3"]) == "/users/3/posts")
        #expect(try RoutePattern("/").path(with: [String: String]()) == "/")
        let nested = try RoutePattern("/api/groups/{gid}/messages/:mid")
        #expect(try nested.path(with: ["mid": "9", "gid": "7", "unused": "x"]) == "/api/groups/7/messages/9")
    }

    @Test("percent-encodes everything but unreserved characters", arguments: [
        ("a/b", "a%2Fb"),
        ("a?b#c", "a%3Fb%23c"),
        ("hello world", "hello%20world"),
        ("Zoë", "Zo%C3%AB"),
        ("🍕", "%F0%9F%8D%95"),
        ("100%", "100%25"),
        ("a+b=c&d", "a%2Bb%3Dc%26d"),
        ("AZaz09-._~", "AZaz09-._~"),
    ])
    func encoding(value: String, encoded: String) throws {
        let pattern = try RoutePattern("/files/:name")
        let path = try pattern.path(with: ["name": value])
        #expect(path == "/files/\(encoded)")
        // Round trip through the matcher.
        var builder = RouteTableBuilder<Int>()
        builder.add(method: .get, pattern: pattern, target: 1)
        #expect(try builder.build().match(method: .get, path: path)?.parameters["name"] == value)
    }

    @Test("literals are encoded as path segments")
    func literals() throws {
        #expect(try RoutePattern("/cafés/:name").path(with: ["name": "Zoë"]) == "/caf%C3%A9s/Zo%C3%AB")
        #expect(try RoutePattern("/v1/foo:batchGet").path(with: [String: String]()) == "/v1/foo:batchGet")
        #expect(try RoutePattern("/a%2Fb").path(with: [String: String]()) == "/a%2Fb")
    }

    @Test("a missing or empty value names the variable and the pattern")
    func missingVariable() throws {
        let pattern = try RoutePattern("/groups/{gid}/messages/:mid")
        let error = #expect(throws: RouteError.self) { try pattern.path(with: ["gid": "1"]) }
        #expect(error?.code == .missingVariable)
        #expect(error?.pattern == "/groups/:gid/messages/:mid")
        #expect(error?.message == "no value for variable \"mid\" of route pattern \"/groups/:gid/messages/:mid\"")
        let empty = #expect(throws: RouteError.self) { try pattern.path(with: ["gid": "", "mid": "2"]) }
        #expect(empty?.code == .missingVariable)
        #expect(empty?.message.contains("empty value for variable \"gid\"") == true)
    }

    @Test("CustomStringConvertible values: Int, Int64, UUID")
    func describedValues() throws {
        let pattern = try RoutePattern("/groups/:gid/messages/:mid")
        #expect(try pattern.path(with: ["gid": 7, "mid": Int64(9_000_000_000)]) == "/groups/7/messages/9000000000")
        let uuid = UUID(uuidString: "550E8400-E29B-41D4-A716-446655440000")
        let values: [String: any CustomStringConvertible] = ["gid": uuid ?? "x", "mid": -1]
        #expect(try pattern.path(with: values) == "/groups/550E8400-E29B-41D4-A716-446655440000/messages/-1")
        #expect(throws: RouteError.self) { try pattern.path(with: ["gid": 1] as [String: any CustomStringConvertible]) }
    }

    @Test("closure form")
    func closure() throws {
        let pattern = try RoutePattern("/a/:x/:y")
        #expect(try pattern.path { $0.uppercased() } == "/a/X/Y")
    }
}
