import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("RoutePattern parsing")
struct RoutePatternTests {
    @Test("colon variables")
    func colonVariables() throws {
        let pattern = try RoutePattern("/api/groups/:gid/messages/:mid")
        #expect(pattern.segments == [
            .literal("api"), .literal("groups"), .variable("gid"), .literal("messages"), .variable("mid"),
        ])
        #expect(pattern.variables == ["gid", "mid"])
        #expect(pattern.description == "/api/groups/:gid/messages/:mid")
    }

    @Test("brace variables are a synonym and print in colon form")
    func braceVariables() throws {
        let braces = try RoutePattern("/api/groups/{gid}/messages/{mid}")
        let colons = try RoutePattern("/api/groups/:gid/messages/:mid")
        #expect(braces == colons)
        #expect(braces.description == "/api/groups/:gid/messages/:mid")
        #expect(try RoutePattern("/a/{x}/:y").variables == ["x", "y"])
    }

    @Test("root, trailing slash and shape")
    func rootAndTrailingSlash() throws {
        #expect(try RoutePattern("/").segments.isEmpty)
        #expect(try RoutePattern("/").description == "/")
        #expect(try RoutePattern("/users/") == RoutePattern("/users"))
        #expect(try RoutePattern("/users/:id/").description == "/users/:id")
        #expect(try RoutePattern("/users/:userID").shape == "/users/:_")
        #expect(try RoutePattern("/users/:id").shape == RoutePattern("/users/{userID}").shape)
    }

    @Test("variable names: letters, digits, underscore, unicode letters")
    func variableNames() throws {
        #expect(try RoutePattern("/:_x1/:user_id/:Ünïcode").variables == ["_x1", "user_id", "Ünïcode"])
    }

    @Test("literals are percent-decoded; description re-encodes only what must be")
    func literalDecoding() throws {
        let escaped = try RoutePattern("/caf%C3%A9s/:name")
        #expect(escaped == (try RoutePattern("/cafés/:name")))
        #expect(escaped.segments.first == .literal("cafés"))
        #expect(escaped.description == "/cafés/:name")
        let slash = try RoutePattern("/a%2Fb/%3Aliteral/x:y")
        #expect(slash.segments == [.literal("a/b"), .literal(":literal"), .literal("x:y")])
        #expect(slash.description == "/a%2Fb/%3Aliteral/x:y")
        #expect(try RoutePattern(slash.description) == slash)
    }

    @Test("segments initializer validates too")
    func segmentsInitializer() throws {
        let pattern = try RoutePattern(segments: [.literal("users"), .variable("id")])
        #expect(pattern.description == "/users/:id")
        let error = #expect(throws: RouteError.self) {
            try RoutePattern(segments: [.variable("id"), .variable("id")])
        }
        #expect(error?.code == .invalidPattern)
        #expect(throws: RouteError.self) { try RoutePattern(segments: [.literal("")]) }
    }

    @Test(
        "invalid patterns name the pattern and the problem",
        arguments: [
            ("users", "must start with \"/\""),
            ("", "must start with \"/\""),
            ("/users//posts", "segment 2 is empty"),
            ("//", "segment 1 is empty"),
            ("/users/:", "a variable name is empty"),
            ("/users/{}", "a variable name is empty"),
            ("/users/:1st", "variable name \"1st\" is not an identifier"),
            ("/users/:user-id", "variable name \"user-id\" is not an identifier"),
            ("/users/{id", "opens \"{\" without closing it"),
            ("/users/x{id}", "must start its segment"),
            ("/users/id}", "must start its segment"),
            ("/users/:id/posts/{id}", "variable \"id\" appears more than once"),
            ("/users?page=1", "may not contain \"?\" or \"#\""),
            ("/users#top", "may not contain \"?\" or \"#\""),
            ("/users/%zz", "invalid percent escape"),
            ("/users/%C3", "invalid percent escape"),
            // Suffixed variables (`:id.json`): a suffix after `:name` starts with a dot.
            ("/users/:.json", "variable name \".json\" is not an identifier"),
            ("/users/{id}x{y}", "a variable's suffix may not hold"),
            ("/users/{id}.j%zz", "invalid percent escape"),
            ("/users/:id.json/:id.xml", "variable \"id\" appears more than once"),
        ]
    )
    func invalidPatterns(text: String, problem: String) {
        let error = #expect(throws: RouteError.self) { try RoutePattern(text) }
        #expect(error?.code == .invalidPattern)
        #expect(error?.pattern == text)
        #expect(error?.message.contains("\"\(text)\"") == true, "message names the pattern: \(error?.message ?? "")")
        #expect(error?.message.contains(problem) == true, "message names the problem: \(error?.message ?? "")")
    }
}
