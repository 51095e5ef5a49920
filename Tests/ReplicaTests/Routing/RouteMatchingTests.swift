import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("RouteTrie matching")
struct RouteMatchingTests {
    /// Builds a GET-only trie whose targets are the pattern texts.
    func trie(_ patterns: [String]) throws -> RouteTrie<String> {
        var builder = RouteTableBuilder<String>()
        for pattern in patterns {
            try builder.add(method: .get, pattern: pattern, target: pattern)
        }
        return try builder.build()
    }

    @Test("literal and variable routes, with variables by name")
    func basics() throws {
        let trie = try trie(["/", "/users", "/users/:id", "/api/groups/:gid/messages/:mid"])
        #expect(trie.match(method: .get, path: "/")?.target == "/")
        #expect(trie.match(method: .get, path: "/users")?.target == "/users")
        let match = try #require(trie.match(method: .get, path: "/api/groups/7/messages/99"))
        #expect(match.target == "/api/groups/:gid/messages/:mid")
        #expect(match.pattern.description == "/api/groups/:gid/messages/:mid")
        #expect(match.method == .get)
        #expect(match.parameters["gid"] == "7")
        #expect(match.parameters["mid"] == "99")
        #expect(match.parameters["nope"] == nil)
        #expect(match.parameters.int64("mid") == 99)
        #expect(match.parameters.names == ["gid", "mid"])
        #expect(match.parameters.values == ["7", "99"])
        #expect(match.parameters.dictionary == ["gid": "7", "mid": "99"])
        #expect(match.parameters.description == "[gid: 7, mid: 99]")
        #expect(trie.match(method: .get, path: "/users/3")?.parameters.int64("id") == 3)
        #expect(trie.match(method: .get, path: "/users/3")?.parameters.int64("nope") == nil)
    }

    @Test("misses: unknown literal, too short, too long, empty segment")
    func misses() throws {
        let trie = try trie(["/users", "/users/:id"])
        #expect(trie.match(method: .get, path: "/groups") == nil)
        #expect(trie.match(method: .get, path: "/") == nil)
        #expect(trie.match(method: .get, path: "/users/3/posts") == nil)
        #expect(trie.match(method: .get, path: "/users//") == nil)
        #expect(trie.match(method: .get, path: "//users") == nil)
        #expect(trie.match(method: .get, path: "/Users") == nil, "literals are case-sensitive")
    }

    @Test("a literal segment wins over a variable")
    func literalPrecedence() throws {
        let trie = try trie(["/users/:id", "/users/new"])
        #expect(trie.match(method: .get, path: "/users/new")?.target == "/users/new")
        #expect(trie.match(method: .get, path: "/users/newer")?.target == "/users/:id")
        #expect(trie.match(method: .get, path: "/users/ne")?.target == "/users/:id")
    }

    @Test("backtracking to the variable when the literal branch fails deeper")
    func backtracking() throws {
        let trie = try trie(["/users/new", "/users/:id/posts", "/a/b/c", "/a/:x/d", "/:p/b/e"])
        #expect(trie.match(method: .get, path: "/users/new")?.target == "/users/new")
        let match = try #require(trie.match(method: .get, path: "/users/new/posts"))
        #expect(match.target == "/users/:id/posts")
        #expect(match.parameters["id"] == "new")
        #expect(trie.match(method: .get, path: "/a/b/c")?.target == "/a/b/c")
        #expect(trie.match(method: .get, path: "/a/b/d")?.parameters["x"] == "b")
        // Two levels of backtracking: /a/… fails on both branches, then /:p/b/e.
        let deep = try #require(trie.match(method: .get, path: "/a/b/e"))
        #expect(deep.target == "/:p/b/e")
        #expect(deep.parameters["p"] == "a")
    }

    @Test("trailing slash, query string and fragment are ignored; leading slash optional")
    func pathDecorations() throws {
        let trie = try trie(["/", "/users/:id/posts"])
        for path in [
            "/users/3/posts", "/users/3/posts/", "/users/3/posts?page=2&q=a/b", "/users/3/posts/?x",
            "/users/3/posts#frag", "/users/3/posts/#a?b", "users/3/posts",
        ] {
            let match = trie.match(method: .get, path: path)
            #expect(match?.target == "/users/:id/posts", "\(path)")
            #expect(match?.parameters["id"] == "3", "\(path)")
        }
        #expect(trie.match(method: .get, path: "/users/3?x/posts") == nil)
        #expect(trie.match(method: .get, path: "/")?.target == "/")
        #expect(trie.match(method: .get, path: "")?.target == "/")
        #expect(trie.match(method: .get, path: "/?q=1")?.target == "/")
        #expect(trie.match(method: .get, path: "/users/3/posts//") == nil, "only one trailing slash is ignored")
    }

    @Test("variables are percent-decoded after splitting; %2F stays inside")
    func percentDecodedVariables() throws {
        let trie = try trie(["/files/:name/meta", "/files/:name"])
        let slash = try #require(trie.match(method: .get, path: "/files/a%2Fb/meta"))
        #expect(slash.target == "/files/:name/meta")
        #expect(slash.parameters["name"] == "a/b")
        #expect(trie.match(method: .get, path: "/files/a%2fb")?.parameters["name"] == "a/b")
        #expect(trie.match(method: .get, path: "/files/hello%20world")?.parameters["name"] == "hello world")
        #expect(trie.match(method: .get, path: "/files/100%25")?.parameters["name"] == "100%")
        #expect(trie.match(method: .get, path: "/files/a%3Fb%23c")?.parameters["name"] == "a?b#c")
        #expect(trie.match(method: .get, path: "/files/a+b")?.parameters["name"] == "a+b", "+ is not a space in paths")
    }

