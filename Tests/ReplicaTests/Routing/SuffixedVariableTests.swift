import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Variables followed by a literal suffix: ApiModel's and Rails' `/post/:id.json`.
@Suite("Suffixed route variables")
struct SuffixedVariableTests {
    /// A GET-only trie whose targets are the pattern texts, as the matching tests build it.
    func trie(_ patterns: [String]) throws -> RouteTrie<String> { try RouteMatchingTests().trie(patterns) }

    @Test("`:id.json` and `{id}.json` parse to one suffixed variable and print in colon form")
    func parsing() throws {
        let colon = try RoutePattern("/post/:id.json")
        #expect(colon.segments == [.literal("post"), .suffixedVariable("id", suffix: ".json")])
        #expect(colon.variables == ["id"])
        #expect(colon.description == "/post/:id.json")
        #expect(try RoutePattern("/post/{id}.json") == colon)
        #expect(try RoutePattern("/a/:name.tar.gz").segments.last == .suffixedVariable("name", suffix: ".tar.gz"))
        #expect(colon.shape == "/post/:_.json")
        #expect(colon.shape != (try RoutePattern("/post/:id")).shape)
    }

    @Test("a suffix not starting with a dot needs braces, and prints with them")
    func braceSuffix() throws {
        let pattern = try RoutePattern("/posts/{id}-edit")
        #expect(pattern.segments.last == .suffixedVariable("id", suffix: "-edit"))
        #expect(pattern.description == "/posts/{id}-edit")
        #expect(try RoutePattern(pattern.description) == pattern)
        let built = try RoutePattern(segments: [.suffixedVariable("id", suffix: "json")])
        #expect(built.description == "/{id}json")
        #expect(try RoutePattern(built.description) == built)
        let escaped = try RoutePattern("/x/{id}%7B%20")
        #expect(escaped.segments.last == .suffixedVariable("id", suffix: "{ "))
        #expect(escaped.description == "/x/{id}%7B%20")
        #expect(try RoutePattern(escaped.description) == escaped)
    }

    @Test("the segments initializer refuses an empty suffix")
    func emptySuffix() {
        #expect(throws: RouteError.self) { try RoutePattern(segments: [.suffixedVariable("id", suffix: "")]) }
    }

    @Test("a suffixed variable captures the value without its suffix, percent-decoded")
    func matching() throws {
        let trie = try trie(["/post/:id.json", "/posts.json"])
        let match = try #require(trie.match(method: .get, path: "/post/7.json?x=1"))
        #expect(match.target == "/post/:id.json")
        #expect(match.parameters["id"] == "7")
        #expect(trie.match(method: .get, path: "/post/a%2Fb%20c.json")?.parameters["id"] == "a/b c")
        #expect(trie.match(method: .get, path: "/post/7.json.json")?.parameters["id"] == "7.json")
        #expect(trie.match(method: .get, path: "/post/7%2Ejson")?.parameters["id"] == "7", "the suffix compares decoded")
        #expect(trie.match(method: .get, path: "/post/7%2ejson")?.parameters["id"] == "7")
        #expect(trie.match(method: .get, path: "/post/%37.json")?.parameters["id"] == "7")
        #expect(trie.match(method: .get, path: "/post/7") == nil)
        #expect(trie.match(method: .get, path: "/post/.json") == nil, "the value may not be empty")
        #expect(trie.match(method: .get, path: "/post/7.JSON") == nil, "suffixes are case-sensitive")
        #expect(trie.match(method: .get, path: "/post/7.jso") == nil)
        #expect(trie.match(method: .get, path: "/post/%zz.json") == nil, "a malformed escape matches nothing")
        #expect(trie.match(method: .get, path: "/posts.json")?.target == "/posts.json")
    }

    @Test("precedence: literal, then the longest suffix, then the plain variable; backtracking between them")
    func precedence() throws {
        let trie = try trie(["/f/:id", "/f/:id.gz", "/f/:id.tar.gz", "/f/new.gz", "/f/:id.gz/meta", "/g/:a.x/one", "/g/:b/two"])
        #expect(trie.match(method: .get, path: "/f/new.gz")?.target == "/f/new.gz")
        #expect(trie.match(method: .get, path: "/f/a.tar.gz")?.target == "/f/:id.tar.gz")
        #expect(trie.match(method: .get, path: "/f/a.tar.gz")?.parameters["id"] == "a")
        #expect(trie.match(method: .get, path: "/f/a.gz")?.parameters["id"] == "a")
        #expect(trie.match(method: .get, path: "/f/a.gz")?.target == "/f/:id.gz")
        #expect(trie.match(method: .get, path: "/f/a.zip")?.parameters["id"] == "a.zip")
        #expect(trie.match(method: .get, path: "/f/new.gz/meta")?.target == "/f/:id.gz/meta")
        #expect(trie.match(method: .get, path: "/f/new.gz/meta")?.parameters["id"] == "new")
        // The suffixed branch fails deeper: the plain variable captures the whole segment.
        let two = try #require(trie.match(method: .get, path: "/g/q.x/two"))
        #expect(two.target == "/g/:b/two")
        #expect(two.parameters["b"] == "q.x")
        #expect(trie.match(method: .get, path: "/g/q.x/one")?.parameters["a"] == "q")
    }

