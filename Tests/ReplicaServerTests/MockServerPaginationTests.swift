import Foundation
import ReplicaServer
import Testing

extension JSONValue {
    /// The value as an `Int`, for `.int`.
    fileprivate var intValue: Int? { int64Value.map { Int($0) } }
}

/// The paging styles (``MockPagination``): each pages 23 seeded people by 10 over real HTTP; the first and last
/// pages are compared whole, and walking the pages as a client would yields every key once, in order.
@Suite("MockServer pagination styles")
struct MockServerPaginationTests {
    static let people = MockResource("people", properties: [MockProperty("name", .string), MockProperty("team", .string)])

    static func name(_ id: Int) -> String { id < 10 ? "p0\(id)" : "p\(id)" }
    static func team(_ id: Int) -> String { id % 2 == 0 ? "even" : "odd" }

    /// Person `id` as the server serves it.
    static func person(_ id: Int) -> JSONValue {
        ["id": .int(Int64(id)), "name": .string(name(id)), "team": .string(team(id))]
    }

    static func people(_ ids: some Sequence<Int>) -> JSONValue { .array(ids.map(person)) }

    /// Options serving `count` people (ids 1…count) in `style`.
    static func options(_ style: MockPagination, count: Int = 23, pageSize: Int = 10, maxPageSize: Int? = nil) -> MockServerOptions {
        var options = MockServerOptions()
        options.pagination = style
        options.pageSize = pageSize
        options.maxPageSize = maxPageSize
        options.seeds = [.json(.array((1...count).map { person($0) }), into: "people")]
        return options
    }

    /// The path and query of an absolute URL the server gave, which must point at itself.
    static func relative(_ url: String?, _ client: Client) throws -> String {
        let url = try #require(url)
        try #require(url.hasPrefix(client.base + "/"), "\(url) is not on \(client.base)")
        return String(url.dropFirst(client.base.count))
    }

    /// The ids of a page's items.
    static func ids(_ items: JSONValue?) -> [Int] {
        items?.arrayValue?.compactMap { $0["id"]?.intValue } ?? []
    }

