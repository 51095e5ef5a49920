import Foundation
import HTTPTypes
import Hummingbird
import Replica
import ReplicaHTTP
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// Pagination as public APIs document it, served over loopback in their documented shapes and
/// synced by the real HTTP client on both stores: Stripe (`has_more`, `starting_after`), Slack
/// (`response_metadata.next_cursor`), Notion (`next_cursor` + `has_more`), JSON:API
/// (`links.next`), HAL (`_links.next.href`), Jira (`startAt`/`maxResults` capped by the
/// server, `total`, `isLast`), offset with a total, page numbers with `total_pages` (reqres),
/// Zendesk (`next_page`) and GitLab's keyset pages (`Link` only). Eight objects, three a page.
///
/// For each: a full sync reads every page and deletes the stale row; a second sync sends each
/// page's validators and is not modified; a sync stopped after page 1 (the page limit) or
/// failing on page 2 deletes nothing; and the same API synced without its pagination declared
/// fails naming what the first page said, and writes nothing.
@Suite("Pagination as public APIs document it, over HTTP on both stores", .serialized)
struct PublicAPIPaginationTests {
    /// One public API's collection: its route, its documented objects and how it pages them.
    struct API: Sendable, CustomTestStringConvertible {
        var name: String
        var path: String
        var envelope: String?
        /// The entity's key type and the JSON key of its name.
        var stringIDs = true
        var nameKey = "name"
        /// The route's `"pagination"` in the schema file.
        var pagination: String
        /// Parameters of the call (the page size the API takes).
        var parameters: [String: String] = [:]
        /// The documented object of index `i` (its id is ``id(_:)``).
        var object: @Sendable (Int) -> String
        var id: @Sendable (Int) -> String
        /// The page a request asks for: the body and headers, given the request's query and the server's base URL.
        var serve: @Sendable ([String: String], String, API) -> (body: String, headers: [String: String])
        /// What the first page says when the route does not declare the pagination (`nil`: it follows `Link`).
        var signal: String?
        var pages = 3
        var testDescription: String { name }

        static let count = 8
        static let size = 3

        func ids(_ range: Range<Int>) -> [String] { range.map(id) }
        func objects(_ range: Range<Int>) -> String { "[" + range.map(object).joined(separator: ", ") + "]" }