    @Test("routes differing only by variable name are still ambiguous; different suffixes are not")
    func conflicts() throws {
        var builder = RouteTableBuilder<String>()
        try builder.add(method: .get, pattern: "/p/:id.json", target: "a")
        try builder.add(method: .get, pattern: "/p/{key}.json", target: "b")
        let error = #expect(throws: RouteError.self) { try builder.build() }
        #expect(error?.code == .ambiguousRoutes)
        _ = try trie(["/p/:id.json", "/p/:id.xml", "/p/:id"])
    }

    @Test("reverse routing fills the value and appends the suffix")
    func reverse() throws {
        #expect(try RoutePattern("/post/:id.json").path(with: ["id": "7"]) == "/post/7.json")
        #expect(try RoutePattern("/post/:id.json").path(with: ["id": "a b"]) == "/post/a%20b.json")
        #expect(try RoutePattern("/x/{id}-edit").path(with: ["id": "3"]) == "/x/3-edit")
        let error = #expect(throws: RouteError.self) { try RoutePattern("/post/:id.json").path(with: [String: String]()) }
        #expect(error?.code == .missingVariable)
        // What reverse routing builds, matching reads back.
        let trie = try trie(["/post/:id.json"])
        for value in ["7", "a.json", "é/ü", "x%y"] {
            let path = try RoutePattern("/post/:id.json").path(with: ["id": value])
            #expect(trie.match(method: .get, path: path)?.parameters["id"] == value, "\(path)")
        }
    }

    @Test("a route table scopes a suffixed key variable: the route shows one object")
    func routeTable() throws {
        let schema = try Schema(name: "t", routes: [
            Route(.get, "/post/:id.json", target: .entity("Post")),
            Route(.get, "/posts.json", target: .entity("Post"), stale: .delete),
        ]) {
            Entity("Post") {
                Attribute("id", .integer)
                Attribute("title", .string)
            }
        }
        let table = try RouteTable(schema: schema)
        let resolution = try table.resolve(.get, "/post/7.json")
        #expect(resolution.scope.conditions == [RouteScope.Condition(attribute: "id", value: .integer(7))])
        #expect(resolution.scope.isSingleObject)
        #expect(try table.resolve(.get, "/posts.json").scope.isEmpty)
        let error = #expect(throws: RouteError.self) { try table.resolve(.get, "/post/x.json") }
        #expect(error?.code == .invalidVariable)
    }
}

/// Singleton routes (`/user.json`): one object of an entity, named without its key.
@Suite("Singleton routes")
struct SingletonRouteTests {
    static let entities = """
        "entities": {"User": {"attributes": {"id": "integer", "name": "string"}}}
        """

    @Test("a schema file's singleton route names one object and round-trips through the file form")
    func schemaFile() throws {
        let json = """
            {"name": "t", \(Self.entities),
             "routes": [{"path": "/user.json", "target": "User", "singleton": true},
                        {"path": "/users.json", "target": "User", "stale": "delete"}]}
            """
        let schema = try Schema(json: Data(json.utf8), file: "s.json")
        #expect(schema.routes[0].singleton)
        #expect(!schema.routes[1].singleton)
        let table = try RouteTable(schema: schema)
        let resolution = try table.resolve(.get, "/user.json")
        #expect(resolution.scope.isSingleObject)
        #expect(resolution.scope.isEmpty)
        #expect(try !table.resolve(.get, "/users.json").scope.isSingleObject)
        let again = try Schema(json: Data(schema.fileJSON.serializedBytes()), file: "again.json")
        #expect(again.routes == schema.routes)
    }

    @Test(
        "a singleton route must target an entity and keep stale rows",
        arguments: [
            (#"{"path": "/me", "target": "DATA", "singleton": true}"#, "/routes/0/singleton", "must target an entity, not DATA"),
            (#"{"path": "/me", "target": "User", "singleton": true, "stale": "delete"}"#, "/routes/0/stale",
             "cannot delete stale rows"),
            (#"{"path": "/me", "target": "User", "singleton": "yes"}"#, "/routes/0/singleton", "expected"),
        ])
    func invalid(route: String, pointer: String, problem: String) {
        let json = "{\"name\": \"t\", \(Self.entities), \"routes\": [\(route)]}"
        let error = #expect(throws: SchemaError.self) { try Schema(json: Data(json.utf8), file: "s.json") }
        #expect(error?.pointer?.description == pointer)
        #expect(error?.message.contains(problem) == true, "\(error?.message ?? "")")
    }
}
