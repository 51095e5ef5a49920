import Foundation
import Replica
import ReplicaServer
import ReplicaTestSupport
import Testing

/// Nested to-one objects (issue 58, item 7): stored in their own resources, the foreign key set, and
/// served back, on every store and in every shape a Replica client accepts them.
@Suite("MockServer: nested to-one objects")
struct MockServerToOneTests {
    static let stores = ["memory", "sqlite", "postgres"]

    static var issuesSchema: Schema {
        get throws { try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/issues.json")) }
    }

    /// The Swagger Petstore's pets as `replica schema infer` reads its OpenAPI document: a `category`
    /// object whose key the pet holds in `categoryID`.
    static let petStore = """
        {
          "name": "petstore", "version": 1, "keyConvention": "camelCase",
          "entities": {
            "Category": {"attributes": {"id": "integer", "name": "string"}},
            "Pet": {"attributes": {"id": "integer", "name": {"type": "string", "nullable": false}, "categoryID": "integer",
                                   "status": "string"},
                    "relationships": {"category": {"toOne": "Category", "foreignKey": "categoryID"}}}
          },
          "routes": [
            { "method": "POST", "path": "/pet", "target": "Pet" },
            { "path": "/pet/:petId", "target": "Pet" }
          ]
        }
        """

    func withIssues(_ kind: String, _ body: (MockServer, Client) async throws -> Void) async throws {
        let schema = try Self.issuesSchema
        try await withServer(MockResource.resources(for: schema), routes: MockRoute.routes(for: schema),
                             options: MockServerOptions(store: try await Fixture.store(kind)), body)
    }

    @Test("POST /issues with a nested user stores user 7, sets user_id and serves the user back; labels are kept",
          arguments: stores)
    func nestedObject(kind: String) async throws {
        try await withIssues(kind) { _, client in
            let created = try await client.post("/issues", """
                {"number": 1, "title": "t", "user": {"id": 7, "login": "ann"}, "labels": [{"id": 1, "name": "bug"}]}
                """)
            #expect(created.status == 201)
            #expect(created.json?["user_id"] == 7)
            #expect(created.json?["user"] == .parse(#"{"id": 7, "login": "ann"}"#))
            #expect(created.json?["labels"] == .parse(#"[{"id": 1, "name": "bug"}]"#))
            let user = try await client.get("/users/7")
            #expect(user.status == 200)
            #expect(user.json == .parse(#"{"id": 7, "login": "ann"}"#))
            let shown = try await client.get("/issues/1")
            #expect(shown.json?["user_id"] == 7)
            #expect(shown.json?["user"]?["login"] == "ann")
            let listed = try await client.get("/issues")
            #expect(listed.json?[0]?["user"]?["login"] == "ann")
            #expect(listed.json?[0]?["user_id"] == 7)
            // The API's own route serves it too.
            #expect(try await client.get("/repos/o/r/issues").status == 200)

            // A second issue by the same user with a new login merges into user 7.
            let second = try await client.post("/issues", #"{"number": 2, "title": "u", "user": {"id": 7, "login": "ann2"}}"#)
            #expect(second.json?["user"]?["login"] == "ann2")
            #expect(try await client.get("/users").json?.arrayValue?.count == 1)
            #expect(try await client.get("/users/7").json?["login"] == "ann2")

            // A nested object without a key is created and gets one.
            let keyless = try await client.post("/issues", #"{"number": 3, "title": "v", "user": {"login": "bob"}}"#)
            #expect(keyless.status == 201)
            let bobID = try #require(keyless.json?["user_id"])
            #expect(keyless.json?["user"]?["id"] == bobID)
            #expect(try await client.get("/users/\(bobID.serialized())").json?["login"] == "bob")
        }
    }

    @Test("every shape the client accepts: the foreign key alone, a bare key, null, the key beside the object", arguments: stores)
    func otherShapes(kind: String) async throws {
        try await withIssues(kind) { _, client in
            #expect(try await client.post("/users", #"{"id": 8, "login": "eve"}"#).status == 201)
            // The foreign key alone: served with the foreign key alone, as written.
            let plain = try await client.post("/issues", #"{"number": 1, "title": "a", "user_id": 8}"#)
            #expect(plain.status == 201)
            #expect(plain.json?["user_id"] == 8)
            #expect(plain.json?["user"] == nil)
            // A bare key at the relationship's key.
            let bare = try await client.post("/issues", #"{"number": 2, "title": "b", "user": 8}"#)
            #expect(bare.json?["user_id"] == 8)
            #expect(bare.json?["user"] == 8)
            // null clears the foreign key.
            let cleared = try await client.patch("/issues/2", #"{"user": null}"#)
            #expect(cleared.status == 200)
            #expect(cleared.json?["user_id"] == .null)
            // The foreign key beside the object wins, as in the client; the object is stored all the same.
            let both = try await client.post("/issues", #"{"number": 3, "title": "c", "user_id": 8, "user": {"id": 9, "login": "zed"}}"#)
            #expect(both.json?["user_id"] == 8)
            #expect(both.json?["user"]?["login"] == "eve")
            #expect(try await client.get("/users/9").json?["login"] == "zed")
            // A new foreign key alone moves a nested user along to the user it names.
            let nested = try await client.post("/issues", #"{"number": 4, "title": "d", "user": {"id": 9, "login": "zed"}}"#)
            let id = try #require(nested.json?["id"])
            let moved = try await client.patch("/issues/\(id.serialized())", #"{"user_id": 8}"#)
            #expect(moved.json?["user_id"] == 8)
            #expect(moved.json?["user"] == .parse(#"{"id": 8, "login": "eve"}"#))
            #expect(try await client.get("/issues/\(id.serialized())").json?["user"]?["login"] == "eve")
        }
    }

    @Test("a nested object of the wrong shape is a 422 naming its field", arguments: ["memory", "sqlite"])
    func invalidNested(kind: String) async throws {
        try await withIssues(kind) { _, client in
            let wrongType = try await client.post("/issues", #"{"number": 1, "title": "a", "user": {"id": 7, "login": 5}}"#)
            #expect(wrongType.status == 422)
            #expect(wrongType.json?["errors"]?["user.login"] != nil, "\(wrongType.text)")
            let array = try await client.post("/issues", #"{"number": 1, "title": "a", "user": [7]}"#)
            #expect(array.status == 422)
            #expect(array.json?["errors"]?["user"] != nil, "\(array.text)")
            let wrongKey = try await client.post("/issues", #"{"number": 1, "title": "a", "user": "seven"}"#)
            #expect(wrongKey.status == 422)
            #expect(try await client.get("/users").json?.arrayValue?.isEmpty == true)
            #expect(try await client.get("/issues").json?.arrayValue?.isEmpty == true)
        }
    }

    @Test("loaded data keeps nested to-one objects too", arguments: stores)
    func loadedNested(kind: String) async throws {
        try await withIssues(kind) { server, client in
            let result = try await server.load(json: .parse("""
                {"issues": [{"id": 1, "number": 1, "title": "a", "user": {"id": 7, "login": "ann"}},
                            {"id": 2, "number": 2, "title": "b", "user": {"id": 7, "login": "ann"}},
                            {"id": 3, "number": 3, "title": "c", "user_id": 7}]}
                """))
            #expect(result.loaded == 3)
            #expect(try await client.get("/users/7").json?["login"] == "ann")
            let issues = try await client.get("/issues?_sort=id")
            #expect(issues.json?.arrayValue?.compactMap { $0["user_id"] } == [7, 7, 7])
            #expect(issues.json?[1]?["user"]?["login"] == "ann")
            #expect(issues.json?[2]?["user"] == nil)
        }
    }

    @Test("the Petstore's pet keeps its category: POST /pet stores category 1 and GET /pet/10 serves it", arguments: stores)
    func petCategory(kind: String) async throws {
        let schema = try Schema(json: Data(Self.petStore.utf8), file: "petstore.json")
        try await withServer(MockResource.resources(for: schema), routes: MockRoute.routes(for: schema),
                             options: MockServerOptions(store: try await Fixture.store(kind))) { _, client in
            let created = try await client.post("/pet", #"{"id": 10, "name": "doggie", "category": {"id": 1, "name": "Dogs"}, "status": "available"}"#)
            #expect(created.status == 201)
            #expect(created.json?["categoryID"] == 1)
            let pet = try await client.get("/pet/10")
            #expect(pet.json?["categoryID"] == 1)
            #expect(pet.json?["category"] == .parse(#"{"id": 1, "name": "Dogs"}"#))
            #expect(try await client.get("/categories/1").json?["name"] == "Dogs")
        }
    }
}
