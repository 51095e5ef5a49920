import Foundation
import ReplicaServer
import ReplicaTestSupport
import Testing

@Suite("MockServer stores")
struct MockServerStoreTests {
    @Test("the MockStore protocol: count, get, all, children, create, modify, delete", arguments: ["memory", "sqlite", "postgres"])
    func protocolOperations(kind: String) async throws {
        let store = try await Fixture.store(kind)
        let resources = try Fixture.peopleResources
        let (people, cars) = (resources[0], resources[1])
        try await store.addResource(people)
        try await store.addResource(cars)
        let john = try await store.create(people, values: ["name": "john"])
        #expect(john == JSONObject([("id", 1), ("name", "john"), ("numberOfKids", nil), ("kilometersWalked", nil), ("avatar", nil)]))
        _ = try await store.create(people, values: ["name": "ann", "numberOfKids": 2])
        _ = try await store.create(cars, values: ["name": "beetle", "person_id": 1])
        _ = try await store.create(cars, values: ["name": "mini", "person_id": 2])
        #expect(try await store.count(people, query: MockQuery()) == 2)
        #expect(try await store.object(people, id: 2)?["numberOfKids"] == 2)
        #expect(try await store.object(people, id: 3) == nil)
        #expect(try await store.objects(people, query: MockQuery(limit: 1, offset: 1)) == MockPage(
            objects: [JSONObject([("id", 2), ("name", "ann"), ("numberOfKids", 2), ("kilometersWalked", nil), ("avatar", nil)])], total: 2))
        let johns = try await store.children(cars, of: MockParent("people", key: "person_id"), id: 1, query: MockQuery())
        #expect(johns.objects.map { $0["name"] } == ["beetle"])
        #expect(try await store.modify(people, id: 1, values: ["name": "jeff"])?["name"] == "jeff")
        #expect(try await store.modify(people, id: 9, values: ["name": "x"]) == nil)
        #expect(try await store.delete(people, id: 1))
        #expect(try await store.delete(people, id: 1) == false)
        #expect(try await store.upsert(people, objects: [["id": 2, "name": "anna"], ["name": "new"]]) == 2)
        #expect(try await store.object(people, id: 2)?["name"] == "anna")
        #expect(try await store.object(people, id: 2)?["numberOfKids"] == 2)
        #expect(try await store.count(people, query: MockQuery()) == 2)
        try await store.dropResource(cars)
        try await store.addResource(cars)
        #expect(try await store.count(cars, query: MockQuery()) == 0)
    }

    @Test("text with NUL and control bytes is stored and served whole", arguments: ["memory", "sqlite"])
    func nulInText(kind: String) async throws {
        let store = try await Fixture.store(kind)
        let people = try Fixture.peopleResources[0]
        try await store.addResource(people)
        let name = "a\u{0}b\u{1}c\u{0}"
        let created = try await store.create(people, values: ["name": .string(name)])
        #expect(created["name"] == .string(name))
        #expect(try await store.object(people, id: 1)?["name"] == .string(name))
        #expect(try await store.objects(people, query: MockQuery()).objects.first?["name"] == .string(name))
        #expect(try await store.modify(people, id: 1, values: ["name": .string(name + "d")])?["name"] == .string(name + "d"))
    }

    @Test("PostgreSQL refuses text with a NUL byte with a 422 naming the property, and stores control bytes whole")
    func nulInPostgres() async throws {
        let store = try await Fixture.store("postgres")
        let people = try Fixture.peopleResources[0]
        try await store.addResource(people)
        await #expect { try await store.create(people, values: ["name": .string("a\u{0}b")]) } throws: { error in
            let refused = try #require(error as? MockHTTPError)
            return refused.status == 422 && refused.message == "people.name: PostgreSQL text cannot hold a NUL byte"
        }
        #expect(try await store.count(people, query: MockQuery()) == 0)
        let created = try await store.create(people, values: ["name": .string("a\u{1}b\u{7F}")])
        #expect(try await store.object(people, id: created["id"] ?? .null)?["name"] == .string("a\u{1}b\u{7F}"))
    }

    @Test("integers beyond Int64 keep every digit in json properties", arguments: ["memory", "sqlite", "postgres"])
    func bigIntegers(kind: String) async throws {
        let store = try await Fixture.store(kind)
        let things = MockResource("things", properties: [MockProperty("j", .json)])
        try await store.addResource(things)
        let big = JSONValue.bigInteger("12345678901234567890")
        let created = try await store.create(things, values: ["j": ["n": big, "m": [.bigInteger("-99999999999999999999")]]])
        #expect(created["j"] == ["n": big, "m": [.bigInteger("-99999999999999999999")]])
        let served = try #require(try await store.object(things, id: 1))
        #expect(JSONValue.object(served).serialized() == #"{"id":1,"j":{"n":12345678901234567890,"m":[-99999999999999999999]}}"#)
    }

    @Test("the SQLite store keeps its data across a restart of the same server and a new server")
    func sqliteRestart() async throws {
        let directory = try TemporaryDirectory("replica-server")
        defer { directory.remove() }
        let path = directory.path("people.sqlite")
        let resources = try Fixture.peopleResources
        let server = try await Fixture.startOnQuietPort(resources: resources, store: try SQLiteMockStore(path: path))
        let client = Client(server)
        // `Connection: close`: no pooled connection outlives the stop, for a request after the restart to
        // be sent on and find closed ("I/O on closed channel").
        let close = [("Connection", "close")]
        #expect(try await client.send(.POST, "/people", body: #"{"name":"john","avatar":"AAEC"}"#, headers: close).status == 201)
        #expect(try await client.send(.POST, "/people/1/cars", body: #"{"name":"beetle"}"#, headers: close).status == 201)
        let port = server.port
        await server.stop()
        #expect(!server.isRunning)
        await #expect(throws: (any Error).self) { try await client.get("/people") }

        try await server.start()
        #expect(server.port == port)
        #expect(try await client.get("/people/1").json?["avatar"] == "AAEC")
        await server.stop()

        let again = try await MockServer.start(resources: resources, options: MockServerOptions(store: try SQLiteMockStore(path: path)))
        let fresh = Client(again)
        #expect(try await fresh.get("/people").json?.arrayValue?.count == 1)
        #expect(try await fresh.get("/people/1/cars").json?[0]?["name"] == "beetle")
        let next = try await fresh.post("/people", #"{"name":"ann"}"#)
        #expect(next.json?["id"] == 2)
        await again.stop()
    }

    @Test("the memory store starts empty on a new server; a stopped server restarts with its data")
    func memoryRestart() async throws {
        let server = try await Fixture.startOnQuietPort(resources: try Fixture.peopleResources, store: MemoryMockStore())
        // `Connection: close`: no pooled connection outlives the stop (see sqliteRestart).
        #expect(try await Client(server).send(.POST, "/people", body: #"{"name":"john"}"#, headers: [("Connection", "close")]).status == 201)
        await server.stop()
        await server.stop()
        try await server.start()
        #expect(try await Client(server).get("/people").json?.arrayValue?.count == 1)
        await #expect(throws: MockServerError.self) { try await server.start() }
        await server.stop()
    }

    @Test("a port in use fails with bindFailed")
    func bindFailure() async throws {
        try await withServer([]) { server, _ in
            await #expect(throws: MockServerError.self) {
                _ = try await MockServer.start(resources: [], options: MockServerOptions(port: server.port))
            }
        }
    }

    @Test("concurrent clients against the SQLite store lose no writes")
    func concurrentWrites() async throws {
        let store = try await Fixture.store("sqlite")
        try await withServer(try Fixture.peopleResources, options: MockServerOptions(store: store)) { _, client in
            let clients = 40
            let deleted = try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<clients {
                    group.addTask {
                        var deletes = 0
                        for n in 0..<10 {
                            let created = try await client.post("/people", #"{"name":"w\#(worker)-\#(n)","numberOfKids":\#(n)}"#)
                            guard created.status == 201, let id = created.json?["id"]?.int64Value else { throw MockServerError(code: .storeFailed, message: created.text) }
                            if n % 3 == 0 {
                                guard try await client.delete("/people/\(id)").status == 204 else { throw MockServerError(code: .storeFailed, message: "delete") }
                                deletes += 1
                            } else {
                                guard try await client.get("/people/\(id)").status == 200,
                                      try await client.put("/people/\(id)", #"{"kilometersWalked":1.5}"#).status == 200 else {
                                    throw MockServerError(code: .storeFailed, message: "read/update")
                                }
                            }
                        }
                        return deletes
                    }
                }
                return try await group.reduce(0, +)
            }
            let list = try await client.get("/people?_limit=1&_page=1")
            #expect(list.header("X-Total-Count") == String(clients * 10 - deleted))
        }
    }
}
