import ReplicaServer
import Testing

@Suite("MockServer collections: filters, sorting, pagination")
struct MockServerCollectionTests {
    static let cars = MockResource("cars", properties: [MockProperty("name", .string), MockProperty("color", .string),
                                                        MockProperty("year", .integer)])

    /// 25 cars: car01…car25, red when odd, year 2000 + n % 5.
    static func seed(_ server: MockServer) async throws {
        var items: [JSONValue] = []
        for n in 1...25 {
            let name = n < 10 ? "car0\(n)" : "car\(n)"
            items.append(.object(["name": .string(name), "color": n % 2 == 1 ? "red" : "blue", "year": .int(Int64(2000 + n % 5))]))
        }
        let result = try await server.load(json: .array(items), into: "cars")
        #expect(result.loaded == 25)
    }

    @Test("filters by property, typed", arguments: ["memory", "sqlite", "postgres"])
    func filters(kind: String) async throws {
        try await withServer([Self.cars], options: MockServerOptions(store: try await Fixture.store(kind))) { server, client in
            try await Self.seed(server)
            let red = try await client.get("/cars?color=red")
            #expect(red.json?.arrayValue?.count == 13)
            #expect(red.header("X-Total-Count") == "13")
            #expect(try await client.get("/cars?color=red&year=2001").json?.arrayValue?.count == 3)
            #expect(try await client.get("/cars?color=green").json == .array([]))
            #expect(try await client.get("/cars?unknown=1").json?.arrayValue?.count == 25)
            let bad = try await client.get("/cars?year=old")
            #expect(bad.status == 400)
            #expect(bad.json?["error"]?["code"] == "invalidFilter")
        }
    }

    @Test("sorts with _sort and _order", arguments: ["memory", "sqlite", "postgres"])
    func sorting(kind: String) async throws {
        try await withServer([Self.cars], options: MockServerOptions(store: try await Fixture.store(kind))) { server, client in
            try await Self.seed(server)
            let desc = try await client.get("/cars?_sort=name&_order=desc&_limit=3")
            #expect(desc.json?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["car25", "car24", "car23"])
            let multi = try await client.get("/cars?_sort=year,name&_order=desc,asc&limit=2")
            #expect(multi.json?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["car04", "car09"])
            let minus = try await client.get("/cars?_sort=-year,name&limit=1")
            #expect(minus.json?[0]?["name"] == "car04")
            #expect(try await client.get("/cars?_sort=nope").status == 400)
            #expect(try await client.get("/cars?_sort=name&_order=sideways").status == 400)
        }
    }

    @Test("_page/_limit pages with Link and X-Total-Count", arguments: ["memory", "sqlite", "postgres"])
    func pages(kind: String) async throws {
        try await withServer([Self.cars], options: MockServerOptions(store: try await Fixture.store(kind))) { server, client in
            try await Self.seed(server)
            let page2 = try await client.get("/cars?_page=2&_limit=10")
            #expect(page2.status == 200)
            #expect(page2.header("X-Total-Count") == "25")
            #expect(page2.json?.arrayValue?.first?["name"] == "car11")
            #expect(page2.json?.arrayValue?.count == 10)
            let base = server.baseURL
            #expect(page2.header("Link") == """
                <\(base)/cars?_page=1&_limit=10>; rel="first", <\(base)/cars?_page=1&_limit=10>; rel="prev", \
                <\(base)/cars?_page=3&_limit=10>; rel="next", <\(base)/cars?_page=3&_limit=10>; rel="last"
                """)
            let last = try await client.get("/cars?_page=3&_limit=10")
            #expect(last.json?.arrayValue?.count == 5)
            #expect(last.header("Link")?.contains("rel=\"next\"") == false)
            let first = try await client.get("/cars?color=red&_page=1&_limit=5")
            #expect(first.header("Link")?.contains("rel=\"prev\"") == false)
            #expect(first.header("Link")?.contains("<\(base)/cars?color=red&_page=3&_limit=5>; rel=\"last\"") == true)
            #expect(try await client.get("/cars?_page=9&_limit=10").json == .array([]))
            #expect(try await client.get("/cars?_page=0").status == 400)
            #expect(try await client.get("/cars?_page=1&_limit=-1").status == 400)
        }
    }

    @Test("limit/offset pages with Link headers")
    func offsets() async throws {
        try await withServer([Self.cars]) { server, client in
            try await Self.seed(server)
            let reply = try await client.get("/cars?limit=10&offset=10")
            #expect(reply.json?.arrayValue?.first?["name"] == "car11")
            #expect(reply.header("X-Total-Count") == "25")
            let base = server.baseURL
            #expect(reply.header("Link") == """
                <\(base)/cars?limit=10&offset=0>; rel="first", <\(base)/cars?limit=10&offset=0>; rel="prev", \
                <\(base)/cars?limit=10&offset=20>; rel="next", <\(base)/cars?limit=10&offset=20>; rel="last"
                """)
            #expect(try await client.get("/cars?offset=20").json?.arrayValue?.count == 5)
            #expect(try await client.get("/cars?offset=-1").status == 400)
        }
    }

    @Test("a bad _page, _limit, limit or offset is 400 naming the parameter, its range and the value")
    func badPaging() async throws {
        try await withServer([Self.cars]) { server, client in
            try await Self.seed(server)
            let cases: [(String, String)] = [
                ("_limit=-1", "_limit must be an integer from 1 to 1000000000, not '-1'"),
                ("_page=1&_limit=-1", "_limit must be an integer from 1 to 1000000000, not '-1'"),
                ("_page=0", "_page must be an integer from 1 to 1000000000, not '0'"),
                ("limit=0", "limit must be an integer from 1 to 1000000000, not '0'"),
                ("_limit=x&limit=0", "limit must be an integer from 1 to 1000000000, not '0'"),  // limit wins over _limit
                ("offset=-1", "offset must be an integer from 0 to 1000000000, not '-1'"),
                ("_limit=1000000001", "_limit must be an integer from 1 to 1000000000, not '1000000001'"),
            ]
            for (query, message) in cases {
                let reply = try await client.get("/cars?" + query)
                #expect(reply.status == 400, "\(query)")
                #expect(reply.json == .object(["error": .object(["status": 400, "code": "invalidPage", "message": .string(message)])]),
                        "\(query): \(reply.text)")
            }
            #expect(try await client.get("/cars?_limit=x&limit=5").json?.arrayValue?.count == 5)
        }
    }
}
