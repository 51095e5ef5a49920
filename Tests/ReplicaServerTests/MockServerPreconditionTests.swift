import Foundation
import NIOHTTP1
import ReplicaServer
import ReplicaTestSupport
import Testing

@Suite("MockServer ETag and If-Match")
struct MockServerPreconditionTests {
    static let stores = ["memory", "sqlite"]

    @Test("every object has a strong ETag: GET answers it, a create or update answers the new one, which GET then answers",
          arguments: stores)
    func tags(kind: String) async throws {
        let options = MockServerOptions(store: try await Fixture.store(kind))
        try await withServer(try Fixture.peopleResources, options: options) { _, client in
            let created = try await client.post("/people", #"{"name":"ann","numberOfKids":1}"#)
            let createdTag = try #require(created.header("ETag"))
            #expect(createdTag.hasPrefix("\"") && createdTag.hasSuffix("\"") && createdTag.count > 2)
            #expect(try await client.get("/people/1").header("ETag") == createdTag)
            let updated = try await client.put("/people/1", #"{"name":"bob"}"#)
            let updatedTag = try #require(updated.header("ETag"))
            #expect(updatedTag != createdTag)
            #expect(try await client.get("/people/1").header("ETag") == updatedTag)
            let patched = try await client.patch("/people/1", #"{"numberOfKids":2}"#)
            let patchedTag = try #require(patched.header("ETag"))
            #expect(patchedTag != updatedTag)
            #expect(try await client.get("/people/1").header("ETag") == patchedTag)
            // Conditional GETs as before.
            #expect(try await client.get("/people/1", headers: [("If-None-Match", patchedTag)]).status == 304)
            #expect(try await client.get("/people/1", headers: [("If-None-Match", updatedTag)]).status == 200)
        }
    }

    @Test("a resource that numbers versions: created at 1, each update one more whatever the body says, the version its ETag",
          arguments: stores)
    func versions(kind: String) async throws {
        let options = MockServerOptions(store: try await Fixture.store(kind))
        var people = MockResource("people", properties: [MockProperty("name", .string), MockProperty("version", .integer)])
        people.versionProperty = "version"
        try await withServer([people], options: options) { _, client in
            let created = try await client.post("/people", #"{"name":"ann","version":7}"#)
            #expect(created.json?["version"] == 1)
            #expect(created.header("ETag") == "\"1\"")
            let shown = try await client.get("/people/1")
            #expect(shown.header("ETag") == "\"1\"")
            #expect(try await client.get("/people/1", headers: [("If-None-Match", "\"1\"")]).status == 304)
            let patched = try await client.send(.PATCH, "/people/1", body: #"{"name":"bob","version":9}"#, headers: [("If-Match", "\"1\"")])
            #expect(patched.status == 200)
            #expect(patched.json?["version"] == 2)
            #expect(patched.header("ETag") == "\"2\"")
            let stale = try await client.send(.PUT, "/people/1", body: #"{"name":"eve"}"#, headers: [("If-Match", "\"1\"")])
            #expect(stale.status == 412)
            #expect(try await client.get("/people/1").json?["name"] == "bob")
            #expect(try await client.send(.DELETE, "/people/1", headers: [("If-Match", "\"2\"")]).status == 204)
        }
    }

    @Test("PUT, PATCH and DELETE with a stale If-Match answer 412 and change nothing; the current tag and * go through",
          arguments: stores)
    func ifMatch(kind: String) async throws {
        let options = MockServerOptions(store: try await Fixture.store(kind))
        try await withServer(try Fixture.peopleResources, options: options) { server, client in
            let stale = try #require(try await client.post("/people", #"{"name":"ann"}"#).header("ETag"))
            let current = try #require(try await client.put("/people/1", #"{"name":"bob"}"#).header("ETag"))
            let changes = server.changes.sequence
            for method in [.PUT, .PATCH] as [NIOHTTP1.HTTPMethod] {
                let refused = try await client.send(method, "/people/1", body: #"{"name":"eve"}"#, headers: [("If-Match", stale)])
                #expect(refused.status == 412)
                #expect(refused.json?["error"]?["code"] == "preconditionFailed")
            }
            let refusedDelete = try await client.send(.DELETE, "/people/1", headers: [("If-Match", stale)])
            #expect(refusedDelete.status == 412)
            // A weak tag never matches (If-Match compares strongly).
            #expect(try await client.send(.DELETE, "/people/1", headers: [("If-Match", "W/" + current)]).status == 412)
            let unchanged = try await client.get("/people/1")
            #expect(unchanged.json?["name"] == "bob")
            #expect(unchanged.header("ETag") == current)
            #expect(server.changes.sequence == changes)

            let matched = try await client.send(.PATCH, "/people/1", body: #"{"name":"cy"}"#,
                                                headers: [("If-Match", "\"other\", " + current)])
            #expect(matched.status == 200)
            #expect(matched.json?["name"] == "cy")
            let star = try await client.send(.PUT, "/people/1", body: #"{"name":"dee"}"#, headers: [("If-Match", "*")])
            #expect(star.status == 200)
            let latest = try #require(star.header("ETag"))
            #expect(try await client.send(.DELETE, "/people/1", headers: [("If-Match", current)]).status == 412)
            #expect(try await client.send(.DELETE, "/people/1", headers: [("If-Match", latest)]).status == 204)
            // A missing object matches nothing, * included (RFC 9110).
            #expect(try await client.send(.PUT, "/people/1", body: #"{"name":"eve"}"#, headers: [("If-Match", "*")]).status == 412)
            #expect(try await client.send(.DELETE, "/people/1", headers: [("If-Match", "*")]).status == 412)
            #expect(try await client.send(.DELETE, "/people/1").status == 404)
        }
    }

    @Test("two writes naming the same ETag at once: one goes through, the other gets 412")
    func concurrentIfMatch() async throws {
        let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseContinuation) = AsyncStream.makeStream(of: Void.self)
        try await withServer(try Fixture.peopleResources) { server, client in
            let tag = try #require(try await client.post("/people", #"{"name":"ann"}"#).header("ETag"))
            server.setController(GatedController(.update, entered: enteredContinuation, release: release), for: "people")
            let first = Task {
                try await client.send(.PATCH, "/people/1", body: #"{"name":"bob"}"#, headers: [("If-Match", tag)])
            }
            var waiting = entered.makeAsyncIterator()
            _ = await waiting.next()
            let second = Task {
                try await client.send(.PATCH, "/people/1", body: #"{"name":"cy"}"#, headers: [("If-Match", tag)])
            }
            // Time for the second to reach the server: it must wait for the first, not pass the check beside it.
            try await Task.sleep(for: .milliseconds(300))
            releaseContinuation.yield()
            releaseContinuation.yield()
            let statuses = [try await first.value.status, try await second.value.status]
            #expect(statuses == [200, 412])
            #expect(try await client.get("/people/1").json?["name"] == "bob")
        }
    }

    @Test("an SQLite store's objects keep their ETags across a restart on a store opened again")
    func sqliteRestart() async throws {
        let path = try Fixture.storeFolder.get().path("etag-\(UUID().uuidString).sqlite")
        let resources = try Fixture.peopleResources
        var tag = ""
        try await withServer(resources, options: MockServerOptions(store: try SQLiteMockStore(path: path))) { _, client in
            tag = try #require(try await client.post("/people", #"{"name":"ann"}"#).header("ETag"))
        }
        try await withServer(resources, options: MockServerOptions(store: try SQLiteMockStore(path: path))) { _, client in
            let reopened = try await client.get("/people/1")
            #expect(reopened.header("ETag") == tag)
            let matched = try await client.send(.PATCH, "/people/1", body: #"{"name":"bob"}"#, headers: [("If-Match", tag)])
            #expect(matched.status == 200)
            let stale = try await client.send(.PATCH, "/people/1", body: #"{"name":"cy"}"#, headers: [("If-Match", tag)])
            #expect(stale.status == 412)
        }
    }
}
