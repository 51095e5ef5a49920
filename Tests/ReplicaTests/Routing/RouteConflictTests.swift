import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Route conflicts")
struct RouteConflictTests {
    @Test("the same method and pattern twice is a duplicate naming both")
    func duplicate() throws {
        var builder = RouteTableBuilder<Int>()
        try builder.add(method: .get, pattern: "/users/:id", target: 1)
        try builder.add(method: .get, pattern: "/users", target: 2)
        try builder.add(method: .get, pattern: "/users/{id}/", target: 3)
        let error = #expect(throws: RouteError.self) { try builder.build() }
        #expect(error?.code == .duplicateRoute)
        #expect(error?.pattern == "/users/:id")
        #expect(error?.otherPattern == "/users/:id")
        #expect(error?.message == "duplicate route: GET \"/users/:id\" (route #3) repeats GET \"/users/:id\" (route #1)")
    }

    @Test("the same shape with other variable names is ambiguous, naming both")
    func ambiguous() throws {
        var builder = RouteTableBuilder<Int>()
        try builder.add(method: .get, pattern: "/users/:id/posts", target: 1)
        try builder.add(method: .get, pattern: "/users/:userID/posts", target: 2)
        let error = #expect(throws: RouteError.self) { try builder.build() }
        #expect(error?.code == .ambiguousRoutes)
        #expect(error?.pattern == "/users/:id/posts")
        #expect(error?.otherPattern == "/users/:userID/posts")
        let message = error?.message ?? ""
        #expect(message.contains("\"/users/:id/posts\""))
        #expect(message.contains("\"/users/:userID/posts\""))
        #expect(message.contains("GET"))
        #expect(message.contains("same shape \"/users/:_/posts\""))
    }

    @Test("same shape for different methods, or different shapes, are fine")
    func noConflict() throws {
        var builder = RouteTableBuilder<Int>()
        try builder.add(method: .get, pattern: "/users/:id", target: 1)
        try builder.add(method: .delete, pattern: "/users/:userID", target: 2)
        try builder.add(method: .get, pattern: "/users/new", target: 3)
        try builder.add(method: .get, pattern: "/users/:id/posts", target: 4)
        try builder.add(method: .get, pattern: "/:section/:id", target: 5)
        let trie = try builder.build()
        #expect(trie.match(method: .delete, path: "/users/5")?.parameters["userID"] == "5")
        #expect(trie.match(method: .get, path: "/users/5")?.target == 1)
        #expect(trie.match(method: .get, path: "/groups/5")?.target == 5)
    }

    @Test("RouteTrie(routes:) checks too; error codes print their names")
    func directInit() throws {
        let pattern = try RoutePattern("/a")
        let entries = [RouteEntry(method: .put, pattern: pattern, target: 1), RouteEntry(method: .put, pattern: pattern, target: 2)]
        let error = #expect(throws: RouteError.self) { try RouteTrie(routes: entries) }
        #expect(error?.code == .duplicateRoute)
        #expect(error?.message.contains("PUT \"/a\"") == true)
        #expect(RouteError.Code.ambiguousRoutes.description == "ambiguousRoutes")
        #expect(RouteError.Code.missingVariable.description == "missingVariable")
        #expect(error.map { "\($0)" } == error?.message)
    }

    @Test("an invalid pattern is refused by add")
    func invalidPatternInAdd() {
        var builder = RouteTableBuilder<Int>()
        let error = #expect(throws: RouteError.self) { try builder.add(method: .get, pattern: "users", target: 1) }
        #expect(error?.code == .invalidPattern)
        #expect(builder.routes.isEmpty)
    }
}
