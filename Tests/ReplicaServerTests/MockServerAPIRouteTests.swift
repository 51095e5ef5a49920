import Foundation
import Replica
import ReplicaServer
import ReplicaTestSupport
import Testing

/// The mock server answers an API's own routes (a schema's `routes`, OpenAPI's paths) beside
/// RESTEasy's: `POST /pet`, `GET /pet/{petId}`, `PUT /pet` with the key in the body, `GET /user/{username}`
/// by a property, `GET /users/:userID/posts` within a parent, on every store.
@Suite("MockServer: an API's own routes")
struct MockServerAPIRouteTests {
    static let stores = ["memory", "sqlite", "postgres"]

    /// The pet store's paths, as its OpenAPI document gives them.
    static let petStore = """
        {
          "name": "petstore", "version": 1, "keyConvention": "camelCase",
          "entities": {
            "Pet": {
              "attributes": {
                "id": "integer", "name": { "type": "string", "nullable": false }, "status": "string", "photoUrls": "json"
              }
            },
            "User": {
              "attributes": { "id": "integer", "username": { "type": "string", "nullable": false }, "email": "string" }
            }
          },
          "routes": [
            { "path": "/pet/findByStatus", "target": "Pet" },
            { "path": "/pet/:petId", "target": "Pet" },
            { "method": "POST", "path": "/pet", "target": "Pet" },
            { "method": "PUT", "path": "/pet", "target": "Pet" },
            { "method": "POST", "path": "/pet/:petId", "target": "Pet" },
            { "method": "DELETE", "path": "/pet/:petId", "target": "Pet" },
            { "method": "POST", "path": "/user", "target": "User" },
            { "path": "/user/:username", "target": "User" },
            { "method": "PUT", "path": "/user/:username", "target": "User" },
            { "method": "DELETE", "path": "/user/:username", "target": "User" },
            { "path": "/user/login", "target": "DATA" }
          ]
        }
        """

    static func schema(_ text: String) throws -> Schema {
        try Schema(json: Data(text.utf8), file: "petstore.json")
    }

