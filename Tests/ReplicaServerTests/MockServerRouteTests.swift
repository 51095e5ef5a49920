import ReplicaServer
import Testing

@Suite("MockServer routes")
struct MockServerRouteTests {
    @Test("RESTEasy's README curl session against Schemas/people.json")
    func restEasySession() async throws {
        try await withServer(try Fixture.peopleResources) { _, client in
            let empty = try await client.get("/people")
            #expect(empty.status == 200)
            #expect(empty.json == .array([]))
            #expect(empty.header("X-Total-Count") == "0")

            let created = try await client.post("/people", #"{"name":"john","numberOfKids":1}"#)
            #expect(created.status == 201)
            #expect(created.json == .parse(#"{"numberOfKids":1,"id":1,"kilometersWalked":null,"name":"john","avatar":null}"#))
            #expect(created.header("Location") == "/people/1")
            #expect(created.header("Content-Type") == "application/json; charset=utf-8")

            let list = try await client.get("/people")
            #expect(list.json == .parse(#"[{"numberOfKids":1,"id":1,"kilometersWalked":null,"name":"john","avatar":null}]"#))

            let renamed = try await client.put("/people/1", #"{"name":"jeff"}"#)
            #expect(renamed.status == 200)
            #expect(renamed.json == .parse(#"{"numberOfKids":1,"id":1,"kilometersWalked":null,"name":"jeff","avatar":null}"#))
            #expect(try await client.get("/people/1").json?["name"] == "jeff")

            let car = try await client.post("/people/1/cars", #"{"name":"beetle","color":"red"}"#)
            #expect(car.status == 201)
            #expect(car.json == .parse(#"{"id":1,"name":"beetle","color":"red","person_id":1}"#))
            #expect(try await client.get("/people/1/cars").json == .parse(#"[{"id":1,"name":"beetle","color":"red","person_id":1}]"#))
            #expect(try await client.get("/cars/1").json?["person_id"] == 1)
            #expect(try await client.get("/cars").json?.arrayValue?.count == 1)
            #expect(try await client.put("/cars/1", #"{"color":"blue"}"#).json?["color"] == "blue")
            #expect(try await client.delete("/cars/1").status == 204)

            let deleted = try await client.delete("/people/1")
            #expect(deleted.status == 204)
            #expect(deleted.bytes.isEmpty)
            #expect(try await client.get("/people/1").status == 404)
            #expect(try await client.get("/people").json == .array([]))
        }
    }

    @Test("PATCH merges like PUT; the key in a body is ignored on update")
    func patchMerges() async throws {
        try await withServer(try Fixture.peopleResources) { _, client in
            _ = try await client.post("/people", #"{"name":"ann","numberOfKids":2}"#)
            let patched = try await client.patch("/people/1", #"{"kilometersWalked":3.5,"id":99}"#)
            #expect(patched.status == 200)
            #expect(patched.json?["id"] == 1)
            #expect(patched.json?["numberOfKids"] == 2)
            #expect(patched.json?["kilometersWalked"] == 3.5)
            #expect(try await client.get("/people/99").status == 404)
        }
    }

    @Test("unknown ids, unknown routes and missing parents answer 404 with a JSON body")
    func notFound() async throws {
        try await withServer(try Fixture.peopleResources) { _, client in
            for reply in [
                try await client.get("/people/7"),
                try await client.put("/people/7", #"{"name":"x"}"#),
                try await client.delete("/people/7"),
                try await client.get("/people/abc"),
                try await client.get("/nothing"),
                try await client.get("/"),
                try await client.get("/people/1/unknown/deeper"),
                try await client.get("/people/7/cars"),
                try await client.post("/people/7/cars", #"{"name":"x"}"#),
            ] {
                #expect(reply.status == 404)
                #expect(reply.json?["error"]?["status"] == 404)
                #expect(reply.json?["error"]?["code"] == "notFound")
            }
        }
    }

    @Test("disallowed actions answer 405 with an Allow header")
    func methodNotAllowed() async throws {
        var people = MockResource("people", properties: [MockProperty("name", .string)])
        people.actions = [.index, .show]
        try await withServer([people]) { _, client in
            let post = try await client.post("/people", #"{"name":"x"}"#)
            #expect(post.status == 405)
            #expect(post.header("Allow") == "GET")
            #expect(post.json?["error"]?["code"] == "methodNotAllowed")
            let delete = try await client.delete("/people/1")
            #expect(delete.status == 405)
            #expect(delete.header("Allow") == "GET")
            #expect(try await client.get("/people").status == 200)
        }
        try await withServer(try Fixture.peopleResources) { _, client in
            let patchCollection = try await client.send(.PATCH, "/people", body: "{}")
            #expect(patchCollection.status == 405)
            #expect(patchCollection.header("Allow") == "GET, POST")
            #expect(try await client.send(.POST, "/people/1", body: "{}").header("Allow") == "GET, PUT, PATCH, DELETE")
        }
    }

    @Test("string primary keys: given, or a UUID when missing")
    func stringKeys() async throws {
        let tags = MockResource("tags", properties: [MockProperty("label", .string)], primaryKey: .string("slug"))
        for kind in ["memory", "sqlite"] {
            try await withServer([tags], options: MockServerOptions(store: try await Fixture.store(kind))) { _, client in
                let given = try await client.post("/tags", #"{"slug":"swift lang","label":"Swift"}"#)
                #expect(given.status == 201)
                #expect(given.header("Location") == "/tags/swift%20lang")
                #expect(try await client.get("/tags/swift%20lang").json?["label"] == "Swift")
                #expect(try await client.post("/tags", #"{"slug":"swift lang","label":"again"}"#).status == 409)
                let generated = try await client.post("/tags", #"{"label":"Other"}"#)
                #expect(generated.json?["slug"]?.stringValue?.count == 36)
                #expect(try await client.delete("/tags/swift%20lang").status == 204)
            }
        }
    }

    @Test("resources are added and removed while the server runs")
    func addRemoveWhileRunning() async throws {
        try await withServer([]) { server, client in
            #expect(try await client.get("/pets").status == 404)
            try await server.addResource(MockResource("pets", properties: [MockProperty("name", .string)]))
            #expect(try await client.post("/pets", #"{"name":"rex"}"#).status == 201)
            #expect(try await client.get("/pets").json?.arrayValue?.count == 1)
            try await server.removeResource(named: "pets")
            #expect(try await client.get("/pets").status == 404)
            #expect(server.resources.isEmpty)
            await #expect(throws: MockServerError.self) { try await server.removeResource(named: "pets") }
        }
    }

    @Test("HEAD answers GET's headers without a body")
    func head() async throws {
        try await withServer(try Fixture.peopleResources) { _, client in
            _ = try await client.post("/people", #"{"name":"ann"}"#)
            let head = try await client.send(.HEAD, "/people/1")
            #expect(head.status == 200)
            #expect(head.bytes.isEmpty)
            #expect(head.header("ETag") != nil)
        }
    }
}
