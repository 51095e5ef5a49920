import Foundation
import ReplicaServer
import Testing

@Suite("MockServer server-wide defaults and schema actions")
struct MockServerDefaultsTests {
    /// Answers every index with a fixed body; the rest as CRUD does.
    struct Canned: MockController {
        func index(_ request: MockRequest) async throws -> MockResponse {
            MockResponse(status: 200, body: .object(["canned": .string(request.resource.name)]))
        }
        func show(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.show(request) }
        func create(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.create(request) }
        func update(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.update(request) }
        func destroy(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.destroy(request) }
    }

    @Test("a default serializer and a default controller serve every resource without its own")
    func defaults() async throws {
        var options = MockServerOptions()
        options.defaultSerializer = NamespacedSerializer()
        try await withServer(try Fixture.peopleResources, options: options) { server, client in
            let created = try await client.post("/people", #"{"person": {"name": "john"}}"#)
            #expect(created.status == 201)
            #expect(created.json?["person"]?["name"] == .string("john"))
            #expect(try await client.post("/people", #"{"name": "ann"}"#).json?["person"]?["id"] == .int(2), "a bare body is taken as it is")
            #expect(try await client.get("/people").json?["people"]?.arrayValue?.count == 2)
            #expect(try await client.get("/people/1").json?["person"]?["name"] == .string("john"))
            // A resource's own serializer still wins.
            server.setSerializer(PassThroughSerializer(), for: "cars")
            _ = try await client.post("/people/1/cars", #"{"name": "beetle"}"#)
            #expect(try await client.get("/cars").json?.arrayValue?.count == 1)
        }
        options = MockServerOptions()
        options.defaultController = Canned()
        try await withServer(try Fixture.peopleResources, options: options) { server, client in
            let people = try await client.get("/people")
            let cars = try await client.get("/cars")
            #expect(people.json == .object(["canned": .string("people")]) && cars.json == .object(["canned": .string("cars")]))
            server.setController(CRUDController(), for: "cars")
            let own = try await client.get("/cars")
            #expect(own.json == .array([]))
        }
    }

    @Test("a schema entity's actions are its resource's actions mask; the file format checks and keeps them")
    func schemaActions() async throws {
        let text = """
            {"name": "tags", "version": 1, "entities": {
              "Tag": {"table": "tags", "actions": ["index", "show"], "attributes": {"id": "integer", "label": "string"}},
              "Note": {"attributes": {"id": "integer", "text": "string"}}}}
            """
        let schema = try Schema(json: Data(text.utf8))
        #expect(schema.entity(named: "Tag")?.actions == [.index, .show])
        #expect(schema.entity(named: "Note")?.actions == nil)
        #expect(try Schema(json: Data(schema.fileJSON.serializedBytes())).entity(named: "Tag")?.actions == [.index, .show])
        try await withServer(MockResource.resources(for: schema)) { server, client in
            _ = try await server.load(json: try JSONValue(parsing: #"{"tags": [{"label": "swift"}]}"#))
            #expect(try await client.get("/tags/1").status == 200)
            let refused = try await client.post("/tags", #"{"label": "rust"}"#)
            #expect(refused.status == 405 && refused.header("Allow") == "GET")
            #expect(try await client.post("/notes", #"{"text": "hi"}"#).status == 201)
        }
        let wrong = #"{"name": "x", "entities": {"Tag": {"actions": ["index", "list"], "attributes": {"id": "integer"}}}}"#
        #expect {
            try Schema(json: Data(wrong.utf8))
        } throws: { error in
            "\(error)".contains("/entities/Tag/actions/1") && "\(error)".contains("unknown action \"list\"")
        }
    }
}