    @Test("invalid percent escapes match nothing", arguments: ["/files/%zz", "/files/%4", "/files/a%", "/files/%C3", "/files/%FF%FE"])
    func invalidEscapes(path: String) throws {
        let trie = try trie(["/files/:name", "/files/literal"])
        #expect(trie.match(method: .get, path: path) == nil)
        #expect(trie.match(path: path) == nil)
        #expect(trie.allowedMethods(path: path).isEmpty)
    }

    @Test("literal segments match after percent-decoding")
    func percentDecodedLiterals() throws {
        let trie = try trie(["/cafés/:name", "/hello world", "/cafés/menu", "/a%2Fb"])
        #expect(trie.match(method: .get, path: "/caf%C3%A9s/menu")?.target == "/cafés/menu")
        #expect(trie.match(method: .get, path: "/caf%c3%a9s/bob")?.parameters["name"] == "bob")
        #expect(trie.match(method: .get, path: "/hello%20world")?.target == "/hello world")
        #expect(trie.match(method: .get, path: "/%68ello%20world")?.target == "/hello world")
        #expect(trie.match(method: .get, path: "/a%2Fb")?.target == "/a%2Fb")
        #expect(trie.match(method: .get, path: "/a/b") == nil)
    }

    @Test("unicode paths and emoji values")
    func unicode() throws {
        let trie = try trie(["/cafés/:name", "/日本/:都市", "/emoji/:e/end"])
        let raw = try #require(trie.match(method: .get, path: "/cafés/Zoë"))
        #expect(raw.parameters["name"] == "Zoë")
        #expect(trie.match(method: .get, path: "/cafés/Zo%C3%AB")?.parameters["name"] == "Zoë")
        #expect(trie.match(method: .get, path: "/日本/東京")?.parameters["都市"] == "東京")
        #expect(trie.match(method: .get, path: "/emoji/👩‍👩‍👧/end")?.parameters["e"] == "👩‍👩‍👧")
        #expect(trie.match(method: .get, path: "/emoji/%F0%9F%8D%95/end")?.parameters["e"] == "🍕")
        #expect(trie.match(method: .get, path: "/emoji/🍕%2F🍺/end")?.parameters["e"] == "🍕/🍺")
    }

    @Test("many literal children (binary search) and hash neighbours")
    func manyChildren() throws {
        let names = (0..<200).map { "r\($0)" }
        let trie = try trie(names.map { "/api/\($0)" } + ["/api/:other"])
        for name in names {
            #expect(trie.match(method: .get, path: "/api/\(name)")?.target == "/api/\(name)")
        }
        #expect(trie.match(method: .get, path: "/api/r200")?.parameters["other"] == "r200")
        #expect(trie.match(method: .get, path: "/api/r")?.parameters["other"] == "r")
    }

    @Test("the trie is Sendable and can be shared between tasks")
    func concurrentUse() async throws {
        let trie = try trie(["/users/:id"])
        let results = await withTaskGroup(of: String?.self) { group in
            for index in 0..<8 {
                group.addTask { trie.match(method: .get, path: "/users/\(index)")?.parameters["id"] }
            }
            var values: [String] = []
            for await value in group { values.append(value ?? "nil") }
            return values.sorted()
        }
        #expect(results == (0..<8).map(String.init))
    }
}

@Suite("RouteTrie matching: long segments and word-at-a-time scanning")
struct RouteLongSegmentTests {
    @Test("segments of every length around 8 and 16 bytes, with escapes anywhere")
    func lengths() throws {
        var builder = RouteTableBuilder<String>()
        var literals: [String] = []
        for length in 1...20 {
            let literal = String((0..<length).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
            literals.append(literal)
            try builder.add(method: .get, pattern: "/lit/\(literal)/end", target: literal)
            // Same first 8 bytes, different tail: must not be confused.
            try builder.add(method: .get, pattern: "/lit/\(literal)X/end", target: literal + "X")
        }
        try builder.add(method: .get, pattern: "/lit/:value/end", target: "variable")
        let trie = try builder.build()
        for literal in literals {
            #expect(trie.match(method: .get, path: "/lit/\(literal)/end")?.target == literal)
            #expect(trie.match(method: .get, path: "/lit/\(literal)X/end?x=1")?.target == literal + "X")
            #expect(trie.match(method: .get, path: "/lit/\(literal)Y/end")?.parameters["value"] == literal + "Y")
            // An escaped letter anywhere still matches the literal.
            for offset in 0..<literal.utf8.count {
                var bytes = Array(literal.utf8)
                let escaped = String(format: "%%%02X", bytes[offset])
                bytes.replaceSubrange(offset...offset, with: Array(escaped.utf8))
                let path = "/lit/" + String(decoding: bytes, as: UTF8.self) + "/end"
                #expect(trie.match(method: .get, path: path)?.target == literal, "\(path)")
            }
        }
        let longValue = String(repeating: "0123456789", count: 5)
        #expect(trie.match(method: .get, path: "/lit/\(longValue)/end/")?.parameters["value"] == longValue)
        #expect(trie.match(method: .get, path: "/lit/\(longValue)%2F\(longValue)/end")?.parameters["value"]
            == longValue + "/" + longValue)
        #expect(trie.match(method: .get, path: "/lit/abcdefgh/end#frag/ment")?.target == "abcdefgh")
        #expect(trie.match(method: .get, path: "/lit/abcdefghijklmnop/end?query/with/slashes")?.target == "abcdefghijklmnop")
    }
}
