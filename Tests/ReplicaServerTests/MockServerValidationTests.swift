import NIOHTTP1
import ReplicaServer
import Testing

@Suite("MockServer validation and hostile input")
struct MockServerValidationTests {
    @Test("wrong types get 422 with field errors in RESTEasy's shape")
    func wrongTypes() async throws {
        try await withServer(try Fixture.peopleResources) { _, client in
            let reply = try await client.post("/people", #"{"name":"john","numberOfKids":"one"}"#)
            #expect(reply.status == 422)
            #expect(reply.json == .parse(#"{"errors": {"numberOfKids": ["must be an integer"]}}"#))
            let many = try await client.post("/people", #"{"name":5,"kilometersWalked":"far","avatar":"%%%"}"#)
            #expect(many.json == .parse(#"{"errors": {"name": ["must be a string"], "kilometersWalked": ["must be a number"], "avatar": ["must be a base64 string"]}}"#))
            _ = try await client.post("/people", #"{"name":"ann"}"#)
            let update = try await client.put("/people/1", #"{"numberOfKids":1.5}"#)
            #expect(update.status == 422)
            #expect(update.json == .parse(#"{"errors": {"numberOfKids": ["must be an integer"]}}"#))
            #expect(try await client.get("/people").json?.arrayValue?.count == 1)
        }
    }

    @Test("unknown keys are dropped; bodies with no known property get 422")
    func harvesting() async throws {
        try await withServer(try Fixture.peopleResources) { _, client in
            let kept = try await client.post("/people", #"{"name":"john","shoeSize":44,"nested":{"a":1}}"#)
            #expect(kept.status == 201)
            #expect(kept.json?["shoeSize"] == nil)
            #expect(kept.json?.objectValue?.count == 5)
            let unknownOnly = try await client.post("/people", #"{"shoeSize":44}"#)
            #expect(unknownOnly.status == 422)
            #expect(unknownOnly.json == .parse(#"{"errors": {"shoeSize": ["is not a property of people"]}}"#))
            let empty = try await client.post("/people", "{}")
            #expect(empty.status == 422)
            #expect(empty.json?["errors"]?["base"] != nil)
            let array = try await client.post("/people", "[1,2]")
            #expect(array.status == 422)
        }
    }

    @Test("a POST, PUT or PATCH without a body is 400 emptyBody, not a 422 about its properties")
    func emptyBody() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            _ = try await server.load(json: .parse(#"[{"name": "ann"}]"#), into: "people")
            let expected = JSONValue.parse(#"{"error": {"status": 400, "code": "emptyBody", "message": "empty body"}}"#)
            for (method, path) in [(NIOHTTP1.HTTPMethod.POST, "/people"), (.PUT, "/people/1"), (.PATCH, "/people/1"), (.POST, "/people/1/cars")] {
                let reply = try await client.send(method, path)
                #expect(reply.status == 400, "\(method) \(path)")
                #expect(reply.json == expected, "\(method) \(path): \(reply.text)")
            }
            // No content type and no bytes, or a form content type and no bytes: the same.
            let form = try await client.send(.POST, "/people", bytes: [], headers: [("Content-Type", "application/x-www-form-urlencoded")])
            #expect(form.status == 400)
            #expect(form.json == expected)
            // An empty object is a body: it still names what is missing.
            #expect(try await client.post("/people", "{}").json == .parse(#"{"errors": {"base": ["has no property of people"]}}"#))
            #expect(try await client.get("/people/1").json?["name"] == "ann")
        }
    }

    @Test("types: bool, date, blob, json and integral doubles")
    func types() async throws {
        let things = MockResource("things", properties: [
            MockProperty("flag", .bool), MockProperty("when", .date), MockProperty("bytes", .blob),
            MockProperty("extra", .json), MockProperty("count", .integer), MockProperty("ratio", .double),
        ])
        for kind in ["memory", "sqlite"] {
            try await withServer([things], options: MockServerOptions(store: try await Fixture.store(kind))) { _, client in
                let body = #"{"flag":true,"when":"2024-05-01T10:00:00Z","bytes":"aGVsbG8=","extra":{"a":[1,2]},"count":2.0,"ratio":0.5}"#
                let created = try await client.post("/things", body)
                #expect(created.status == 201)
                let fetched = try await client.get("/things/1").json
                #expect(fetched == .parse(#"{"id":1,"flag":true,"when":"2024-05-01T10:00:00Z","bytes":"aGVsbG8=","extra":{"a":[1,2]},"count":2,"ratio":0.5}"#))
                #expect(try await client.post("/things", #"{"when":"yesterday"}"#).json == .parse(#"{"errors":{"when":["must be an ISO 8601 date"]}}"#))
                #expect(try await client.post("/things", #"{"flag":"yes"}"#).json == .parse(#"{"errors":{"flag":["must be a boolean"]}}"#))
                #expect(try await client.get("/things?flag=true").json?.arrayValue?.count == 1)
                #expect(try await client.get("/things?flag=false").json?.arrayValue?.count == 0)
                // Integers past Int64: every digit kept in a json property, rounded in a double one, refused by an integer one.
                let big = try await client.post("/things", #"{"extra":{"n":12345678901234567890},"ratio":12345678901234567890}"#)
                #expect(big.status == 201)
                #expect(big.text.contains(#""extra":{"n":12345678901234567890}"#), "\(big.text)")
                #expect(big.text.contains(#""ratio":1.2345678901234567e+19"#), "\(big.text)")
                #expect(try await client.post("/things", #"{"count":12345678901234567890}"#).json
                    == .parse(#"{"errors":{"count":["must be an integer"]}}"#))
            }
        }
    }

    @Test("malformed JSON gets 400 with a JSON body")
    func malformedJSON() async throws {
        try await withServer(try Fixture.peopleResources) { _, client in
            for body in [#"{"name":"john""#, "{name: 1}", "[1,]", "\u{7}", #"{"a":"\u{1}"}"#] {
                let reply = try await client.post("/people", body)
                #expect(reply.status == 400)
                #expect(reply.json?["error"]?["code"] == "invalidJSON")
            }
            #expect(try await client.put("/people/1", "nope").status == 400)
        }
    }

    @Test("an over-large body gets 413 and the server keeps serving")
    func hugeBody() async throws {
        try await withServer(try Fixture.peopleResources, options: MockServerOptions(maxBodySize: 1024)) { _, client in
            let big = #"{"name":""# + String(repeating: "x", count: 200_000) + #""}"#
            let reply = try await client.post("/people", big)
            #expect(reply.status == 413)
            #expect(reply.json?["error"]?["code"] == "bodyTooLarge")
            #expect(try await client.post("/people", #"{"name":"small"}"#).status == 201)
            #expect(try await client.get("/people").json?.arrayValue?.count == 1)
        }
    }

    @Test("path traversal in ids is just an unknown id")
    func pathTraversal() async throws {
        let files = MockResource("files", properties: [MockProperty("name", .string)], primaryKey: .string())
        try await withServer(try Fixture.peopleResources + [files]) { _, client in
            for path in ["/people/..%2F..%2Fetc", "/people/..%2F..%2Fetc%2Fpasswd", "/people/%2e%2e", "/files/..%2F..%2Fetc%2Fpasswd",
                         "/files/%00", "/people/1%20OR%201=1"] {
                let reply = try await client.get(path)
                #expect(reply.status == 404, "\(path)")
                #expect(reply.json?["error"] != nil)
            }
            #expect([400, 404].contains(try await client.get("/people/%zz").status))
            let created = try await client.post("/files", #"{"id":"../../etc/passwd","name":"x"}"#)
            #expect(created.status == 201)
            #expect(try await client.get("/files/..%2F..%2Fetc%2Fpasswd").json?["name"] == "x")
        }
    }

    @Test("SQL in values, names and filters is stored and matched verbatim", arguments: ["memory", "sqlite", "postgres"])
    func sqlInValues(kind: String) async throws {
        let odd = MockResource("odd\"table; DROP TABLE x", properties: [MockProperty("we\"ird", .string)])
        let resources = try Fixture.peopleResources + [odd]
        try await withServer(resources, options: MockServerOptions(store: try await Fixture.store(kind))) { _, client in
            let evil = #"'); DROP TABLE people; --"#
            let created = try await client.post("/people", #"{"name":"\#(evil)"}"#)
            #expect(created.json?["name"] == .string(evil))
            #expect(try await client.get("/people/1").json?["name"] == .string(evil))
            #expect(try await client.get("/people?name=%27%29%3B%20DROP%20TABLE%20people%3B%20--").json?.arrayValue?.count == 1)
            #expect(try await client.get("/people?name=x%27%20OR%20%271%27%3D%271").json?.arrayValue?.count == 0)
            let path = "/odd%22table%3B%20DROP%20TABLE%20x"
            #expect(try await client.post(path, #"{"we\"ird":"1 OR 1=1"}"#).status == 201)
            #expect(try await client.get(path + "/1").json?["we\"ird"] == "1 OR 1=1")
            #expect(try await client.get("/people").json?.arrayValue?.count == 1)
        }
    }
}
