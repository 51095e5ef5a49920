import Foundation
import ReplicaServer
import Testing

@Suite("MockServer consistency: form-typed JSON bodies, Last-Modified within one second, ordering by primary key")
struct MockServerConsistencyTests {
    @Test("curl -d '{...}' sends JSON as a form: read as JSON; real form bodies stay forms")
    func formTypedJSON() async throws {
        try await withServer(try Fixture.peopleResources) { _, client in
            let form = [("Content-Type", "application/x-www-form-urlencoded")]
            let created = try await client.send(.POST, "/people", bytes: Array(#"{"name":"john","numberOfKids":2}"#.utf8), headers: form)
            #expect(created.status == 201, "\(created.text)")
            #expect(created.json?["name"] == "john")
            #expect(created.json?["numberOfKids"] == 2)
            let spaced = try await client.send(.PUT, "/people/1", bytes: Array(" \r\n {\"name\":\"jeff\"}".utf8), headers: form)
            #expect(spaced.status == 200, "\(spaced.text)")
            #expect(spaced.json?["name"] == "jeff")
            let untyped = try await client.send(.POST, "/people", bytes: Array(#"{"name":"ann"}"#.utf8))
            #expect(untyped.status == 201, "\(untyped.text)")
            #expect(untyped.json?["name"] == "ann")
            let real = try await client.send(.POST, "/people", bytes: Array("name=bob&numberOfKids=3".utf8), headers: form)
            #expect(real.status == 201, "\(real.text)")
            #expect(real.json?["name"] == "bob")
            #expect(real.json?["numberOfKids"] == 3)
        }
    }

    @Test("GET, PUT in the same second, GET with If-Modified-Since = that Last-Modified: 200 with the new data")
    func lastModifiedWithinOneSecond() async throws {
        try await withServer(try Fixture.peopleResources) { _, client in
            _ = try await client.post("/people", #"{"name":"john"}"#)
            var sameSecond = 0
            // Under load a round trip can outlast the rest of a second: up to 20 tries to share one.
            for attempt in 0..<20 {
                // Start early in a wall-clock second, so that the read and the write below share it.
                var waits = 0
                while Date().timeIntervalSince1970.truncatingRemainder(dividingBy: 1) > 0.2, waits < 200 {
                    waits += 1
                    try await Task.sleep(for: .milliseconds(10))
                }
                for path in ["/people/1", "/people"] {
                    let first = try await client.get(path)
                    let modified = try #require(first.header("Last-Modified"))
                    let name = "jeff \(attempt) \(path.count)"
                    #expect(try await client.put("/people/1", #"{"name":"\#(name)"}"#).status == 200)
                    let again = try await client.get(path, headers: [("If-Modified-Since", modified)])
                    #expect(again.status == 200, "If-Modified-Since: \(modified) after a write in that second")
                    #expect(again.text.contains(name))
                    if again.header("Last-Modified") == modified { sameSecond += 1 }
                }
                if sameSecond >= 2 { break }
            }
            #expect(sameSecond >= 1, "the read and the write never shared a second")
        }
    }

    @Test("If-Modified-Since still answers 304 when nothing was written after the read", arguments: ["memory", "sqlite", "postgres"])
    func notModifiedStillWorks(store: String) async throws {
        try await withServer(try Fixture.peopleResources, options: MockServerOptions(store: try await Fixture.store(store))) { _, client in
            _ = try await client.post("/people", #"{"name":"john"}"#)
            let first = try await client.get("/people")
            let modified = try #require(first.header("Last-Modified"))
            #expect(try await client.get("/people", headers: [("If-Modified-Since", modified)]).status == 304)
        }
    }

    static func ids(_ client: Client, _ path: String) async throws -> [Int64] {
        guard case .array(let objects)? = try await client.get(path).json else { return [] }
        return objects.compactMap { object -> Int64? in
            if case .int(let id)? = object["id"] { return id }
            return nil
        }
    }

    @Test("objects come back by primary key, unsorted and on sort ties", arguments: ["memory", "sqlite", "postgres"])
    func primaryKeyOrder(store: String) async throws {
        let options = MockServerOptions(store: try await Fixture.store(store))
        try await withServer(try Fixture.peopleResources, options: options) { (_: MockServer, client: Client) async throws in
            for (id, name) in [(3, "bea"), (1, "bea"), (2, "al"), (5, "al"), (4, "bea")] {
                #expect(try await client.post("/people", #"{"id":\#(id),"name":"\#(name)"}"#).status == 201)
            }
            #expect(try await Self.ids(client, "/people") == [1, 2, 3, 4, 5])
            #expect(try await Self.ids(client, "/people?_page=2&_limit=2") == [3, 4])
            #expect(try await Self.ids(client, "/people?_sort=name") == [2, 5, 1, 3, 4])
            #expect(try await Self.ids(client, "/people?_sort=-name") == [1, 3, 4, 2, 5])
            #expect(try await Self.ids(client, "/people?name=bea") == [1, 3, 4])
            #expect(try await client.delete("/people/3").status == 204)
            #expect(try await Self.ids(client, "/people") == [1, 2, 4, 5])
        }
    }

    @Test("string primary keys: inserted c, a, b come back a, b, c, and sort ties by key", arguments: ["memory", "sqlite", "postgres"])
    func stringKeyOrder(store: String) async throws {
        let tags = MockResource("tags", properties: [MockProperty("label", .string)], primaryKey: .string("slug"))
        let options = MockServerOptions(store: try await Fixture.store(store))
        try await withServer([tags], options: options) { (_: MockServer, client: Client) async throws in
            for (slug, label) in [("c", "x"), ("a", "x"), ("b", "w")] {
                #expect(try await client.post("/tags", #"{"slug":"\#(slug)","label":"\#(label)"}"#).status == 201)
            }
            #expect(try await Self.slugs(client, "/tags") == ["a", "b", "c"])
            #expect(try await Self.slugs(client, "/tags?_sort=label") == ["b", "a", "c"])
            #expect(try await Self.slugs(client, "/tags?_sort=label&_order=desc") == ["a", "c", "b"])
        }
    }

    static func slugs(_ client: Client, _ path: String) async throws -> [String] {
        guard case .array(let objects)? = try await client.get(path).json else { return [] }
        return objects.compactMap { $0["slug"]?.stringValue }
    }
}