    @Test("a schema's entity routes become routes of its resources, variables bound to their JSON keys; DATA routes are left out")
    func routesOfSchema() throws {
        let petStore = MockRoute.routes(for: try Self.schema(Self.petStore))
        #expect(petStore.map(\.description) == [
            "GET /pet/findByStatus → pets", "GET /pet/:petId → pets", "POST /pet → pets", "PUT /pet → pets",
            "POST /pet/:petId → pets", "DELETE /pet/:petId → pets", "POST /user → users", "GET /user/:username → users",
            "PUT /user/:username → users", "DELETE /user/:username → users",
        ])
        // :petId names no attribute (it is the key by its place); :username names one.
        #expect(petStore[1].bindings == [:])
        #expect(petStore[7].bindings == ["username": "username"])
        let blog = MockRoute.routes(for: try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/blog.json")))
        #expect(blog.map(\.description) == [
            "GET /users → users", "GET /users/:userID → users", "GET /users/:userID/posts → posts", "GET /posts/:id → posts",
            "POST /posts → posts", "GET /posts/:postID/comments → comments",
        ])
        #expect(blog[1].bindings == ["userID": "user_id"])
        #expect(blog[2].bindings == ["userID": "user_id"])
    }

    @Test("create, show, find by status, update by the body's key or the query, delete: the pet store's paths", arguments: stores)
    func petStorePaths(kind: String) async throws {
        let schema = try Self.schema(Self.petStore)
        try await withServer(MockResource.resources(for: schema), routes: MockRoute.routes(for: schema),
                             options: MockServerOptions(store: try await Fixture.store(kind))) { server, client in
            let created = try await client.post("/pet", #"{"name": "doggie", "status": "available", "photoUrls": ["a.png"]}"#)
            #expect(created.status == 201)
            #expect(created.header("Location") == "/pet/1")
            #expect(created.json?["id"] == 1)
            #expect(try await client.post("/pet", #"{"name": "tom", "status": "sold"}"#).status == 201)

            let shown = try await client.get("/pet/1")
            #expect(shown.status == 200)
            #expect(shown.text == #"{"id":1,"name":"doggie","status":"available","photoUrls":["a.png"]}\#n"#)
            // A literal segment is not a key, whatever the order of the routes.
            let available = try await client.get("/pet/findByStatus?status=available")
            #expect(available.status == 200)
            #expect(available.json?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["doggie"])
            #expect(available.header("X-Total-Count") == "1")

            // PUT /pet names its object by the body's key.
            let renamed = try await client.put("/pet", #"{"id": 2, "name": "tom cat"}"#)
            #expect(renamed.status == 200)
            #expect(renamed.json?["name"] == "tom cat")
            #expect(renamed.json?["status"] == "sold")
            let keyless = try await client.put("/pet", #"{"name": "nobody"}"#)
            #expect(keyless.status == 422)
            #expect(keyless.text == #"{"errors":{"id":["is required in the body of PUT to name the object"]}}\#n"#)
            #expect(try await client.put("/pet", #"{"id": 99, "name": "ghost"}"#).status == 404)

            // POST /pet/{petId}?name=…&status=… updates from the query, as the pet store's form does.
            let sold = try await client.send(.POST, "/pet/1?status=sold")
            #expect(sold.status == 200)
            #expect(sold.json?["status"] == "sold")
            #expect(sold.json?["name"] == "doggie")

            // PATCH is no route of the API, nor of RESTEasy's (/pet is no resource): 405 with the API's methods.
            let patch = try await client.patch("/pet/1", #"{"name": "x"}"#)
            #expect(patch.status == 405)
            #expect(patch.header("Allow") == "GET, POST, DELETE")

            #expect(try await client.delete("/pet/1").status == 204)
            let gone = try await client.get("/pet/1")
            #expect(gone.status == 404)
            #expect(gone.text == #"{"error":{"status":404,"code":"notFound","message":"no pets with id 1"}}\#n"#)
            // RESTEasy's paths still answer.
            #expect(try await client.get("/pets").json?.arrayValue?.count == 1)
            #expect(server.routes.count == 10)
        }
    }

    @Test("GET, PUT and DELETE /user/{username} find the one object with that property", arguments: stores)
    func lookupByProperty(kind: String) async throws {
        let schema = try Self.schema(Self.petStore)
        try await withServer(MockResource.resources(for: schema), routes: MockRoute.routes(for: schema),
                             options: MockServerOptions(store: try await Fixture.store(kind))) { _, client in
            let created = try await client.post("/user", #"{"username": "theUser", "email": "john@email.com"}"#)
            #expect(created.status == 201)
            // No GET route by key: Location is RESTEasy's.
            #expect(created.header("Location") == "/users/1")
            #expect(try await client.post("/user", #"{"username": "other", "email": "o@email.com"}"#).status == 201)

            let shown = try await client.get("/user/theUser")
            #expect(shown.status == 200)
            #expect(shown.json?["email"] == "john@email.com")
            let updated = try await client.put("/user/theUser", #"{"email": "new@email.com"}"#)
            #expect(updated.status == 200)
            #expect(updated.json?["id"] == 1)
            #expect(updated.json?["email"] == "new@email.com")
            let missing = try await client.get("/user/nobody")
            #expect(missing.status == 404)
            #expect(missing.text == #"{"error":{"status":404,"code":"notFound","message":"no users with username nobody"}}\#n"#)
            // /user/login is a DATA route, which no resource answers: it is a username like any other.
            #expect(try await client.get("/user/login").status == 404)
            #expect(try await client.delete("/user/theUser").status == 204)
            #expect(try await client.get("/user/theUser").status == 404)
            #expect(try await client.get("/user/other").status == 200)
        }
    }

    @Test("a route under a parent lists and creates its children (404 for a missing parent); a composite key's leading parts scope a collection")
    func scopedCollections() async throws {
        let blog = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/blog.json"))
        try await withServer(MockResource.resources(for: blog), routes: MockRoute.routes(for: blog)) { server, client in
            _ = try await server.load(json: .parse(#"[{"user_id": 1, "name": "ann"}, {"user_id": 2, "name": "bob"}]"#), into: "users")
            _ = try await server.load(json: .parse(#"[{"id": 1, "user_id": 1, "title": "a"}, {"id": 2, "user_id": 2, "title": "b"}, {"id": 3, "user_id": 1, "title": "c"}]"#),
                                      into: "posts")
            let posts = try await client.get("/users/1/posts")
            #expect(posts.json?.arrayValue?.compactMap { $0["title"]?.stringValue } == ["a", "c"])
            let missing = try await client.get("/users/9/posts")
            #expect(missing.status == 404)
            #expect(missing.text == #"{"error":{"status":404,"code":"notFound","message":"no users with id 9"}}\#n"#)
            #expect(try await client.get("/users/2").json?["name"] == "bob")
            // POST /posts is the schema's; POST /users/1/posts is RESTEasy's nested create (the schema has no such route).
            #expect(try await client.post("/users/1/posts", #"{"id": 4, "title": "d"}"#).json?["user_id"] == 1)
        }

        let refs = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/git-refs.json"))
        try await withServer(MockResource.resources(for: refs), routes: MockRoute.routes(for: refs)) { server, client in
            _ = try await server.load(json: MockServerCompositeKeyTests.seed, into: "refs")
            let hello = try await client.get("/repos/octocat/Hello-World/git/refs")
            #expect(MockServerCompositeKeyTests.lines(hello) == [
                "octocat Hello-World refs/heads/main aa218f56b14c9653891f9e74264a383fa43fefbd",
                "octocat Hello-World refs/tags/v1.0 7fd1a60b01f91b314f59955a4e4d4e80d8edf11d",
            ])
            let main = try await client.get("/repos/octocat/Spoon-Knife/git/refs/refs%2Fheads%2Fmain")
            #expect(main.json?["object"]?["sha"] == "d0dd1f61b33d64e29d8bc1372a94ef6a2fee76a9")
            #expect(try await client.get("/repos/octocat/Spoon-Knife/git/refs/refs%2Fheads%2Fgone").status == 404)
        }
    }

    @Test("the most specific template wins; an envelope wraps the index; a route naming a property or resource that does not exist is refused")
    func specificityEnvelopeAndErrors() async throws {
        let tags = MockResource("tags", properties: [MockProperty("label", .string), MockProperty("uses", .integer)],
                                primaryKey: .string("name"))
        let routes = [
            MockRoute("GET", "/tags/:name", resource: "tags"),
            MockRoute("GET", "/tags/popular", resource: "tags", envelope: "data.tags"),
        ]
        try await withServer([tags], routes: routes) { server, client in
            _ = try await server.load(json: .parse(#"[{"name": "swift", "uses": 9}, {"name": "popular", "uses": 1}]"#), into: "tags")
            let popular = try await client.get("/tags/popular?_sort=uses&_order=desc")
            #expect(popular.text == #"{"data":{"tags":[{"name":"swift","label":null,"uses":9},{"name":"popular","label":null,"uses":1}]}}\#n"#)
            #expect(try await client.get("/tags/swift").json?["uses"] == 9)
            #expect(try await client.get("/tags/rust").status == 404)
        }
        do {
            _ = try await MockServer.start(resources: [tags], routes: [MockRoute("GET", "/labels", resource: "labels")])
            Issue.record("a route naming no resource was accepted")
        } catch let error as MockServerError {
            #expect(error.message == "route GET /labels: no resource 'labels'")
        }
        do {
            _ = try await MockServer.start(resources: [tags], routes: [MockRoute("GET", "/t/:x", resource: "tags", bindings: ["x": "nope"])])
            Issue.record("a binding to a missing property was accepted")
        } catch let error as MockServerError {
            #expect(error.message == "route GET /t/:x: variable :x names nope, which tags lacks")
        }
    }
}
