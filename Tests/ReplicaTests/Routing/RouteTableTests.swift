import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Route table")
struct RouteTableTests {
    static func blog() throws -> Schema { try Schema(contentsOf: TestSupport.schemaFile("blog.json")) }

    @Test("resolves entity, nested-scope, single-object, DATA and MANY routes")
    func resolves() throws {
        let table = try RouteTable(schema: try Self.blog())
        let users = try table.resolve(.get, "/users/")
        #expect(users.entry.entity?.name == "User")
        #expect(users.scope.isEmpty)
        #expect(users.route.stalePolicy == .delete)

        let posts = try table.resolve(.get, "/users/3/posts?page=2")
        #expect(posts.entry.entity?.name == "Post")
        #expect(posts.scope.conditions == [RouteScope.Condition(attribute: "userID", value: .integer(3))])
        #expect(posts.scope.isSingleObject == false)
        #expect(posts.scope.whereClause.sql == "\"userID\" = ?")
        #expect(posts.scope.whereClause.arguments == [.integer(3)])
        #expect(posts.parameters["userID"] == "3")

        let post = try table.resolve(.get, "/posts/7")
        #expect(post.scope.isSingleObject)
        #expect(post.scope.value(of: "id") == .integer(7))

        let user = try table.resolve(.get, "/users/9")
        #expect(user.scope.conditions == [RouteScope.Condition(attribute: "userID", value: .integer(9))])
        #expect(user.scope.isSingleObject)

        #expect(try table.resolve(.get, "/bootstrap").route.target == .many)
        #expect(try table.resolve(.get, "/stats").route.target == .data)
        #expect(try table.resolve(.post, "/posts").entry.entity?.name == "Post")
    }

    @Test("errors name the route, the variable and the allowed methods")
    func errors() throws {
        let table = try RouteTable(schema: try Self.blog())
        let invalid = #expect(throws: RouteError.self) { try table.resolve(.get, "/users/abc/posts") }
        #expect(invalid?.code == .invalidVariable)
        #expect(invalid?.message == "route GET /users/:userID/posts: variable 'userID' is 'abc', not a valid integer for Post.userID")
        let missing = #expect(throws: RouteError.self) { try table.resolve(.get, "/nope") }
        #expect(missing?.code == .noRoute)
        #expect(missing?.message == "no route for GET /nope")
        let method = #expect(throws: RouteError.self) { try table.resolve(.delete, "/posts") }
        #expect(method?.message == "no route for DELETE /posts (the path allows POST)")
    }

    @Test("variables scope attributes by name, relationship or JSON key")
    func scopeByRelationshipOrJSONKey() throws {
        let schema = try Schema(name: "t", routes: [
            Route(.get, "/authors/:author/posts", target: .entity("Post")),
            Route(.get, "/people/:user_id/drafts", target: .entity("Post")),
            Route(.get, "/tags/{tag}/posts", target: .entity("Post")),
        ]) {
            Entity("User") { Attribute("id", .integer) }
            Entity("Post") {
                Attribute("id", .integer)
                Attribute("userID", .integer)
                Relationship.toOne("author", "User", foreignKey: "userID")
            }
        }
        let table = try RouteTable(schema: schema)
        #expect(try table.resolve(.get, "/authors/5/posts").scope.conditions == [.init(attribute: "userID", value: .integer(5))])
        #expect(try table.resolve(.get, "/people/6/drafts").scope.conditions == [.init(attribute: "userID", value: .integer(6))])
        // A variable that names nothing of the entity is a plain variable, not a scope.
        let tagged = try table.resolve(.get, "/tags/swift%20nio/posts")
        #expect(tagged.scope.isEmpty)
        #expect(tagged.parameters["tag"] == "swift nio")
    }

    @Test("ambiguous routes in a schema are refused, naming both patterns and pointing at the later one")
    func ambiguousRoutes() throws {
        let json = """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer"}}},
             "routes": [{"path": "/users/:id", "target": "User"}, {"path": "/users/:userID/", "target": "User"}]}
            """
        let error = #expect(throws: SchemaError.self) { try Schema(json: Data(json.utf8), file: "routes.json") }
        #expect(error?.code == .invalidRoute)
        #expect(error?.pointer?.description == "/routes/1/path")
        #expect(error?.message.contains("/users/:id") == true)
        #expect(error?.message.contains("/users/:userID") == true)
    }

    @Test("an invalid pattern is refused at its pointer")
    func invalidPattern() throws {
        let json = """
            {"name": "t", "entities": {"User": {"attributes": {"id": "integer"}}},
             "routes": [{"path": "/users/:id/posts/:id", "target": "User"}]}
            """
        let error = #expect(throws: SchemaError.self) { try Schema(json: Data(json.utf8), file: "routes.json") }
        #expect(error?.code == .invalidRoute)
        #expect(error?.pointer?.description == "/routes/0/path")
    }

    @Test("reverse routing builds encoded paths and names a missing variable")
    func reverse() throws {
        let table = try RouteTable(schema: try Self.blog())
        #expect(try table.path(for: "/users/:userID/posts", values: ["userID": "3"]) == "/users/3/posts")
        #expect(try table.path(for: "/users/:userID/posts", values: ["userID": "a b/c"]) == "/users/a%20b%2Fc/posts")
        let error = #expect(throws: RouteError.self) { try table.path(for: "/posts/:postID/comments", values: [:]) }
        #expect(error?.code == .missingVariable)
        #expect(error?.message.contains("postID") == true)
    }
}
