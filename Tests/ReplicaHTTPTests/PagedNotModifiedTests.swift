import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Replica
import ReplicaHTTP
import ReplicaTestSupport
import Testing

/// GitHub's `GET /issues` as its REST API documents paging: `?per_page=N&page=P`, newest first
/// (`direction=asc` for oldest first), a weak ETag per page and, on a 200, a `Link` header such as
/// `<https://api.github.com/issues?per_page=2&page=2>; rel="next", <…&page=3>; rel="last"`
/// (`prev` and `first` after the first page; no `next` and `last` on the last one). Its 304s carry
/// the ETag and no `Link` header, as servers that send only what RFC 9110 asks of a 304 do.
/// `@unchecked Sendable`: guarded by `lock`.
final class GitHubIssues: @unchecked Sendable {
    struct Logged: Equatable, CustomStringConvertible {
        /// Path and query.
        var target: String
        var conditional: Bool
        var status: Int
        var description: String { "\(conditional ? "conditional" : "unconditional") \(target) -> \(status)" }
    }

    private let lock = NSLock()
    private var open: [Int: String]
    private var logged: [Logged] = []
    private var base = ""

    init(_ numbers: ClosedRange<Int>) { open = Dictionary(uniqueKeysWithValues: numbers.map { ($0, "Issue \($0)") }) }

    func setBase(_ url: String) { lock.withLock { base = url } }
    func openIssue(_ number: Int) { lock.withLock { open[number] = "Issue \(number)" } }
    func close(_ number: Int) { lock.withLock { _ = open.removeValue(forKey: number) } }
    /// The requests answered since the last call, and forgets them.
    func takeLog() -> [Logged] { lock.withLock { defer { logged = [] }; return logged } }

    func respond(_ request: Request) -> Response {
        lock.withLock {
            let query = request.uri.queryParameters
            let perPage = query["per_page"].flatMap { Int($0) } ?? 30
            let page = query["page"].flatMap { Int($0) } ?? 1
            let ascending = query["direction"] == "asc"
            let numbers = open.keys.sorted(by: ascending ? (<) : (>))
            let last = max(1, (numbers.count + perPage - 1) / perPage)
            let slice = numbers.dropFirst((page - 1) * perPage).prefix(perPage)
            let body = "[" + slice.map { number in
                #"{"id": \#(1_000 + number), "number": \#(number), "title": "\#(open[number] ?? "")", "state": "open"}"#
            }.joined(separator: ", ") + "]"
            let etag = "W/\"\(GitHubIssues.fnv1a(body))\""
            let target = request.uri.description
            let conditional = request.headers[.ifNoneMatch] != nil
            if request.headers[.ifNoneMatch] == etag {
                logged.append(Logged(target: target, conditional: conditional, status: 304))
                return Response(status: .notModified, headers: [.eTag: etag])
            }
            logged.append(Logged(target: target, conditional: conditional, status: 200))
            func link(_ number: Int, _ rel: String) -> String {
                "<\(base)/issues?\(ascending ? "direction=asc&" : "")per_page=\(perPage)&page=\(number)>; rel=\"\(rel)\""
            }
            var links: [String] = []
            if page > 1 { links.append(link(page - 1, "prev")) }
            if page < last { links += [link(page + 1, "next"), link(last, "last")] }
            if page > 1 { links.append(link(1, "first")) }
            var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .eTag: etag]
            if !links.isEmpty, let name = HTTPField.Name("Link") { headers[name] = links.joined(separator: ", ") }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
        }
    }

    static func fnv1a(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return String(hash, radix: 16)
    }
}

@Suite("Paged sync: 304s without a Link header, over HTTP")
struct PagedNotModifiedTests {
    static let schema = """
        {"name": "github", "entities": {"Issue": {"attributes": {"id": "integer", "number": "integer", "title": "string", "state": "string"}}},
         "routes": [{"path": "/issues", "target": "Issue", "stale": "delete"}]}
        """

    /// Serves `issues` on 127.0.0.1 and a free port, and runs `body` with a client syncing into a fresh store
    /// (its configuration changed by `configure` first: a metrics factory, say).
    static func withAPI(_ issues: GitHubIssues, configure: (inout ClientConfiguration) -> Void = { _ in },
                        _ body: (ReplicaClient, Store) async throws -> Void) async throws {
        let router = Router()
        router.get("/issues") { request, _ in issues.respond(request) }
        let server = try await StreamingServer.start(router)
        try await withTeardown {
            let base = "http://127.0.0.1:\(server.port)"
            issues.setBase(base)
            let store = try Store.inMemory(schema: try Schema(json: Data(Self.schema.utf8), file: "github.json"))
            var configuration = ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: try #require(URL(string: base))])
            configure(&configuration)
            try await body(ReplicaClient(engine: try SQLiteReplica(store: store), configuration: configuration), store)
        } teardown: {
            await server.stop()
        }
    }

