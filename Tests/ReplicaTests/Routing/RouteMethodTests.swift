import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Route methods")
struct RouteMethodTests {
    @Test("HTTPMethod parses names ignoring case")
    func parsing() {
        #expect(HTTPMethod("GET") == .get)
        #expect(HTTPMethod("get") == .get)
        #expect(HTTPMethod("pAtCh") == .patch)
        #expect(HTTPMethod("Options") == .options)
        #expect(HTTPMethod("delete"[...]) == .delete)
        #expect(HTTPMethod("BREW") == nil)
        #expect(HTTPMethod("") == nil)
        #expect(HTTPMethod("GETTING") == nil)
        #expect(HTTPMethod("OPTIONSX") == nil)
        #expect(HTTPMethod("gét") == nil)
        #expect(HTTPMethod.allCases.map(\.description) == ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])
        #expect(Set(HTTPMethod.allCases.map(\.bit)).count == 7)
    }

    func usersTrie() throws -> RouteTrie<String> {
        var builder = RouteTableBuilder<String>()
        try builder.add(method: .get, pattern: "/users", target: "index")
        try builder.add(method: .post, pattern: "/users", target: "create")
        try builder.add(method: .get, pattern: "/users/:id", target: "show")
        try builder.add(methods: [.put, .patch], pattern: "/users/{userID}", target: "update")
        try builder.add(method: .delete, pattern: "/users/:id", target: "destroy")
        try builder.add(method: .post, pattern: "/users/new", target: "new")
        return try builder.build()
    }

    @Test("a route registered for one method does not match another")
    func methods() throws {
        let trie = try usersTrie()
        #expect(trie.match(method: .get, path: "/users")?.target == "index")
        #expect(trie.match(method: .post, path: "/users")?.target == "create")
        #expect(trie.match(method: .delete, path: "/users") == nil)
        #expect(trie.match(method: .get, path: "/users/3")?.target == "show")
        let update = try #require(trie.match(method: .patch, path: "/users/3"))
        #expect(update.target == "update")
        #expect(update.method == .patch)
        #expect(update.parameters["userID"] == "3")
        #expect(update.parameters["id"] == nil, "each route keeps its own variable names")
        #expect(trie.match(method: .delete, path: "/users/3")?.parameters["id"] == "3")
        #expect(trie.match(method: .head, path: "/users/3") == nil)
    }

    @Test("matching backtracks past a literal route of another method")
    func methodAwareBacktracking() throws {
        let trie = try usersTrie()
        #expect(trie.match(method: .post, path: "/users/new")?.target == "new")
        let show = try #require(trie.match(method: .get, path: "/users/new"))
        #expect(show.target == "show")
        #expect(show.parameters["id"] == "new")
    }

    @Test("match(path:) ignores the method and returns the first registered route")
    func anyMethod() throws {
        let trie = try usersTrie()
        #expect(trie.match(path: "/users")?.target == "index")
        #expect(trie.match(path: "/users/9")?.target == "show")
        #expect(trie.match(path: "/users/new")?.target == "new")
        #expect(trie.match(path: "/groups") == nil)
    }

    @Test("allowed methods for 405 answers")
    func allowedMethods() throws {
        let trie = try usersTrie()
        #expect(trie.allowedMethods(path: "/users") == [.get, .post])
        #expect(trie.allowedMethods(path: "/users/3?x=1") == [.get, .put, .patch, .delete])
        #expect(trie.allowedMethods(path: "/users/new") == [.get, .post, .put, .patch, .delete])
        #expect(trie.allowedMethods(path: "/nope").isEmpty)
    }

    @Test("builder lists its routes and the trie keeps them in order")
    func routesList() throws {
        let trie = try usersTrie()
        #expect(trie.routes.count == 7)
        #expect(trie.routes.map(\.target) == ["index", "create", "show", "update", "update", "destroy", "new"])
        #expect(trie.routes[3].method == .put)
        #expect(trie.routes[4].method == .patch)
    }
}