        /// The schema of the API's collection; `declared` false leaves the route's pagination out.
        func schema(declared: Bool = true) throws -> Schema {
            let envelope = self.envelope.map { #", "envelope": "\#($0)""# } ?? ""
            let pagination = declared ? #", "pagination": \#(self.pagination)"# : ""
            let nameKey = self.nameKey == "name" ? #""string""# : #"{"type": "string", "jsonKey": "\#(self.nameKey)"}"#
            return try Schema(json: Data(#"""
                {"name": "api", "version": 1, "unmappedKeys": "ignore",
                 "entities": {"Item": {"table": "items", "attributes": {"id": "\#(stringIDs ? "string" : "integer")", "name": \#(nameKey)}}},
                 "routes": [{"path": "\#(path)", "target": "Item", "stale": "delete"\#(envelope)\#(pagination)}]}
                """#.utf8))
        }

        /// The stale row's key: an id no page holds.
        var staleID: String { stringIDs ? "zz-stale" : "999999" }
    }

    static func int(_ query: [String: String], _ name: String, _ fallback: Int) -> Int { query[name].flatMap { Int($0) } ?? fallback }

    /// The URL of the same path with `query`, on the server's base.
    static func link(_ base: String, _ path: String, _ query: [(String, String)]) -> String {
        var components = URLComponents()
        components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) }
        return base + path + "?" + (components.percentEncodedQuery ?? "")
    }

    static let apis: [API] = [
        API(name: "Stripe", path: "/v1/customers", envelope: "data",
            pagination: #"{"style": "after", "parameter": "starting_after", "hasMore": "/has_more"}"#,
            parameters: ["limit": "3"],
            object: { #"{"id": "cus_NffrFeUfNV2H\#($0)", "object": "customer", "address": null, "balance": 0, "created": 1680893993, "#
                + #""currency": null, "email": "jenny\#($0)@example.com", "livemode": false, "metadata": {}, "name": "Jenny Rosen \#($0)"}"# },
            id: { "cus_NffrFeUfNV2H\($0)" },
            serve: { query, _, api in
                let limit = int(query, "limit", 10)
                var start = 0
                if let after = query["starting_after"] {
                    guard let index = (0..<API.count).first(where: { api.id($0) == after }) else {
                        return (#"{"error": {"type": "invalid_request_error", "message": "No such customer: '\#(after)'", "param": "starting_after"}}"#,
                                ["X-Status": "400"])
                    }
                    start = index + 1
                }
                let end = min(start + limit, API.count)
                return (#"{"object": "list", "url": "/v1/customers", "has_more": \#(end < API.count), "data": \#(api.objects(start..<end))}"#, [:])
            },
            signal: "/has_more: true"),
        API(name: "Slack", path: "/api/users.list", envelope: "members",
            pagination: #"{"style": "cursor", "parameter": "cursor", "cursor": "/response_metadata/next_cursor"}"#,
            parameters: ["limit": "3"],
            object: { #"{"id": "W012A3CD\#($0)", "team_id": "T012AB3C4", "name": "spengler\#($0)", "deleted": false, "real_name": "Egon Spengler", "is_bot": false}"# },
            id: { "W012A3CD\($0)" },
            serve: { query, _, api in
                // The cursor: base64 of "user:<id>" of the next object, as Slack's look.
                let limit = int(query, "limit", 100)
                var start = 0
                if let cursor = query["cursor"], !cursor.isEmpty {
                    guard let data = Data(base64Encoded: cursor), let text = String(data: data, encoding: .utf8),
                          let index = (0..<API.count).first(where: { "user:" + api.id($0) == text }) else {
                        return (#"{"ok": false, "error": "invalid_cursor"}"#, [:])
                    }
                    start = index
                }
                let end = min(start + limit, API.count)
                let next = end < API.count ? Data(("user:" + api.id(end)).utf8).base64EncodedString() : ""
                return (#"{"ok": true, "members": \#(api.objects(start..<end)), "cache_ts": 1498777272, "#
                        + #""response_metadata": {"next_cursor": "\#(next)"}}"#, [:])
            },
            signal: #"/response_metadata/next_cursor: "dXNlcjpXMDEyQTNDRDM=""#),
        API(name: "Notion", path: "/v1/users", envelope: "results",
            pagination: #"{"style": "cursor", "parameter": "start_cursor", "cursor": "/next_cursor", "hasMore": "/has_more"}"#,
            parameters: ["page_size": "3"],
            object: { #"{"object": "user", "id": "6794760a-1f15-45cd-9c65-0dfe42f5135\#($0)", "type": "person", "name": "Avocado Lovelace \#($0)", "#
                + #""avatar_url": null, "person": {"email": "avo\#($0)@example.org"}}"# },
            id: { "6794760a-1f15-45cd-9c65-0dfe42f5135\($0)" },
            serve: { query, _, api in
                let size = int(query, "page_size", 100)
                let start = query["start_cursor"].flatMap { cursor in (0..<API.count).first { api.id($0) == cursor } } ?? 0
                let end = min(start + size, API.count)
                let next = end < API.count ? #""\#(api.id(end))""# : "null"
                return (#"{"object": "list", "results": \#(api.objects(start..<end)), "next_cursor": \#(next), "#
                        + #""has_more": \#(end < API.count), "type": "user", "user": {}}"#, [:])
            },
            signal: "/has_more: true"),
        API(name: "JSON:API", path: "/articles", envelope: "data", nameKey: "attributes.title",
            pagination: #"{"style": "next", "next": "/links/next"}"#,
            parameters: ["page[size]": "3"],
            object: { #"{"type": "articles", "id": "\#($0 + 1)", "attributes": {"title": "JSON:API paints my bikeshed! \#($0)"}, "#
                + #""relationships": {"author": {"data": {"type": "people", "id": "9"}}}, "links": {"self": "/articles/\#($0 + 1)"}}"# },
            id: { String($0 + 1) },
            serve: { query, base, api in
                let size = int(query, "page[size]", 10)
                let number = int(query, "page[number]", 1)
                let start = min((number - 1) * size, API.count)
                let end = min(start + size, API.count)
                let last = (API.count + size - 1) / size
                func page(_ n: Int) -> String { #""\#(link(base, "/articles", [("page[number]", String(n)), ("page[size]", String(size))]))""# }
                return (#"{"data": \#(api.objects(start..<end)), "links": {"self": \#(page(number)), "first": \#(page(1)), "#
                        + #""prev": \#(number > 1 ? page(number - 1) : "null"), "next": \#(number < last ? page(number + 1) : "null"), "#
                        + #""last": \#(page(last))}, "meta": {"totalPages": \#(last)}}"#, [:])
            },
            signal: "/links/next: "),
        API(name: "HAL", path: "/people", envelope: "_embedded.people", nameKey: "firstName",
            pagination: #"{"style": "next", "next": "/_links/next/href"}"#,
            parameters: ["size": "3"],
            object: { #"{"id": "p\#($0)", "firstName": "Frodo \#($0)", "lastName": "Baggins", "_links": {"self": {"href": "/people/p\#($0)"}}}"# },
            id: { "p\($0)" },
            serve: { query, base, api in
                let size = int(query, "size", 20)
                let number = int(query, "page", 0)
                let start = min(number * size, API.count)
                let end = min(start + size, API.count)
                let pages = (API.count + size - 1) / size
                func page(_ n: Int) -> String { #"{"href": "\#(link(base, "/people", [("page", String(n)), ("size", String(size))]))"}"# }
                let next = number + 1 < pages ? #", "next": \#(page(number + 1))"# : ""
                return (#"{"_embedded": {"people": \#(api.objects(start..<end))}, "_links": {"first": \#(page(0)), "self": \#(page(number))\#(next), "#
                        + #""last": \#(page(pages - 1)), "profile": {"href": "\#(base)/profile/people"}}, "#
                        + #""page": {"size": \#(size), "totalElements": \#(API.count), "totalPages": \#(pages), "number": \#(number)}}"#, [:])
            },
            signal: "/_links/next: "),
        // Jira caps maxResults: asked for 3, it answers 2 at a time, and says so.
        API(name: "Jira", path: "/rest/api/3/project/search", envelope: "values",
            pagination: #"{"style": "offset", "parameter": "startAt", "limitParameter": "maxResults", "limit": 3, "total": "/total", "isLast": "/isLast"}"#,
            object: { #"{"self": "https://your-domain.atlassian.net/rest/api/3/project/1000\#($0)", "id": "1000\#($0)", "key": "EX\#($0)", "#
                + #""name": "Example \#($0)", "projectTypeKey": "software", "simplified": false, "style": "classic", "isPrivate": false}"# },
            id: { "1000\($0)" },
            serve: { query, base, api in
                let asked = int(query, "maxResults", 50)
                let size = min(asked, 2)
                let start = min(int(query, "startAt", 0), API.count)
                let end = min(start + size, API.count)
                let next = end < API.count ? #""nextPage": "\#(link(base, "/rest/api/3/project/search", [("startAt", String(end)), ("maxResults", String(size))]))", "# : ""
                return (#"{"self": "\#(base)/rest/api/3/project/search", \#(next)"maxResults": \#(size), "startAt": \#(start), "#
                        + #""total": \#(API.count), "isLast": \#(end >= API.count), "values": \#(api.objects(start..<end))}"#, [:])
            },
            signal: "/isLast: false", pages: 4),
        API(name: "offset and total", path: "/items", envelope: "items", stringIDs: false,
            pagination: #"{"style": "offset", "limit": 3, "total": "/total"}"#,
            object: { #"{"id": \#($0 + 100), "name": "item \#($0)"}"# },
            id: { String($0 + 100) },
            serve: { query, _, api in
                // Three a page unless asked otherwise.
                let limit = int(query, "limit", 3)
                let offset = min(int(query, "offset", 0), API.count)
                let end = min(offset + limit, API.count)
                return (#"{"items": \#(api.objects(offset..<end)), "total": \#(API.count), "offset": \#(offset), "limit": \#(limit)}"#, [:])
            },
            signal: "/total: 8 (3 read)"),
        API(name: "page numbers (reqres)", path: "/api/users", envelope: "data", stringIDs: false, nameKey: "first_name",
            pagination: #"{"style": "page", "sizeParameter": "per_page", "size": 3, "total": "/total", "pageCount": "/total_pages"}"#,
            object: { #"{"id": \#($0 + 1), "email": "george.bluth\#($0)@reqres.in", "first_name": "George \#($0)", "last_name": "Bluth", "#
                + #""avatar": "https://reqres.in/img/faces/\#($0 + 1)-image.jpg"}"# },
            id: { String($0 + 1) },
            serve: { query, _, api in
                let size = int(query, "per_page", 6)
                let number = int(query, "page", 1)
                let start = min((number - 1) * size, API.count)
                let end = min(start + size, API.count)
                return (#"{"page": \#(number), "per_page": \#(size), "total": \#(API.count), "total_pages": \#((API.count + size - 1) / size), "#
                        + #""data": \#(api.objects(start..<end)), "support": {"url": "https://reqres.in/#support-heading", "text": "Thanks"}}"#, [:])
            },
            signal: "/total: 8 (6 read)"),
        API(name: "Zendesk", path: "/api/v2/users.json", envelope: "users", stringIDs: false,
            pagination: #"{"style": "next", "next": "/next_page"}"#,
            parameters: ["per_page": "3"],
            object: { #"{"id": \#(35436 + $0), "name": "Johnny Agent \#($0)", "email": "johnny\#($0)@example.com", "role": "agent", "#
                + #""url": "https://company.zendesk.com/api/v2/users/\#(35436 + $0).json"}"# },
            id: { String(35436 + $0) },
            serve: { query, base, api in
                let size = int(query, "per_page", 100)
                let number = int(query, "page", 1)
                let start = min((number - 1) * size, API.count)
                let end = min(start + size, API.count)
                func page(_ n: Int) -> String { #""\#(link(base, "/api/v2/users.json", [("page", String(n)), ("per_page", String(size))]))""# }
                return (#"{"users": \#(api.objects(start..<end)), "next_page": \#(end < API.count ? page(number + 1) : "null"), "#
                        + #""previous_page": \#(number > 1 ? page(number - 1) : "null"), "count": \#(API.count)}"#, [:])
            },
            signal: "/next_page: "),
        // GitLab's keyset pages: only a `Link` rel="next", no total.
        API(name: "GitLab keyset", path: "/api/v4/projects", stringIDs: false,
            pagination: #""link""#,
            parameters: ["pagination": "keyset", "per_page": "3", "order_by": "id", "sort": "asc"],
            object: { #"{"id": \#(4 + $0), "description": null, "name": "Diaspora Client \#($0)", "path": "diaspora-client\#($0)", "#
                + #""created_at": "2013-09-30T13:46:02Z", "default_branch": "main", "visibility": "private"}"# },
            id: { String(4 + $0) },
            serve: { query, base, api in
                let size = int(query, "per_page", 20)
                let after = int(query, "id_after", 0)
                let start = (0..<API.count).first { Int(api.id($0)) ?? 0 > after } ?? API.count
                let end = min(start + size, API.count)
                var headers: [String: String] = [:]
                if end < API.count {
                    let next = link(base, "/api/v4/projects", [("id_after", api.id(end - 1)), ("order_by", "id"), ("pagination", "keyset"),
                                                               ("per_page", String(size)), ("sort", "asc")])
                    headers["Link"] = "<\(next)>; rel=\"next\""
                }
                return (api.objects(start..<end), headers)
            },
            signal: nil),
    ]

    /// A server answering `api`'s path as the API documents it, with an ETag per page (a 304 for
    /// a matching If-None-Match). Requests are logged; `failing` makes every page after the first answer 503.
    final class Fixture: Sendable {
        let server: StreamingServer
        let log: Locked<[String]>
        let failing: Locked<Bool>

        init(server: StreamingServer, log: Locked<[String]>, failing: Locked<Bool>) {
            self.server = server
            self.log = log
            self.failing = failing
        }

        var base: String { "http://127.0.0.1:\(server.port)" }

        static func start(_ api: API) async throws -> Fixture {
            let log = Locked<[String]>([])
            let failing = Locked(false)
            let port = Locked(0)
            let router = Router()
            router.get(RouterPath(api.path)) { request, _ -> Response in
                var query: [String: String] = [:]
                for item in URLComponents(string: request.uri.description)?.queryItems ?? [] { query[item.name] = item.value ?? "" }
                log.withLock { $0.append(request.uri.description) }
                var fields = HTTPFields()
                fields[.contentType] = "application/json"
                let isFirst = query.keys.allSatisfy { api.parameters[$0] != nil }
                if !isFirst, failing.withLock({ $0 }) {
                    return Response(status: .serviceUnavailable, headers: fields,
                                    body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"error": "unavailable"}"#)))
                }
                let (body, headers) = api.serve(query, "http://127.0.0.1:\(port.withLock { $0 })", api)
                var status = HTTPResponse.Status.ok
                for (name, value) in headers {
                    if name == "X-Status", let code = Int(value) { status = HTTPResponse.Status(code: code); continue }
                    if let field = HTTPField.Name(name) { fields[field] = value }
                }
                let etag = "\"\(body.utf8.reduce(UInt64(14695981039346656037)) { ($0 ^ UInt64($1)) &* 1099511628211 })\""
                fields[.eTag] = etag
                if request.headers[.ifNoneMatch] == etag {
                    return Response(status: .notModified, headers: fields)
                }
                return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
            }
            let server = try await StreamingServer.start(router)
            port.withLock { $0 = server.port }
            return Fixture(server: server, log: log, failing: failing)
        }
    }

    static func open(_ kind: String, _ schema: Schema, _ directory: TemporaryDirectory) async throws -> any ReplicaStore {
        if kind == "sqlite" { return try SQLiteReplica(store: Store(path: directory.path("api.sqlite"), schema: schema)) }
        return try await PostgresReplica.open(url: try await PostgresCluster.start().makeDatabase(), schema: schema)
    }

    /// A row no page holds, stored by an earlier sync: the complete sync deletes it.
    static func seedStale(_ store: any ReplicaStore, _ api: API) async throws {
        let session = try store.session(.entity("Item"), source: "seed")
        let id = api.stringIDs ? #""\#(api.staleID)""# : api.staleID
        let object = api.nameKey == "attributes.title" ? #"{"id": \#(id), "attributes": {"title": "stale"}}"#
            : #"{"id": \#(id), "\#(api.nameKey)": "stale"}"#
        _ = try await session.stage(body: Data("[\(object)]".utf8), source: "seed")
        _ = try await session.commit(complete: false)
    }

    static func ids(_ store: any ReplicaStore) async throws -> [String] {
        try await store.rows(RowQuery("Item", sort: [SortKey("id")])).map { row in
            switch row["id"] {
            case .string(let text)?: return text
            case .integer(let number)?: return String(number)
            default: return "?"
            }
        }
    }

    static func client(_ store: any ReplicaStore, _ fixture: Fixture, maxPages: Int? = nil) throws -> ReplicaClient {
        let base = try #require(URL(string: fixture.base))
        var configuration = ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: base])
        configuration.timeout = .seconds(60)
        if let maxPages { configuration.maxPages = maxPages }
        return ReplicaClient(store: store, configuration: configuration)
    }

    static func sorted(_ ids: [String], _ api: API) -> [String] {
        api.stringIDs ? ids.sorted() : ids.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }
    }

    @Test("every page is read and the stale row deleted; page validators make the next sync not modified",
          arguments: apis, ["sqlite", "postgres"])
    func completeSync(api: API, kind: String) async throws {
        let fixture = try await Fixture.start(api)
        let directory = try TemporaryDirectory("replica-api-pages")
        let store = try await Self.open(kind, try api.schema(), directory)
        try await withTeardown {
            try await Self.seedStale(store, api)
            let client = try Self.client(store, fixture)
            let parameters = api.parameters.mapValues { Parameter.value(.string($0)) }
            let result = try await client.call(api.path, params: parameters)
            #expect(result.pages == api.pages, "\(fixture.log.withLock { $0 })")
            #expect(!result.isTruncated)
            #expect(result.unfollowedPages == nil)
            #expect(result.sync.objectCount >= API.count)
            #expect(try await Self.ids(store) == Self.sorted(api.ids(0..<API.count), api))
            #expect(result.changes["Item"]?.deleted.map(\.description) == [api.staleID])
            #expect(result.changes["Item"]?.inserted.count == API.count)

            // Every page answers 304 to its validators: nothing changes, nothing is deleted.
            fixture.log.withLock { $0 = [] }
            let again = try await client.call(api.path, params: parameters)
            #expect(again.notModified, "\(fixture.log.withLock { $0 })")
            #expect(again.pages == api.pages)
            #expect(again.unchangedPages == api.pages)
            #expect(try await Self.ids(store) == Self.sorted(api.ids(0..<API.count), api))
        } teardown: {
            await store.close()
            await fixture.server.stop()
            directory.remove()
        }
    }

    @Test("a sync stopped after page 1 by the page limit, or failing on page 2, deletes nothing",
          arguments: apis, ["sqlite", "postgres"])
    func interruptedSync(api: API, kind: String) async throws {
        let fixture = try await Fixture.start(api)
        let directory = try TemporaryDirectory("replica-api-pages")
        let store = try await Self.open(kind, try api.schema(), directory)
        try await withTeardown {
            try await Self.seedStale(store, api)
            let parameters = api.parameters.mapValues { Parameter.value(.string($0)) }
            // Page 2 fails: the whole sync fails, naming the status and the page; nothing is written.
            fixture.failing.withLock { $0 = true }
            let error = await #expect(throws: ClientError.self) { try await Self.client(store, fixture).call(api.path, params: parameters) }
            #expect(error?.status == 503)
            #expect(error?.request?.hasPrefix("GET \(fixture.base)\(api.path)?") == true, "\(error.map { "\($0)" } ?? "")")
            #expect(try await Self.ids(store) == [api.staleID])
            fixture.failing.withLock { $0 = false }

            // The page limit: page 1 is written, nothing deleted, and the result says it stopped.
            let truncated = try await Self.client(store, fixture, maxPages: 1).call(api.path, params: parameters)
            #expect(truncated.pages == 1)
            #expect(truncated.isTruncated)
            #expect(truncated.changes["Item"]?.deleted.isEmpty != false)
            let firstPage = api.name == "Jira" ? 2 : API.size
            #expect(try await Self.ids(store) == Self.sorted(api.ids(0..<firstPage) + [api.staleID], api))
        } teardown: {
            await store.close()
            await fixture.server.stop()
            directory.remove()
        }
    }

    @Test("without its pagination declared, a sync fails naming what page 1 said and writes nothing",
          arguments: apis.filter { $0.signal != nil }, ["sqlite", "postgres"])
    func undeclared(api: API, kind: String) async throws {
        let fixture = try await Fixture.start(api)
        let directory = try TemporaryDirectory("replica-api-pages")
        let store = try await Self.open(kind, try api.schema(declared: false), directory)
        try await withTeardown {
            try await Self.seedStale(store, api)
            let parameters = api.parameters.mapValues { Parameter.value(.string($0)) }
            let error = await #expect(throws: ClientError.self) { try await Self.client(store, fixture).call(api.path, params: parameters) }
            #expect(error?.code == .unfollowedPages)
            let message = error?.message ?? ""
            #expect(message.hasPrefix("the last page read says the collection goes on (\(api.signal ?? "")"), "\(message)")
            #expect(message.hasSuffix("), but the route's pagination (Link: rel=\"next\" headers, the default) found no page "
                                      + "after it; nothing was written: declare the route's pagination, or write the pages "
                                      + "without deleting (unfollowedPages = .warn, --unfollowed-pages warn)"), "\(message)")
            #expect(try await Self.ids(store) == [api.staleID])
        } teardown: {
            await store.close()
            await fixture.server.stop()
            directory.remove()
        }
    }
}

@Suite("replica sync: pagination from the schema file, the page limit, and unfollowed pages")
struct PaginationCommandTests {
    @Test("a Stripe list: the schema's pagination reads every page; --max-pages 1 deletes nothing and says so; undeclared, the sync fails naming has_more (exit 1, nothing written) and --unfollowed-pages warn writes page 1 and deletes nothing")
    func stripe() async throws {
        let api = try #require(PublicAPIPaginationTests.apis.first { $0.name == "Stripe" })
        let fixture = try await PublicAPIPaginationTests.Fixture.start(api)
        let directory = try TemporaryDirectory("replica-pagination-cli")
        try await withTeardown {
            func schemaFile(_ name: String, pagination: String) throws -> String {
                let url = directory.url(name)
                try Data(#"""
                    {"name": "stripe", "version": 1, "unmappedKeys": "ignore",
                     "entities": {"Customer": {"table": "customers", "attributes": {"id": "string", "name": "string", "email": "string"}}},
                     "routes": [{"path": "/v1/customers", "target": "Customer", "stale": "delete", "envelope": "data"\#(pagination)}]}
                    """#.utf8).write(to: url)
                return url.path
            }
            let declared = try schemaFile("declared.json", pagination: #", "pagination": {"style": "after", "parameter": "starting_after"}"#)
            let db = directory.path("stripe.sqlite")
            let path = "/v1/customers?limit=3"
            let limited = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", db, "--schema", declared, "--base-url", fixture.base,
                                                                            "--max-pages", "1", path])
            #expect(limited.status == 0, "\(limited.stderr)")
            #expect(limited.stdout == "\(path): 200, inserted 3, updated 0, deleted 0 (3 objects, stopped at the page limit after 1 page: "
                    + "nothing deleted)\n")
            let full = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", db, "--base-url", fixture.base, path])
            #expect(full.status == 0, "\(full.stderr)")
            #expect(full.stdout == "\(path): 200, inserted 5, updated 0, deleted 0 (5 objects, 3 pages, 1 not modified)\n")
            let bad = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", db, "--base-url", fixture.base, "--max-pages", "0", path])
            #expect(bad.status == 64)
            #expect(bad.stderr.contains("--max-pages takes a number of pages from 1 up to 1000000000, not 0"), "\(bad.stderr)")

            let undeclared = try schemaFile("undeclared.json", pagination: "")
            let other = directory.path("undeclared.sqlite")
            let failed = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", other, "--schema", undeclared,
                                                                           "--base-url", fixture.base, path])
            #expect(failed.status == 1)
            #expect(failed.stdout == "")
            #expect(failed.stderr.contains("Error: \(path): GET \(fixture.base)\(path): the last page read says the collection goes on "
                                           + "(/has_more: true), but the route's pagination (Link: rel=\"next\" headers, the default) "
                                           + "found no page after it; nothing was written"), "\(failed.stderr)")
            let warned = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", other, "--schema", undeclared,
                                                                           "--base-url", fixture.base, "--unfollowed-pages", "warn", path])
            #expect(warned.status == 0, "\(warned.stderr)")
            #expect(warned.stdout == "\(path): 200, inserted 3, updated 0, deleted 0 (3 objects, the last page says there is "
                    + "more (/has_more: true) that the route's pagination did not follow: nothing deleted)\n")
        } teardown: {
            await fixture.server.stop()
            directory.remove()
        }
    }
}

@Suite("schema infer recognises public APIs' pagination, and its schema syncs every page", .serialized)
struct PaginationInferenceTests {
    /// What inference makes of each API's first page (GitLab's keyset pages are a bare array with a `Link`: the default).
    static let expected: [String: PaginationRule] = [
        "Stripe": .stripe, "Slack": .slack, "Notion": .notion, "JSON:API": .jsonAPI,
        "Jira": .offset(parameter: "startAt", limitParameter: "maxResults", limit: 2, total: .pointer(JSONPointer("/total") ?? .root),
                        isLast: JSONPointer("/isLast")),
        "offset and total": .offset(parameter: "offset", limitParameter: "limit", limit: 3, total: .pointer(JSONPointer("/total") ?? .root)),
        "page numbers (reqres)": .page(parameter: "page", startingAt: 1, sizeParameter: "per_page", size: 6,
                                       total: .pointer(JSONPointer("/total") ?? .root), pageCount: .pointer(JSONPointer("/total_pages") ?? .root)),
        "Zendesk": .nextURL(JSONPointer("/next_page") ?? .root),
    ]

    @Test("the first page's envelope gives the route's pagination; the inferred schema reads all eight objects",
          arguments: PublicAPIPaginationTests.apis.filter { expected[$0.name] != nil })
    func inferred(api: PublicAPIPaginationTests.API) async throws {
        let fixture = try await PublicAPIPaginationTests.Fixture.start(api)
        let directory = try TemporaryDirectory("replica-infer-pages")
        try await withTeardown {
            let sample = directory.path("page1.json")
            let (body, _) = api.serve(api.parameters, fixture.base, api)
            try Data(body.utf8).write(to: URL(fileURLWithPath: sample))
            let inferred = try Schema.infer(name: "api", files: [sample], routes: [sample: api.path])
            let route = try #require(inferred.schema.routes.first)
            #expect(route.pagination == Self.expected[api.name], "\(inferred.text)")
            let store = try SQLiteReplica(store: Store(path: directory.path("api.sqlite"), schema: inferred.schema))
            let base = try #require(URL(string: fixture.base))
            let client = ReplicaClient(store: store, configuration: ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: base]))
            let result = try await client.call(api.path, params: api.parameters.mapValues { Parameter.value(.string($0)) })
            #expect(!result.isTruncated)
            guard case .entity(let entity) = route.target else { Issue.record("route \(route.target)"); return }
            #expect(try await store.rows(RowQuery(entity)).count == PublicAPIPaginationTests.API.count, "\(inferred.text)")
            await store.close()
        } teardown: {
            await fixture.server.stop()
            directory.remove()
        }
    }

    @Test("envelopes that page no known way infer no pagination")
    func none() {
        #expect(PaginationRule.inferred(fromEnvelope: ["count": 3]) == nil)
        #expect(PaginationRule.inferred(fromEnvelope: ["page": 1]) == nil)
        #expect(PaginationRule.inferred(fromEnvelope: ["next": "https://example.com/items?page=2"]) == nil)
        #expect(PaginationRule.inferred(fromEnvelope: ["next": "https://example.com/items?page=2", "previous": .null, "count": 40])
                == .nextURL(JSONPointer("/next") ?? .root))
        #expect(PaginationRule.inferred(fromEnvelope: ["_links": ["self": ["href": "/people"]]]) == .hal)
        #expect(PaginationRule.inferred(fromEnvelope: ["nextPageToken": "CAEQAA"])
                == .cursor(parameter: "pageToken", cursor: .pointer(JSONPointer("/nextPageToken") ?? .root)))
    }
}

@Suite("Pages asked for ahead when their number is known", .serialized)
struct ConcurrentPagesTests {
    /// A hundred objects, five a page, each page answered after 50 ms; the server counts the
    /// requests it holds at once.
    static func server(_ style: String, expecting: Int) async throws -> (StreamingServer, Locked<(now: Int, most: Int, offsets: [String])>) {
        let state = Locked<(now: Int, most: Int, offsets: [String])>((0, 0, []))
        let router = Router()
        router.get("/items") { request, _ -> Response in
            var query: [String: String] = [:]
            for item in URLComponents(string: request.uri.description)?.queryItems ?? [] { query[item.name] = item.value ?? "" }
            let first = ["offset", "page", "_page"].allSatisfy { name in query[name].map { $0 == "0" || $0 == "1" } ?? true }
            state.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            // The first pages asked for ahead are held until all of them are here (2 s at most): a
            // loaded machine must not answer one before the next is sent and hide the concurrency.
            let deadline = ContinuousClock.now.advanced(by: .seconds(2))
            while !first, state.withLock({ $0.most < expecting }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            try await Task.sleep(for: .milliseconds(50))
            state.withLock { $0.now -= 1 }
            let size = 5
            let start: Int
            var fields = HTTPFields()
            fields[.contentType] = "application/json"
            switch style {
            case "offset": start = Int(query["offset"] ?? "0") ?? 0
            case "page": start = ((Int(query["page"] ?? "1") ?? 1) - 1) * size
            default:
                let page = Int(query["_page"] ?? "1") ?? 1
                start = (page - 1) * size
                var links = ["<http://\(request.head.authority ?? "")/items?_page=20&_limit=5>; rel=\"last\""]
                if page < 20 { links.insert("<http://\(request.head.authority ?? "")/items?_page=\(page + 1)&_limit=5>; rel=\"next\"", at: 0) }
                fields[.init("Link")!] = links.joined(separator: ", ")
            }
            state.withLock { $0.offsets.append(String(start)) }
            let objects = (start..<min(start + size, 100)).map { #"{"id": \#($0 + 1), "name": "item \#($0 + 1)"}"# }.joined(separator: ", ")
            let body = switch style {
            case "offset": #"{"items": [\#(objects)], "total": 100, "offset": \#(start), "limit": 5}"#
            case "page": #"{"items": [\#(objects)], "page": \#(start / size + 1), "total_pages": 20}"#
            default: "[\(objects)]"
            }
            return Response(status: .ok, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
        }
        return (try await StreamingServer.start(router), state)
    }

    static let styles: [(String, String, String, [String: String])] = [
        ("offset", #", "envelope": "items", "pagination": {"style": "offset", "limit": 5, "total": "/total"}"#, "/items", [:]),
        ("page", #", "envelope": "items", "pagination": {"style": "page", "pageCount": "/total_pages"}"#, "/items", [:]),
        ("link", "", "/items", ["_page": "1", "_limit": "5"]),
    ]

    @Test("with a total, a page count or a Link rel=last, four pages are in flight at once and all commit in order; one at a time with 1",
          arguments: ["offset", "page", "link"])
    func concurrent(style: String) async throws {
        let (_, routeTail, path, parameters) = try #require(Self.styles.first { $0.0 == style })
        for concurrency in [4, 1] {
            let (server, state) = try await Self.server(style, expecting: concurrency)
            let directory = try TemporaryDirectory("replica-concurrent-pages")
            try await withTeardown {
                let schema = try Schema(json: Data(#"""
                    {"name": "items", "entities": {"Item": {"table": "items", "attributes": {"id": "integer", "name": "string"}}},
                     "routes": [{"path": "/items", "target": "Item", "stale": "delete"\#(routeTail)}]}
                    """#.utf8))
                let store = try SQLiteReplica(store: Store(path: directory.path("items.sqlite"), schema: schema))
                let base = try #require(URL(string: "http://127.0.0.1:\(server.port)"))
                var configuration = ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: base])
                configuration.concurrentPages = concurrency
                let result = try await ReplicaClient(store: store, configuration: configuration)
                    .call(path, params: parameters.mapValues { Parameter.value(.string($0)) })
                #expect(result.pages == 20)
                #expect(!result.isTruncated)
                #expect(result.changes["Item"]?.inserted.count == 100)
                #expect(try await store.rows(RowQuery("Item")).count == 100)
                let seen = state.withLock { $0 }
                // Each page asked for once; with concurrency the pages after the first go out together.
                #expect(seen.offsets.sorted { Int($0) ?? 0 < Int($1) ?? 0 } == (0..<20).map { String($0 * 5) }, "\(seen.offsets)")
                #expect(seen.most == concurrency, "\(style), concurrentPages \(concurrency): at most \(seen.most) at once")
                await store.close()
            } teardown: {
                await server.stop()
                directory.remove()
            }
        }
    }
}

/// A value shared with a test server's handlers. `@unchecked Sendable`: `value` is guarded by `lock`.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}