    static func ids(_ store: Store) throws -> [Int64] {
        try store.rows("Issue").compactMap { if case .integer(let id) = $0.primaryKey { id } else { nil } }.sorted()
    }

    @Test("every page answers 304 without a Link header: one conditional request a page, none asked again; then a change on page 1 deletes the closed issue")
    func lastPageNotAskedTwice() async throws {
        let issues = GitHubIssues(1...5)
        try await Self.withAPI(issues) { client, store in
            let first = try await client.call("/issues", params: ["per_page": 2])
            #expect(first.pages == 3)
            #expect(first.changes["Issue"]?.inserted.integers == [1005, 1004, 1003, 1002, 1001])
            // Page 1's Link names page 3 as the last: pages 2 and 3 are asked for together, in either order.
            let log = issues.takeLog().map(\.description)
            #expect(log.first == "unconditional /issues?per_page=2 -> 200")
            #expect(log.dropFirst().sorted() == [
                "unconditional /issues?per_page=2&page=2 -> 200",
                "unconditional /issues?per_page=2&page=3 -> 200",
            ], "\(log)")

            // Page 3 (one issue, page 2 had two) was recorded as the last page; its 304 says it still is.
            let second = try await client.call("/issues", params: ["per_page": 2])
            #expect(second.notModified)
            #expect(second.status == 304)
            #expect(second.pages == 3)
            #expect(second.unchangedPages == 3)
            #expect(!second.isTruncated)
            #expect(issues.takeLog().map(\.description) == [
                "conditional /issues?per_page=2 -> 304",
                "conditional /issues?per_page=2&page=2 -> 304",
                "conditional /issues?per_page=2&page=3 -> 304",
            ])
            #expect(try Self.ids(store) == [1001, 1002, 1003, 1004, 1005])

            // Issue 4 is closed and issue 6 opened: page 1 changes, pages 2 and 3 do not. The traversal
            // ends at page 3's 304, complete, so issue 4 (on no page, vouched for by none) is deleted.
            issues.close(4)
            issues.openIssue(6)
            let third = try await client.call("/issues", params: ["per_page": 2])
            #expect(!third.notModified)
            #expect(third.status == 200)
            #expect(third.pages == 3)
            #expect(third.unchangedPages == 2)
            #expect(!third.isTruncated)
            #expect(third.changes["Issue"]?.inserted.integers == [1006])
            #expect(third.changes["Issue"]?.deleted.integers == [1004])
            #expect(third.changes["Issue"]?.updated.isEmpty != false)
            // Page 1's Link names page 3 as the last: pages 2 and 3 are asked for together, in either order.
            let changedLog = issues.takeLog().map(\.description)
            #expect(changedLog.first == "conditional /issues?per_page=2 -> 200")
            #expect(changedLog.dropFirst().sorted() == [
                "conditional /issues?per_page=2&page=2 -> 304",
                "conditional /issues?per_page=2&page=3 -> 304",
            ], "\(changedLog)")
            #expect(try Self.ids(store) == [1001, 1002, 1003, 1005, 1006])
        }
    }

    @Test("a full last page whose 304 has no Link header is asked again: oldest first, a new issue lands on a page after it")
    func fullLastPageAskedAgain() async throws {
        let issues = GitHubIssues(1...4)
        try await Self.withAPI(issues) { client, store in
            let params: [String: Parameter] = ["per_page": 2, "direction": "asc"]
            _ = try await client.call("/issues", params: params)
            _ = issues.takeLog()
            issues.openIssue(5)
            // Pages 1 and 2 are as they were; page 2, as long as page 1, cannot say alone that it is still the last.
            let result = try await client.call("/issues", params: params)
            #expect(result.pages == 3)
            #expect(result.unchangedPages == 1)
            #expect(result.changes["Issue"]?.inserted.integers == [1005])
            #expect(result.changes["Issue"]?.deleted.isEmpty != false)
            #expect(issues.takeLog().map(\.description) == [
                "conditional /issues?direction=asc&per_page=2 -> 304",
                "conditional /issues?direction=asc&per_page=2&page=2 -> 304",
                "unconditional /issues?direction=asc&per_page=2&page=2 -> 200",
                "unconditional /issues?direction=asc&per_page=2&page=3 -> 200",
            ])
            #expect(try Self.ids(store) == [1001, 1002, 1003, 1004, 1005])
        }
    }
}
