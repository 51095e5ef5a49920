import ReplicaServer
import Testing

/// Answers `POST /people/:id/promote`, stamps creations and refuses to delete "root".
struct AuditingController: MockController {
    func create(_ request: MockRequest) async throws -> MockResponse {
        var response = try await MockCRUD.create(request)
        response.headers.append((name: "X-Audited", value: "create"))
        return response
    }

    func destroy(_ request: MockRequest) async throws -> MockResponse {
        if let id = request.id, let object = try await request.store.object(request.resource, id: id), object["name"] == "root" {
            throw MockHTTPError(status: 403, code: "forbidden", message: "root stays")
        }
        return try await MockCRUD.destroy(request)
    }

    func custom(_ request: MockRequest) async throws -> MockResponse? {
        guard request.method == "POST", request.segments.count == 3, request.segments[2] == "promote", let id = request.id else { return nil }
        guard let updated = try await request.store.modify(request.resource, id: id, values: ["numberOfKids": 99]) else {
            throw MockHTTPError.notFound("no such person")
        }
        return .json(["promoted": .object(updated)], status: 202)
    }
}

@Suite("MockServer serializers and controllers")
struct MockServerBehaviourTests {
    @Test("a reshaping serializer renames, hides, computes and wraps responses and unwraps requests")
    func reshaping() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            _ = try await client.post("/people", #"{"name":"john","numberOfKids":1}"#)
            var shape = ReshapingSerializer(renames: ["name": "fullName"], hidden: ["avatar"],
                                            objectEnvelope: ["data", "person"], collectionEnvelope: ["data", "people"],
                                            collectionExtras: ["meta": ["version": 2]])
            shape.computed = ["shout": { .string(($0["fullName"]?.stringValue ?? "").uppercased()) }]
            server.setSerializer(shape, for: "people")

            let list = try await client.get("/people")
            #expect(list.json == .parse(#"{"data":{"people":[{"id":1,"fullName":"john","numberOfKids":1,"kilometersWalked":null,"shout":"JOHN"}]},"meta":{"version":2}}"#))
            let one = try await client.get("/people/1")
            #expect(one.json?["data"]?["person"]?["fullName"] == "john")

            let created = try await client.post("/people", #"{"data":{"person":{"fullName":"ann","shout":"ignored"}}}"#)
            #expect(created.status == 201)
            #expect(created.json?["data"]?["person"]?["fullName"] == "ann")
            let updated = try await client.put("/people/2", #"{"fullName":"anna"}"#)
            #expect(updated.json?["data"]?["person"]?["shout"] == "ANNA")

            server.setSerializer(nil, for: "people")
            #expect(try await client.get("/people/2").json?["name"] == "anna")
        }
    }

    @Test("a custom serializer conforming to MockSerializer")
    func customSerializer() async throws {
        struct Counted: MockSerializer {
            func serialize(collection: [JSONObject], of resource: MockResource) -> JSONValue {
                ["count": .int(Int64(collection.count)), resource.name: .array(collection.map(JSONValue.object))]
            }
        }
        try await withServer(try Fixture.peopleResources) { server, client in
            server.setSerializer(Counted(), for: "people")
            _ = try await client.post("/people", #"{"name":"john"}"#)
            #expect(try await client.get("/people").json?["count"] == 1)
            #expect(try await client.get("/people/1").json?["name"] == "john")
        }
    }

    @Test("a custom controller overrides actions and answers routes beyond CRUD")
    func customController() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            server.setController(AuditingController(), for: "people")
            let root = try await client.post("/people", #"{"name":"root"}"#)
            #expect(root.status == 201)
            #expect(root.header("X-Audited") == "create")
            let refused = try await client.delete("/people/1")
            #expect(refused.status == 403)
            #expect(refused.json?["error"]?["message"] == "root stays")
            let promoted = try await client.post("/people/1/promote", "{}")
            #expect(promoted.status == 202)
            #expect(promoted.json?["promoted"]?["numberOfKids"] == 99)
            #expect(try await client.get("/people/1/nothing").status == 404)
            server.setController(nil, for: "people")
            #expect(try await client.delete("/people/1").status == 204)
        }
    }

    @Test("loading data: a MANY-shaped object and an array, with harvesting and counts")
    func loading() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            let data = JSONValue.parse("""
                {"people": [{"id": 5, "name": "ann", "extra": 1}, {"name": "bob"}, {"unknown": true}, 7, {"numberOfKids": "x"}],
                 "cars": [{"name": "mini", "person_id": 5}], "pets": [{"name": "rex"}]}
                """)
            let result = try await server.load(json: data)
            #expect(result.loadedByResource == ["people": 2, "cars": 1])
            #expect(result.rejectedByResource == ["people": 3, "pets": 1])
            #expect(result.unknownResources == ["pets"])
            #expect(result.loaded == 3 && result.rejected == 4)
            #expect(try await client.get("/people/5").json?["name"] == "ann")
            #expect(try await client.get("/people/6").json?["name"] == "bob")
            #expect(try await client.get("/people/5/cars").json?[0]?["name"] == "mini")
            let again = try await server.load(json: .parse(#"[{"id": 5, "numberOfKids": 3}]"#), into: "people")
            #expect(again.loaded == 1)
            #expect(try await client.get("/people/5").json == .parse(#"{"id":5,"name":"ann","numberOfKids":3,"kilometersWalked":null,"avatar":null}"#))
            await #expect(throws: MockServerError.self) { try await server.load(json: .array([])) }
            await #expect(throws: MockServerError.self) { try await server.load(json: .array([]), into: "pets") }
        }
    }
}
