import Foundation
import Replica
import ReplicaServer
import ReplicaTestSupport
import Testing

/// The mock server reads and matches its API routes as the client does (the core's `RoutePattern`
/// and `RouteTrie`), and names JSON keys by the core's one rule (`PropertyMap`).
@Suite("MockServer: API routes and JSON keys by the core's rules")
struct MockServerCoreRoutingTests {
    @Test("two routes of one shape: the first answers values that fit its variable's property, the second the rest")
    func sameShapeByType() async throws {
        // Served at /users, a path RESTEasy does not answer for the resource `accounts`.
        let accounts = MockResource("accounts", properties: [MockProperty("username", .string)])
        let routes = [
            MockRoute("GET", "/users/:id", resource: "accounts"),
            MockRoute("GET", "/users/:username", resource: "accounts"),
            MockRoute("GET", "/users/me", resource: "accounts", envelope: "me"),
        ]
        try await withServer([accounts], routes: routes) { server, client in
            _ = try await server.load(json: .parse(#"[{"id": 7, "username": "alice"}, {"id": 8, "username": "bob"}]"#), into: "accounts")
            #expect(try await client.get("/users/7").json?["username"] == "alice")
            #expect(try await client.get("/users/bob").json?["id"] == 8)
            #expect(try await client.get("/users/me").json?["me"] != nil)
            #expect(try await client.get("/users/nobody").status == 404)
            let refused = try await client.delete("/users/7")
            #expect(refused.status == 405)
            #expect(refused.header("Allow") == "GET")
        }
    }

    @Test("OpenAPI's {name}, a suffixed :id.json, escapes in literals and a path without its leading slash read as the client reads them")
    func patternsAsTheCoreReadsThem() async throws {
        let posts = MockResource("posts", properties: [MockProperty("title", .string)])
        let routes = [
            MockRoute("GET", "/post/:id.json", resource: "posts"),
            MockRoute("GET", "/caf%C3%A9s/{id}", resource: "posts"),
            MockRoute("GET", "v1/posts", resource: "posts"),
        ]
        try await withServer([posts], routes: routes) { server, client in
            _ = try await server.load(json: .parse(#"[{"id": 3, "title": "t"}]"#), into: "posts")
            #expect(try await client.get("/post/3.json").json?["title"] == "t")
            #expect(try await client.get("/post/3").status == 404)
            #expect(try await client.get("/caf%C3%A9s/3").json?["title"] == "t")
            #expect(try await client.get("/v1/posts").text.contains(#""title":"t""#))
        }
    }

    @Test("a route path no pattern reads is refused, saying why")
    func invalidPatternRefused() async throws {
        let tags = MockResource("tags", properties: [MockProperty("label", .string)])
        for path in ["/a//b", "/t/:x/:x", "/t/{user-id}"] {
            do {
                _ = try await MockServer.start(resources: [tags], routes: [MockRoute("GET", path, resource: "tags")])
                Issue.record("\(path) was accepted")
            } catch let error as MockServerError {
                #expect(error.code == .invalidResource)
                #expect(error.message.hasPrefix("route GET \(path): "))
            }
        }
    }

    @Test("the member route builds Location by the core's reverse routing, values percent-encoded")
    func locationByReverseRouting() async throws {
        let tags = MockResource("tags", properties: [MockProperty("label", .string)], primaryKey: .string("name"))
        let routes = [MockRoute("POST", "/v2/tags", resource: "tags"), MockRoute("GET", "/v2/tags/{name}", resource: "tags")]
        try await withServer([tags], routes: routes) { _, client in
            let created = try await client.post("/v2/tags", #"{"name": "a/b c", "label": "x"}"#)
            #expect(created.status == 201)
            #expect(created.header("Location") == "/v2/tags/a%2Fb%20c")
            #expect(try await client.get("/v2/tags/a%2Fb%20c").json?["label"] == "x")
        }
    }

    @Test("a resource's properties carry the JSON keys the client's property map reads")
    func propertiesNamedAsTheClientMapsThem() throws {
        let schema = try Schema(json: Data("""
            {"name": "keys", "version": 1, "keyConvention": "snake_case",
             "entities": {
               "User": {"primaryKey": "userID", "attributes": {"userID": "integer", "avatarSm": "string",
                        "homeCity": {"type": "string", "jsonKey": "address.city"}}},
               "Post": {"attributes": {"id": "integer", "userID": "integer", "title": "string"},
                        "relationships": {"author": {"toOne": "User", "foreignKey": "userID"}}}
             },
             "routes": [{"path": "/users/:userID", "target": "User"}, {"path": "/users/:user_id/posts", "target": "Post"}]}
            """.utf8), file: "keys.json")
        for entity in schema.entities {
            let map = try PropertyMap(entity: entity, in: schema)
            let resource = MockResource(entity: entity, in: schema)
            for attribute in entity.attributes where attribute.name != entity.primaryKey {
                let property = MockProperty(attribute, in: schema)
                #expect(property.name == map.jsonKey(forAttribute: attribute.name))
                #expect(property.type == MockPropertyType(attribute.type))
                #expect(resource.property(named: property.name) != nil)
            }
        }
        let users = MockResource(entity: try schema.requireEntity("User"), in: schema)
        // A one-column key keeps its attribute's own key (`user_id`), as the mock server always served it.
        #expect(users.primaryKey == .autoIncrement("user_id"))
        #expect(users.property(named: "avatar_sm")?.type == .string)
        let posts = MockResource(entity: try schema.requireEntity("Post"), in: schema)
        #expect(posts.parents == [MockParent("users", key: "user_id")])
        let routes = MockRoute.routes(for: schema)
        #expect(routes[0].bindings == ["userID": "user_id"])
        #expect(routes[1].bindings == ["user_id": "user_id"])
    }
}
