import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// A paged collection of posts for user 1 behind a scripted transport: `page` from 1, two
/// posts a page, a content ETag per page, `Link` with rel="first" on every page and rel="next"
/// on every page but the last, on 304s too unless told to omit it (RFC 9110 does not require it).
/// `@unchecked Sendable`: guarded by `lock`.
final class PagedPosts: @unchecked Sendable {
    private let lock = NSLock()
    private var titles: [Int: String]
    private var failing: [Int: Int] = [:]
    private var loopBack = false
    private var linkOnNotModified = true
    let pageSize = 2

    init(_ ids: ClosedRange<Int>) { titles = Dictionary(uniqueKeysWithValues: ids.map { ($0, "t\($0)") }) }

    func set(_ id: Int, _ title: String?) { lock.withLock { titles[id] = title } }
    func fail(page: Int, status: Int?) { lock.withLock { failing[page] = status } }
    func linkLastPageBackToFirst() { lock.withLock { loopBack = true } }
    /// Answers 304 without the `Link` header (RFC 9110 does not require it on a 304).
    func omitLinkOnNotModified() { lock.withLock { linkOnNotModified = false } }

    func respond(_ request: ClientRequest) -> ClientResponse {
        lock.withLock {
            let page = Int(URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?
                .first { $0.name == "page" }?.value ?? "1") ?? 1
            if let status = failing[page] { return json(status, #"{"error": "injected"}"#) }
            let ids = titles.keys.sorted()
            let last = max(1, (ids.count + pageSize - 1) / pageSize)
            let slice = ids.dropFirst((page - 1) * pageSize).prefix(pageSize)
            let body = #"{"posts": ["# + slice.map { #"{"id": \#($0), "title": "\#(titles[$0] ?? "")"}"# }
                .joined(separator: ",") + "]}"
            let etag = "\"\(body.hashValue)\""
            var headers: HeaderFields = ["ETag": etag]
            var links = [#"</api/users/1/posts?page=1>; rel="first""#]
            if page < last || loopBack {
                let next = page < last ? page + 1 : 1
                links.append(#"</api/users/1/posts?page=\#(next)>; rel="next""#)
            }
            headers["Link"] = links.joined(separator: ", ")
            if request.headers["If-None-Match"] == etag {
                return ClientResponse(status: 304, headers: linkOnNotModified ? headers : ["ETag": etag])
            }
            return json(200, body, headers)
        }
    }
}

@Suite("Client sync sessions")
struct ClientSessionTests {
    static func setUp(_ server: PagedPosts, configure: (inout ClientConfiguration) -> Void = { _ in })
        throws -> (ReplicaClient, BlogFixture, ScriptedTransport) {
        let transport = ScriptedTransport { request, _ in server.respond(request) }
        let (client, blog) = try ClientTests.client(transport, configure: configure)
        return (client, blog, transport)
    }

    static func pageQueries(_ transport: ScriptedTransport, from index: Int) -> [String] {
        transport.requests.dropFirst(index).map { $0.url.query ?? "" }
    }

    @Test("each page has its own validators; a change on page 3 is found though pages 1 and 2 answer 304")
    func laterPageChanges() async throws {
        let server = PagedPosts(1...9)
        let (client, blog, transport) = try Self.setUp(server)
        let first = try await client.call("/users/1/posts")
        #expect(first.pages == 5)
        #expect(first.changes["Post"]?.inserted.integers == Array(1...9))

        server.set(6, "changed")
        let second = try await client.call("/users/1/posts")
        #expect(!second.notModified)
        #expect(second.status == 200)
        #expect(second.pages == 5)
        #expect(second.unchangedPages == 4)
        #expect(second.changes["Post"]?.updated.integers == [6])
        #expect(second.changes["Post"]?.deleted.isEmpty != false)
        #expect(try blog.store.rows("Post", where: "id = 6").first?["title"] == .string("changed"))
        // Every page carried its own validator.
        let conditional = transport.requests.dropFirst(5).map { $0.headers["If-None-Match"] != nil }
        #expect(conditional == [true, true, true, true, true])
        #expect(Self.pageQueries(transport, from: 5) == ["", "page=2", "page=3", "page=4", "page=5"])

        let third = try await client.call("/users/1/posts")
        #expect(third.notModified)
        #expect(third.status == 304)
        #expect(third.unchangedPages == 5)
    }

    @Test("a deletion on the last page is found; rows of unchanged pages are vouched for and stay")
    func laterPageDeletion() async throws {
        let server = PagedPosts(1...9)
        let (client, blog, _) = try Self.setUp(server)
        _ = try await client.call("/users/1/posts")
        server.set(9, nil)
        let result = try await client.call("/users/1/posts")
        #expect(result.unchangedPages == 4)
        #expect(result.changes["Post"]?.deleted.integers == [9])
        #expect(try blog.keys("Post") == (1...8).map { .integer(Int64($0)) })
    }

    @Test("a collection that grew past its recorded last page: the 304 is asked again and the new page found")
    func grownCollection() async throws {
        let server = PagedPosts(1...4)
        server.omitLinkOnNotModified()
        let (client, blog, transport) = try Self.setUp(server)
        _ = try await client.call("/users/1/posts")
        server.set(5, "t5")
        let result = try await client.call("/users/1/posts")
        #expect(result.changes["Post"]?.inserted.integers == [5])
        #expect(result.unchangedPages == 1)
        #expect(try blog.keys("Post").count == 5)
        // Page 2 answered 304 without a Link header: asked again without validators, it links to page 3.
        #expect(Self.pageQueries(transport, from: 2) == ["", "page=2", "page=2", "page=3"])
        #expect(transport.requests[4].headers["If-None-Match"] == nil)
        // Now the last page holds fewer posts than the page before it: an added post would have changed
        // it, so its 304 without a Link header says it is still the last page. Nothing is asked twice.
        let again = try await client.call("/users/1/posts")
        #expect(again.notModified)
        #expect(again.unchangedPages == 3)
        #expect(again.changes.isEmpty)
        #expect(Self.pageQueries(transport, from: 6) == ["", "page=2", "page=3"])
        #expect(transport.requests.dropFirst(6).map { $0.headers["If-None-Match"] != nil } == [true, true, true])
    }

    @Test("a full last page whose 304 has no Link header is asked again each sync, as the collection may have grown past it")
    func fullLastPage() async throws {
        let server = PagedPosts(1...4)
        server.omitLinkOnNotModified()
        let (client, blog, transport) = try Self.setUp(server)
        _ = try await client.call("/users/1/posts")
        // Page 2 is as long as page 1: the collection could have grown past it without changing it.
        let second = try await client.call("/users/1/posts")
        #expect(!second.notModified)
        #expect(second.unchangedPages == 1)
        #expect(second.changes.isEmpty)
        #expect(Self.pageQueries(transport, from: 2) == ["", "page=2", "page=2"])
        #expect(transport.requests.dropFirst(2).map { $0.headers["If-None-Match"] != nil } == [true, true, false])
        #expect(try blog.keys("Post").count == 4)
    }

    @Test("a failed page leaves the store and every validator as they were; the next sync catches up")
    func failedPage() async throws {
        let server = PagedPosts(1...9)
        let (client, blog, _) = try Self.setUp(server)
        _ = try await client.call("/users/1/posts")
        let before = try blog.store.rows("Post")
        server.set(2, "changed")
        server.set(9, nil)
        server.fail(page: 4, status: 500)
        let error = await #expect(throws: ClientError.self) { try await client.call("/users/1/posts") }
        #expect(error?.status == 500)
        #expect(error?.request == "GET http://127.0.0.1:9/api/users/1/posts?page=4")
        #expect(try blog.store.rows("Post") == before)
        server.fail(page: 4, status: nil)
        let result = try await client.call("/users/1/posts")
        #expect(result.changes["Post"]?.updated.integers == [2])
        #expect(result.changes["Post"]?.deleted.integers == [9])
    }

    @Test("a sync cut at maxPages stores its pages, deletes nothing and says so")
    func truncated() async throws {
        let server = PagedPosts(1...9)
        let (client, blog, _) = try Self.setUp(server) { $0.maxPages = 2 }
        _ = try await blog.sync("/users/1/posts", #"{"posts": [{"id": 99, "title": "not on a fetched page"}]}"#)
        let result = try await client.call("/users/1/posts")
        #expect(result.pages == 2)
        #expect(result.isTruncated)
        #expect(result.changes["Post"]?.inserted.integers == [1, 2, 3, 4])
        #expect(result.changes["Post"]?.deleted.isEmpty != false)
        #expect(try blog.keys("Post").contains(.integer(99)))
    }

    @Test("a 304 for a page never recorded, and page links that loop, are errors that change nothing")
    func inconsistentAnswers() async throws {
        let transport = ScriptedTransport { _, _ in ClientResponse(status: 304) }
        let (client, blog) = try ClientTests.client(transport)
        let error = await #expect(throws: ClientError.self) { try await client.call("/users/1/posts") }
        #expect(error?.code == .invalidResponse)
        #expect(error?.message.contains("no recorded copy") == true)

        let server = PagedPosts(1...5)
        server.linkLastPageBackToFirst()
        let (looping, loopingBlog, _) = try Self.setUp(server)
        let loop = await #expect(throws: ClientError.self) { try await looping.call("/users/1/posts") }
        #expect(loop?.code == .invalidResponse)
        // Page 3 links to page=1 (fetched first without the parameter): page 4, whose link leads back to page 2.
        #expect(loop?.message == "page 4 leads back to page 2, http://127.0.0.1:9/api/users/1/posts?page=2, fetched already "
                + "(pagination: Link: rel=\"next\" headers)",
                "\(loop.map(String.init(describing:)) ?? "")")
        #expect(try loopingBlog.store.count("Post") == 0)
        #expect(try blog.store.count("Post") == 0)
    }

    /// The blog fixture with `/users/:userID/posts` syncing incrementally as `incremental` says.
    static func incrementalBlog(_ transport: ScriptedTransport, _ incremental: IncrementalSync,
                                stale: StalePolicy = .delete) throws -> (ReplicaClient, BlogFixture) {
        var schema = try Schema(contentsOf: TestSupport.schemaFile("blog.json"))
        for index in schema.routes.indices where schema.routes[index].path == "/users/:userID/posts" {
            schema.routes[index].incremental = incremental
            schema.routes[index].stalePolicy = stale
        }
        let store = try Store.inMemory(schema: try Schema(name: schema.name, keyConvention: schema.keyConvention,
                                                          envelope: schema.envelope, entities: schema.entities,
                                                          routes: schema.routes))
        let blog = try BlogFixture(store: store)
        guard let base = URL(string: "http://127.0.0.1:9/api/") else { throw ClientError(.invalidRequest, "url") }
        return (ReplicaClient(engine: blog.engine, configuration: ClientConfiguration(transport: transport, baseURLs: [.production: base])),
                blog)
    }

    @Test("an incremental (since-cursor) sync upserts what it gets and deletes nothing but its tombstones")
    func incrementalSync() async throws {
        let transport = ScriptedTransport { request, _ in
            if request.url.query?.contains("since=c1") == true {
                return json(200, #"{"meta": {"cursor": "c2"}, "posts": [{"id": 3, "title": "new"}]}"#)
            }
            return json(200, #"{"meta": {"cursor": "c1"}, "posts": [{"id": 1, "title": "a"}, {"id": 2, "title": "b"}]}"#)
        }
        let (client, blog) = try Self.incrementalBlog(transport, IncrementalSync(cursor: .pointer(JSONPointer("/meta/cursor")!)))
        _ = try await blog.sync("/users/1/posts", #"{"posts": [{"id": 99, "title": "stale"}]}"#)
        let full = try await client.call("/users/1/posts")
        #expect(full.mode == .full)
        #expect(full.changes["Post"]?.deleted.integers == [99])
        let delta = try await client.call("/users/1/posts")
        #expect(delta.mode == .incremental)
        #expect(delta.changes["Post"]?.inserted.integers == [3])
        #expect(delta.changes["Post"]?.deleted.isEmpty != false)
        #expect(try blog.keys("Post") == [.integer(1), .integer(2), .integer(3)])
        #expect(transport.requests.map { $0.url.query ?? "" } == ["", "since=c1"])
    }

    @Test("tombstones are deleted in the cursor's transaction, inside the route's scope; a key listed and deleted stays")
    func tombstones() async throws {
        let transport = ScriptedTransport { request, _ in
            switch request.url.query ?? "" {
            case "since=c1":
                // 2 deleted; 3 deleted then created again; 7 is user 2's post: out of this route's scope.
                return json(200, #"{"items": [{"id": 3, "title": "again"}, {"id": 4, "title": "new"}], "#
                            + #""deleted": [2, {"id": 3}, 7, 404], "cursor": "c2"}"#)
            case "since=c2":
                return json(200, #"{"items": [], "deleted": ["x"], "cursor": "c3"}"#)
            default:
                return json(200, #"{"cursor": "c1", "posts": [{"id": 1, "title": "a"}, {"id": 2, "title": "b"}, {"id": 3, "title": "c"}]}"#)
            }
        }
        let (client, blog) = try Self.incrementalBlog(transport, IncrementalSync(cursor: .pointer(JSONPointer("/cursor")!),
                                                                                 items: JSONPointer("/items"),
                                                                                 deleted: JSONPointer("/deleted")))
        _ = try await blog.sync("/users/2/posts", #"{"posts": [{"id": 7, "title": "other user"}]}"#)
        _ = try await client.call("/users/1/posts")
        let delta = try await client.call("/users/1/posts")
        #expect(delta.mode == .incremental)
        #expect(delta.changes["Post"]?.deleted.integers == [2])
        #expect(delta.changes["Post"]?.inserted.integers == [4])
        #expect(delta.changes["Post"]?.updated.integers == [3])
        #expect(try blog.keys("Post") == [.integer(1), .integer(3), .integer(4), .integer(7)])
        #expect(try blog.store.rows("Post", where: "id = 3").first?["title"] == .string("again"))
        // A tombstone that is no key of the entity fails the sync whole: nothing changes, the cursor stays.
        let bad = await #expect(throws: ClientError.self) { try await client.call("/users/1/posts") }
        #expect(bad?.code == .invalidResponse)
        #expect(bad?.message.contains("/deleted/0") == true)
        #expect(try blog.keys("Post") == [.integer(1), .integer(3), .integer(4), .integer(7)])
        _ = try? await client.call("/users/1/posts")
        #expect(transport.requests.map { $0.url.query ?? "" } == ["", "since=c1", "since=c2", "since=c2"])
    }

    @Test("an expired cursor (410) starts a full sync in the same call, which deletes stale rows as the route says")
    func expiredCursor() async throws {
        let transport = ScriptedTransport { request, index in
            switch request.url.query ?? "" {
            case "since=c1":
                return json(410, #"{"error": "cursor expired"}"#)
            default:
                let cursor = index == 1 ? "c1" : "c9"
                return json(200, #"{"cursor": "\#(cursor)", "posts": [{"id": 1, "title": "a"}]}"#)
            }
        }
        let (client, blog) = try Self.incrementalBlog(transport, IncrementalSync(cursor: .pointer(JSONPointer("/cursor")!)))
        _ = try await client.call("/users/1/posts")
        _ = try await blog.sync("/users/1/posts", #"{"posts": [{"id": 5, "title": "gone upstream"}]}"#, options: SyncOptions(stalePolicy: .keep))
        let resync = try await client.call("/users/1/posts")
        #expect(resync.mode == .resync)
        #expect(resync.changes["Post"]?.deleted.integers == [5])
        #expect(try blog.keys("Post") == [.integer(1)])
        let next = try await client.call("/users/1/posts")
        #expect(next.mode == .incremental)
        #expect(transport.requests.map { $0.url.query ?? "" } == ["", "since=c1", "", "since=c9"])
    }
}

extension BlogFixture {
    /// The fixture over another store of the blog schema.
    init(store: Store) throws {
        self.store = store
        self.engine = try SQLiteReplica(store: store)
    }
}