    @Test("link (the default) is today's: _page/_limit with Link, --page-size for a page without _limit, --max-page-size caps _limit and limit, no paging parameter answers all")
    func link() async throws {
        try await withServer([Self.people], options: Self.options(.link, pageSize: 4, maxPageSize: 6)) { _, client in
            let all = try await client.get("/people")
            #expect(all.json == Self.people(1...23))
            #expect(all.header("Link") == nil)
            #expect(all.header("X-Total-Count") == "23")

            let first = try await client.get("/people?_page=1")
            #expect(first.json == Self.people(1...4))
            let base = client.base
            #expect(first.header("Link") == "<\(base)/people?_page=1&_limit=4>; rel=\"first\", <\(base)/people?_page=2&_limit=4>; rel=\"next\", "
                + "<\(base)/people?_page=6&_limit=4>; rel=\"last\"")

            let capped = try await client.get("/people?_page=2&_limit=50")
            #expect(capped.json == Self.people(7...12))
            #expect(capped.header("Link")?.contains("<\(base)/people?_page=4&_limit=6>; rel=\"last\"") == true)
            let offsets = try await client.get("/people?limit=100&offset=20")
            #expect(offsets.json == Self.people(21...23))
            #expect(offsets.header("Link")?.contains("<\(base)/people?limit=6&offset=18>; rel=\"last\"") == true)
            #expect(offsets.header("X-Total-Count") == "23")
        }
    }

    @Test("cursor (Slack): ?limit&cursor answers ok, items and response_metadata.next_cursor, \"\" on the last page")
    func cursor() async throws {
        try await withServer([Self.people], options: Self.options(.cursor)) { _, client in
            let first = try await client.get("/people?limit=10")
            #expect(first.status == 200)
            #expect(first.header("X-Total-Count") == "23")
            #expect(first.header("Link") == nil)
            let firstCursor = Data("10".utf8).base64EncodedString()
            #expect(first.json == ["ok": true, "items": Self.people(1...10), "response_metadata": ["next_cursor": .string(firstCursor)]])
            #expect(first.json?.objectValue?.keys == ["ok", "items", "response_metadata"])
            // The same position gives the same cursor.
            #expect(try await client.get("/people").json?["response_metadata"]?["next_cursor"] == .string(firstCursor))

            let last = try await client.get("/people?limit=10&cursor=\(Data("20".utf8).base64EncodedString())")
            #expect(last.json == ["ok": true, "items": Self.people(21...23), "response_metadata": ["next_cursor": ""]])

            var seen: [Int] = []
            var cursor = ""
            for _ in 0..<10 {
                let page = try await client.get("/people?limit=10" + (cursor.isEmpty ? "" : "&cursor=" + cursor))
                #expect(page.status == 200)
                seen += Self.ids(page.json?["items"])
                cursor = try #require(page.json?["response_metadata"]?["next_cursor"]?.stringValue)
                if cursor.isEmpty { break }
            }
            #expect(seen == Array(1...23))

            // Filters and sort hold in every page.
            var even: [Int] = []
            cursor = ""
            for _ in 0..<10 {
                let page = try await client.get("/people?team=even&_sort=-id&limit=5" + (cursor.isEmpty ? "" : "&cursor=" + cursor))
                #expect(page.header("X-Total-Count") == "11")
                even += Self.ids(page.json?["items"])
                cursor = try #require(page.json?["response_metadata"]?["next_cursor"]?.stringValue)
                if cursor.isEmpty { break }
            }
            #expect(even == Array(stride(from: 22, through: 2, by: -2)))
        }
    }

    @Test("stripe on an API route: ?limit&starting_after answers object, url, has_more and data; an unknown id is Stripe's 400")
    func stripe() async throws {
        let routes = [MockRoute("GET", "/v1/customers", resource: "people", pagination: .stripe)]
        // The server's style is link: the route's own style wins on /v1/customers, /people stays link.
        try await withServer([Self.people], routes: routes, options: Self.options(.link)) { _, client in
            let first = try await client.get("/v1/customers?limit=10")
            #expect(first.json == ["object": "list", "url": "/v1/customers", "has_more": true, "data": Self.people(1...10)])
            #expect(first.json?.objectValue?.keys == ["object", "url", "has_more", "data"])
            #expect(first.header("X-Total-Count") == "23")
            let last = try await client.get("/v1/customers?limit=10&starting_after=20")
            #expect(last.json == ["object": "list", "url": "/v1/customers", "has_more": false, "data": Self.people(21...23)])
            #expect(try await client.get("/people?_page=1&_limit=2").json == Self.people(1...2))

            var seen: [Int] = []
            var after: Int?
            for _ in 0..<10 {
                let page = try await client.get("/v1/customers?limit=10" + (after.map { "&starting_after=\($0)" } ?? ""))
                let ids = Self.ids(page.json?["data"])
                seen += ids
                guard page.json?["has_more"] == true else { break }
                guard let lastID = ids.last else {
                    Issue.record("has_more with an empty page")
                    break
                }
                after = lastID
            }
            #expect(seen == Array(1...23))

            for unknown in ["999", "abc"] {
                let missing = try await client.get("/v1/customers?limit=10&starting_after=\(unknown)")
                #expect(missing.status == 400)
                #expect(missing.json == ["error": ["type": "invalid_request_error", "message": .string("No such object: '\(unknown)'"),
                                                   "param": "starting_after"]])
            }
            // Outside the collection's filter, an object that exists is no object of this list either.
            #expect(try await client.get("/v1/customers?team=even&starting_after=3").status == 400)
        }
    }

    @Test("offset: ?offset&limit answers items, total, offset and limit; --max-page-size caps the limit it echoes")
    func offset() async throws {
        try await withServer([Self.people], options: Self.options(.offset, maxPageSize: 7)) { _, client in
            let first = try await client.get("/people?offset=0&limit=7")
            #expect(first.json == ["items": Self.people(1...7), "total": 23, "offset": 0, "limit": 7])
            #expect(first.json?.objectValue?.keys == ["items", "total", "offset", "limit"])
            #expect(first.header("X-Total-Count") == "23")
            let capped = try await client.get("/people?offset=7&limit=50")
            #expect(capped.json == ["items": Self.people(8...14), "total": 23, "offset": 7, "limit": 7])
            let defaulted = try await client.get("/people")
            #expect(defaulted.json == ["items": Self.people(1...7), "total": 23, "offset": 0, "limit": 7])
        }
        try await withServer([Self.people], options: Self.options(.offset)) { _, client in
            let first = try await client.get("/people?offset=0&limit=10")
            #expect(first.json == ["items": Self.people(1...10), "total": 23, "offset": 0, "limit": 10])
            let last = try await client.get("/people?offset=20&limit=10")
            #expect(last.json == ["items": Self.people(21...23), "total": 23, "offset": 20, "limit": 10])
            var seen: [Int] = []
            var offset = 0
            for _ in 0..<10 {
                let page = try await client.get("/people?offset=\(offset)&limit=10")
                seen += Self.ids(page.json?["items"])
                offset += try #require(page.json?["limit"]?.intValue)
                if offset >= (page.json?["total"]?.intValue ?? 0) { break }
            }
            #expect(seen == Array(1...23))
        }
    }

    @Test("jira: ?startAt&maxResults answers startAt, maxResults (the size used), total, isLast and values")
    func jira() async throws {
        try await withServer([Self.people], options: Self.options(.jira, maxPageSize: 50)) { _, client in
            let first = try await client.get("/people?startAt=0&maxResults=10")
            #expect(first.json == ["startAt": 0, "maxResults": 10, "total": 23, "isLast": false, "values": Self.people(1...10)])
            #expect(first.json?.objectValue?.keys == ["startAt", "maxResults", "total", "isLast", "values"])
            #expect(first.header("X-Total-Count") == "23")
            let last = try await client.get("/people?startAt=20&maxResults=10")
            #expect(last.json == ["startAt": 20, "maxResults": 10, "total": 23, "isLast": true, "values": Self.people(21...23)])
            let capped = try await client.get("/people?startAt=0&maxResults=500")
            #expect(capped.json?["maxResults"] == 50)
            #expect(Self.ids(capped.json?["values"]) == Array(1...23))
            var seen: [Int] = []
            var startAt = 0
            for _ in 0..<10 {
                let page = try await client.get("/people?startAt=\(startAt)&maxResults=10")
                let ids = Self.ids(page.json?["values"])
                seen += ids
                if page.json?["isLast"] == true { break }
                startAt += ids.count
            }
            #expect(seen == Array(1...23))
        }
    }

    @Test("page: ?page&per_page (from 1) answers items, page, per_page, total and total_pages; past the end, no items")
    func page() async throws {
        try await withServer([Self.people], options: Self.options(.page)) { _, client in
            let first = try await client.get("/people?page=1&per_page=10")
            #expect(first.json == ["items": Self.people(1...10), "page": 1, "per_page": 10, "total": 23, "total_pages": 3])
            #expect(first.json?.objectValue?.keys == ["items", "page", "per_page", "total", "total_pages"])
            #expect(first.header("X-Total-Count") == "23")
            let last = try await client.get("/people?page=3&per_page=10")
            #expect(last.json == ["items": Self.people(21...23), "page": 3, "per_page": 10, "total": 23, "total_pages": 3])
            let past = try await client.get("/people?page=4&per_page=10")
            #expect(past.json == ["items": [], "page": 4, "per_page": 10, "total": 23, "total_pages": 3])
            var seen: [Int] = []
            for number in 1...10 {
                let page = try await client.get("/people?page=\(number)&per_page=10")
                seen += Self.ids(page.json?["items"])
                if number >= (page.json?["total_pages"]?.intValue ?? 0) { break }
            }
            #expect(seen == Array(1...23))
        }
    }

    @Test("jsonapi: ?page[number]&page[size] answers data (type, id, attributes), absolute links keeping the filters, meta.total")
    func jsonapi() async throws {
        try await withServer([Self.people], options: Self.options(.jsonapi)) { _, client in
            func resource(_ id: Int) -> JSONValue {
                ["type": "people", "id": .string(String(id)), "attributes": ["name": .string(Self.name(id)), "team": .string(Self.team(id))]]
            }
            func link(_ number: Int, _ extra: String = "") -> JSONValue {
                .string("\(client.base)/people?\(extra)page%5Bnumber%5D=\(number)&page%5Bsize%5D=10")
            }
            let first = try await client.get("/people?page%5Bnumber%5D=1&page%5Bsize%5D=10")
            #expect(first.json == [
                "data": .array((1...10).map(resource)),
                "links": ["self": link(1), "first": link(1), "last": link(3), "next": link(2)],
                "meta": ["total": 23],
            ])
            #expect(first.json?.objectValue?.keys == ["data", "links", "meta"])
            #expect(first.header("X-Total-Count") == "23")
            // Brackets unencoded read alike.
            let last = try await client.get("/people?page[number]=3&page[size]=10")
            #expect(last.json == [
                "data": .array((21...23).map(resource)),
                "links": ["self": link(3), "first": link(1), "last": link(3), "next": nil],
                "meta": ["total": 23],
            ])
            // The filters and sort the server understood are kept in the links; the rest is dropped.
            let filtered = try await client.get("/people?team=odd&_sort=-id&unknown=1&page[size]=10")
            #expect(filtered.json?["links"]?["next"] == link(2, "team=odd&_sort=-id&"))
            #expect(filtered.json?["meta"]?["total"] == 12)

            var seen: [Int] = []
            var path = "/people?page[size]=10"
            for _ in 0..<10 {
                let page = try await client.get(path)
                seen += page.json?["data"]?.arrayValue?.compactMap { $0["id"]?.stringValue.flatMap { Int($0) } } ?? []
                guard let next = page.json?["links"]?["next"]?.stringValue else { break }
                path = try Self.relative(next, client)
            }
            #expect(seen == Array(1...23))
        }
    }

    @Test("hal (Spring Data REST): ?page&size (from 0) answers _embedded, _links (no next on the last page) and page")
    func hal() async throws {
        try await withServer([Self.people], options: Self.options(.hal)) { _, client in
            func href(_ number: Int) -> JSONValue { ["href": .string("\(client.base)/people?page=\(number)&size=10")] }
            let first = try await client.get("/people?page=0&size=10")
            #expect(first.json == [
                "_embedded": ["people": Self.people(1...10)],
                "_links": ["self": href(0), "next": href(1), "last": href(2)],
                "page": ["size": 10, "totalElements": 23, "totalPages": 3, "number": 0],
            ])
            #expect(first.json?.objectValue?.keys == ["_embedded", "_links", "page"])
            #expect(first.header("X-Total-Count") == "23")
            let last = try await client.get("/people?page=2&size=10")
            #expect(last.json == [
                "_embedded": ["people": Self.people(21...23)],
                "_links": ["self": href(2), "last": href(2)],
                "page": ["size": 10, "totalElements": 23, "totalPages": 3, "number": 2],
            ])
            var seen: [Int] = []
            var path = "/people?size=10"
            for _ in 0..<10 {
                let page = try await client.get(path)
                seen += Self.ids(page.json?["_embedded"]?["people"])
                guard let next = page.json?["_links"]?["next"]?["href"]?.stringValue else { break }
                path = try Self.relative(next, client)
            }
            #expect(seen == Array(1...23))
        }
    }

    @Test("gitlab keyset: a bare array, Link rel=next only while there are more, no X-Total-Count; sort=desc walks backwards")
    func gitlab() async throws {
        try await withServer([Self.people], options: Self.options(.gitlab)) { _, client in
            let query = "pagination=keyset&per_page=10&order_by=id&sort=asc"
            let first = try await client.get("/people?\(query)")
            #expect(first.json == Self.people(1...10))
            #expect(first.header("Link") == "<\(client.base)/people?\(query)&id_after=10>; rel=\"next\"")
            #expect(first.header("X-Total-Count") == nil)
            let last = try await client.get("/people?\(query)&id_after=20")
            #expect(last.json == Self.people(21...23))
            #expect(last.header("Link") == nil)

            func walk(_ start: String) async throws -> [Int] {
                var seen: [Int] = []
                var path = start
                for _ in 0..<10 {
                    let page = try await client.get(path)
                    #expect(page.status == 200)
                    seen += Self.ids(page.json)
                    guard let link = page.header("Link") else { break }
                    let url = try #require(link.firstMatch(of: #/^<([^>]+)>; rel="next"$/#)?.1)
                    path = try Self.relative(String(url), client)
                }
                return seen
            }
            #expect(try await walk("/people?\(query)") == Array(1...23))
            #expect(try await walk("/people?pagination=keyset&per_page=10&order_by=id&sort=desc") == Array((1...23).reversed()))
            #expect(try await walk("/people?team=odd&per_page=4") == Array(stride(from: 1, through: 23, by: 2)))
        }
    }

    @Test("keyset and page styles walk every store alike, a filter and a descending sort on a non-key property held",
          arguments: ["memory", "sqlite", "postgres"])
    func stores(kind: String) async throws {
        // Names sort against the keys: p23 first descending.
        let expected = Array(stride(from: 23, through: 1, by: -2))
        for style in [MockPagination.cursor, .stripe, .gitlab, .hal] {
            var options = Self.options(style)
            options.store = try await Fixture.store(kind)
            try await withServer([Self.people], options: options) { _, client in
                var seen: [Int] = []
                var path = "/people?team=odd&_sort=name&_order=desc" + (style == .hal ? "&size=4" : style == .gitlab ? "&per_page=4" : "&limit=4")
                for _ in 0..<10 {
                    let page = try await client.get(path)
                    #expect(page.status == 200, "\(kind) \(style): \(page.text)")
                    var next: String?
                    switch style {
                    case .cursor:
                        seen += Self.ids(page.json?["items"])
                        if let cursor = page.json?["response_metadata"]?["next_cursor"]?.stringValue, !cursor.isEmpty {
                            next = "/people?team=odd&_sort=name&_order=desc&limit=4&cursor=\(cursor)"
                        }
                    case .stripe:
                        let ids = Self.ids(page.json?["data"])
                        seen += ids
                        if page.json?["has_more"] == true, let last = ids.last {
                            next = "/people?team=odd&_sort=name&_order=desc&limit=4&starting_after=\(last)"
                        }
                    case .gitlab:
                        seen += Self.ids(page.json)
                        if let link = page.header("Link"), let url = link.firstMatch(of: #/^<([^>]+)>; rel="next"$/#)?.1 {
                            next = try Self.relative(String(url), client)
                        }
                    default:
                        seen += Self.ids(page.json?["_embedded"]?["people"])
                        if let href = page.json?["_links"]?["next"]?["href"]?.stringValue { next = try Self.relative(href, client) }
                    }
                    guard let next else { break }
                    path = next
                }
                #expect(seen == expected, "\(kind) \(style)")
            }
        }
    }

    @Test("a bad paging value is a 400 invalidPage naming the parameter", arguments: [
        (MockPagination.link, "_page=0", "_page"),
        (.link, "_page=1&_limit=x", "_limit"),
        (.cursor, "limit=0", "limit"),
        (.cursor, "cursor=%21%21", "cursor"),
        (.cursor, "cursor=eyJhIjoxfQ%3D%3D", "cursor"),
        (.cursor, "cursor=OTk5", "cursor"),
        (.stripe, "limit=abc", "limit"),
        (.offset, "offset=-1", "offset"),
        (.offset, "limit=0", "limit"),
        (.jira, "startAt=x", "startAt"),
        (.jira, "maxResults=0", "maxResults"),
        (.page, "page=0", "page"),
        (.page, "per_page=-2", "per_page"),
        (.jsonapi, "page%5Bnumber%5D=0", "page[number]"),
        (.jsonapi, "page%5Bsize%5D=x", "page[size]"),
        (.hal, "page=-1", "page"),
        (.hal, "size=0", "size"),
        (.gitlab, "per_page=0", "per_page"),
        (.gitlab, "pagination=offset", "pagination"),
        (.gitlab, "order_by=shoeSize", "order_by"),
        (.gitlab, "sort=up", "sort"),
        (.gitlab, "id_after=999", "id_after"),
    ])
    func badValues(style: MockPagination, query: String, parameter: String) async throws {
        try await withServer([Self.people], options: Self.options(style)) { _, client in
            let reply = try await client.get("/people?\(query)")
            #expect(reply.status == 400, "\(style) \(query): \(reply.text)")
            #expect(reply.json?["error"]?["code"] == "invalidPage", "\(reply.text)")
            let message = try #require(reply.json?["error"]?["message"]?.stringValue)
            #expect(message.hasPrefix(parameter + " ") || message.hasPrefix(parameter + ":"), "\(message)")
        }
    }

    @Test("a resource's style overrides the server's; a filter parameter named as another style's paging parameter still filters")
    func perResource() async throws {
        var cursorPeople = Self.people
        cursorPeople.pagination = .cursor
        let pages = MockResource("pages", properties: [MockProperty("page", .integer)])
        var options = Self.options(.link)
        options.seeds.append(.json([["page": 1], ["page": 2], ["page": 2]], into: "pages"))
        try await withServer([cursorPeople, pages], options: options) { _, client in
            let people = try await client.get("/people?limit=2")
            #expect(people.json == ["ok": true, "items": Self.people(1...2),
                                    "response_metadata": ["next_cursor": .string(Data("2".utf8).base64EncodedString())]])
            // link style: `page` is no paging parameter of its, so it filters.
            let filtered = try await client.get("/pages?page=2")
            #expect(filtered.json?.arrayValue?.count == 2)
            #expect(filtered.header("X-Total-Count") == "2")
        }
    }

    @Test("the change feed (?since=) answers as before in a paged style")
    func changeFeed() async throws {
        try await withServer([Self.people], options: Self.options(.stripe)) { _, client in
            let first = try await client.get("/people?limit=2")
            let cursor = try #require(first.header("X-Cursor"))
            #expect(try await client.post("/people", #"{"name":"ann","team":"odd"}"#).status == 201)
            let changes = try await client.get("/people?since=\(cursor)")
            #expect(changes.json?["items"] == [["id": 24, "name": "ann", "team": "odd"]])
            #expect(changes.json?["deleted"] == [])
        }
    }

    @Test("--rate-limit: answers count down X-RateLimit-Remaining; over the limit a 429 with Retry-After, X-RateLimit-* and a JSON error")
    func rateLimit() async throws {
        var options = Self.options(.link, count: 2)
        // A window no loaded machine outlasts: the fourth request is over the limit however late it comes.
        options.rateLimit = MockRateLimit(requests: 3, per: .seconds(600))
        try await withServer([Self.people], options: options) { _, client in
            let before = Int(Date().timeIntervalSince1970)
            for remaining in [2, 1, 0] {
                let reply = try await client.get("/people")
                #expect(reply.status == 200)
                #expect(reply.json == Self.people(1...2))
                #expect(reply.header("X-RateLimit-Limit") == "3")
                #expect(reply.header("X-RateLimit-Remaining") == String(remaining))
            }
            let refused = try await client.get("/people")
            let after = Int(Date().timeIntervalSince1970)
            #expect(refused.status == 429)
            let retryAfter = try #require(refused.header("Retry-After").flatMap { Int($0) })
            #expect((1...600).contains(retryAfter), "Retry-After: \(retryAfter)")
            #expect(refused.header("X-RateLimit-Limit") == "3")
            #expect(refused.header("X-RateLimit-Remaining") == "0")
            let reset = try #require(refused.header("X-RateLimit-Reset").flatMap { Int($0) })
            // The window began between `before` and the refusal, and lasts 600 s.
            #expect(reset >= before + 600 && reset <= after + 601, "reset \(reset), requests from \(before) to \(after)")
            #expect(reset - after <= retryAfter + 1 && retryAfter <= reset - before + 1, "Retry-After \(retryAfter), reset \(reset)")
            #expect(refused.json?["error"]?["status"] == 429)
            #expect(refused.json?["error"]?["code"] == "rateLimited")
            #expect(refused.json?["error"]?["message"]?.stringValue?.contains("3 requests per 600 s") == true)
            // Refused requests do not count, and the window is not over.
            #expect(try await client.get("/people").status == 429)
        }
    }

    @Test("--rate-limit: a request after Retry-After's seconds is answered")
    func rateLimitRetryAfter() async throws {
        var options = Self.options(.link, count: 2)
        options.rateLimit = MockRateLimit(requests: 1, per: .seconds(2))
        try await withServer([Self.people], options: options) { _, client in
            // Back-to-back requests until one lands in the window of the one before (a loaded machine may
            // space two requests more than the window apart).
            var refused: Reply?
            for _ in 0..<20 {
                let reply = try await client.get("/people")
                if reply.status == 429 {
                    refused = reply
                    break
                }
                #expect(reply.status == 200)
            }
            let refusal = try #require(refused, "no request was refused")
            let retryAfter = try #require(refusal.header("Retry-After").flatMap { Int($0) })
            #expect((1...2).contains(retryAfter), "Retry-After: \(retryAfter)")
            try await Task.sleep(for: .seconds(retryAfter))
            let again = try await client.get("/people")
            #expect(again.status == 200)
            #expect(again.json == Self.people(1...2))
            #expect(again.header("X-RateLimit-Remaining") == "0")
        }
    }

    @Test("MockRateLimit reads N/SECONDS and refuses anything else")
    func rateLimitText() {
        #expect(MockRateLimit("5/1") == MockRateLimit(requests: 5, per: .seconds(1)))
        #expect(MockRateLimit("100/60")?.window == .seconds(60))
        #expect(MockRateLimit("10/0.5")?.window == .milliseconds(500))
        #expect(MockRateLimit("5/1")?.description == "5/1")
        #expect(MockRateLimit("10/0.5")?.description == "10/0.5")
        for bad in ["", "5", "0/1", "-1/1", "5/0", "5/-1", "x/1", "5/x", "5/1/2", "5/inf", "5/nan", "5/90000"] {
            #expect(MockRateLimit(bad) == nil, "\(bad)")
        }
    }
}
