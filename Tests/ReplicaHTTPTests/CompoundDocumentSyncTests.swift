import Foundation
import HTTPTypes
import Hummingbird
import Replica
import ReplicaHTTP
import ReplicaPostgres
import ReplicaServer
import ReplicaTestSupport
import Testing

/// JSON:API compound documents, paged by `links.next` as jsonapi.org documents them, served over
/// loopback and synced by the real HTTP client with `Schemas/jsonapi.json` on both stores:
/// articles in `data`, their authors and comments in `included`, people and comments sharing ids.
@Suite("JSON:API compound documents over HTTP on both stores", .serialized)
struct CompoundDocumentSyncTests {
    static let articleCount = 5
    static let pageSize = 2

    /// Article `n` (1-based): written by person `n % 2 + 1`, with comment `n` by person `(n + 1) % 2 + 1`.
    static func article(_ n: Int) -> String {
        #"{"type": "articles", "id": "\#(n)", "attributes": {"title": "Article \#(n)"}, "#
            + #""relationships": {"author": {"links": {"related": "/articles/\#(n)/author"}, "data": {"type": "people", "id": "\#(n % 2 + 1)"}}, "#
            + #""comments": {"data": [{"type": "comments", "id": "\#(n)"}]}}, "links": {"self": "/articles/\#(n)"}}"#
    }

    static func included(_ range: ClosedRange<Int>) -> String {
        var people = Set<Int>()
        var objects: [String] = []
        for n in range {
            for person in [n % 2 + 1, (n + 1) % 2 + 1] where people.insert(person).inserted {
                objects.append(#"{"type": "people", "id": "\#(person)", "attributes": {"firstName": "Person \#(person)", "lastName": "L", "twitter": null}}"#)
            }
            objects.append(#"{"type": "comments", "id": "\#(n)", "attributes": {"body": "Comment \#(n)"}, "#
                           + #""relationships": {"author": {"data": {"type": "people", "id": "\#((n + 1) % 2 + 1)"}}}}"#)
        }
        return "[" + objects.joined(separator: ", ") + "]"
    }

    /// `/articles?page[number]=N`: the page's articles, what they refer to in `included`, and `links.next`.
    final class Fixture: Sendable {
        let server: StreamingServer
        let failing: Locked<Bool>
        init(server: StreamingServer, failing: Locked<Bool>) {
            self.server = server
            self.failing = failing
        }
        var base: String { "http://127.0.0.1:\(server.port)" }

        static func start() async throws -> Fixture {
            let failing = Locked(false)
            let port = Locked(0)
            let router = Router()
            router.get("/articles") { request, _ -> Response in
                let items = URLComponents(string: request.uri.description)?.queryItems ?? []
                let page = items.first { $0.name == "page[number]" }.flatMap { $0.value.flatMap(Int.init) } ?? 1
                var fields = HTTPFields()
                fields[.contentType] = "application/vnd.api+json"
                if page > 1, failing.withLock({ $0 }) {
                    return Response(status: .serviceUnavailable, headers: fields,
                                    body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"errors": [{"status": "503", "title": "Unavailable"}]}"#)))
                }
                let first = (page - 1) * CompoundDocumentSyncTests.pageSize + 1
                let last = min(first + CompoundDocumentSyncTests.pageSize - 1, CompoundDocumentSyncTests.articleCount)
                let base = "http://127.0.0.1:\(port.withLock { $0 })/articles"
                let next = last < CompoundDocumentSyncTests.articleCount ? #""\#(base)?page%5Bnumber%5D=\#(page + 1)""# : "null"
                let body = #"{"links": {"self": "\#(base)?page%5Bnumber%5D=\#(page)", "next": \#(next)}, "#
                    + #""data": [\#((first...last).map(CompoundDocumentSyncTests.article).joined(separator: ", "))], "#
                    + #""included": \#(CompoundDocumentSyncTests.included(first...last)), "meta": {"total": \#(CompoundDocumentSyncTests.articleCount)}}"#
                return Response(status: .ok, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
            }
            let server = try await StreamingServer.start(router)
            port.withLock { $0 = server.port }
            return Fixture(server: server, failing: failing)
        }
    }

    static func open(_ kind: String, _ directory: TemporaryDirectory) async throws -> any ReplicaStore {
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/jsonapi.json"))
        if kind == "sqlite" { return try SQLiteReplica(store: Store(path: directory.path("jsonapi.sqlite"), schema: schema)) }
        return try await PostgresReplica.open(url: try await PostgresCluster.start().makeDatabase(), schema: schema)
    }

    static func rows(_ store: any ReplicaStore, _ entity: String, _ columns: [String]) async throws -> [String] {
        try await store.rows(RowQuery(entity, sort: [SortKey("id")])).map { row in
            columns.map { column -> String in
                if case .string(let text)? = row[column] { return text }
                return "nil"
            }.joined(separator: " ")
        }
    }

    static func client(_ store: any ReplicaStore, _ fixture: Fixture, maxPages: Int? = nil) throws -> ReplicaClient {
        var configuration = ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: try #require(URL(string: fixture.base))])
        configuration.timeout = .seconds(60)
        if let maxPages { configuration.maxPages = maxPages }
        return ReplicaClient(store: store, configuration: configuration)
    }

    /// An article no page holds, stored by an earlier sync.
    static func seedStale(_ store: any ReplicaStore) async throws {
        let session = try store.session(.entity("Article"), source: "seed")
        _ = try await session.stage(body: Data(#"[{"id": "99", "title": "stale"}]"#.utf8), source: "seed")
        _ = try await session.commit(complete: false)
    }

    @Test("every page's articles, authors and comments are stored; people and comments sharing ids stay apart; the stale article goes",
          arguments: ["sqlite", "postgres"])
    func completeSync(kind: String) async throws {
        let fixture = try await Fixture.start()
        let directory = try TemporaryDirectory("replica-jsonapi")
        let store = try await Self.open(kind, directory)
        try await withTeardown {
            try await Self.seedStale(store)
            let result = try await Self.client(store, fixture).call("/articles")
            #expect(result.pages == 3)
            #expect(result.unfollowedPages == nil)
            #expect(result.sync.ignoredKeys.isEmpty, "\(result.sync.ignoredKeys)")
            #expect(try await Self.rows(store, "Article", ["id", "title", "authorID"])
                    == ["1 Article 1 2", "2 Article 2 1", "3 Article 3 2", "4 Article 4 1", "5 Article 5 2"])
            #expect(result.changes["Article"]?.deleted.map(\.description) == ["99"])
            #expect(try await Self.rows(store, "Person", ["id", "firstName"]) == ["1 Person 1", "2 Person 2"])
            #expect(try await Self.rows(store, "Comment", ["id", "body", "authorID"])
                    == ["1 Comment 1 1", "2 Comment 2 2", "3 Comment 3 1", "4 Comment 4 2", "5 Comment 5 1"])
            #expect(result.changes["Person"]?.inserted.count == 2)
            #expect(result.changes["Comment"]?.inserted.count == 5)

            // Again: nothing changed, nothing deleted (people are never the route's to delete).
            let again = try await Self.client(store, fixture).call("/articles")
            #expect(again.changes.isEmpty, "\(again.changes)")
            #expect(try await Self.rows(store, "Person", ["id"]) == ["1", "2"])
        } teardown: {
            await store.close()
            await fixture.server.stop()
            directory.remove()
        }
    }

    @Test("the mock server started from Schemas/jsonapi.json answers JSON:API documents the client syncs; a JSON:API POST creates",
          arguments: ["sqlite", "postgres"])
    func mockServer(kind: String) async throws {
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/jsonapi.json"))
        var options = MockServerOptions(port: 0)
        options.seeds = [.json(try JSONValue(parsing: Data(#"""
            {"people": [{"id": "9", "firstName": "Dan", "lastName": "Gebhardt", "twitter": "dgeb"}],
             "articles": [{"id": "1", "title": "JSON:API paints my bikeshed!", "authorID": "9"},
                          {"id": "2", "title": "Rails is Omakase", "authorID": null},
                          {"id": "3", "title": "Third", "authorID": "9"}]}
            """#.utf8)))]
        let server = try await MockServer.start(schema: schema, options: options)
        let directory = try TemporaryDirectory("replica-jsonapi-mock")
        let store = try await Self.open(kind, directory)
        try await withTeardown {
            var configuration = ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: try #require(URL(string: server.baseURL))])
            configuration.timeout = .seconds(60)
            let client = ReplicaClient(store: store, configuration: configuration)
            let page = try await client.call("/articles", params: ["page[size]": .value(.string("2"))])
            #expect(page.pages == 2)
            #expect(page.unfollowedPages == nil)
            #expect(page.sync.ignoredKeys.isEmpty, "\(page.sync.ignoredKeys)")
            #expect(try await Self.rows(store, "Article", ["id", "title", "authorID"])
                    == ["1 JSON:API paints my bikeshed! 9", "2 Rails is Omakase nil", "3 Third 9"])
            _ = try await client.call("/people")
            #expect(try await Self.rows(store, "Person", ["id", "twitter"]) == ["9 dgeb"])

            // A JSON:API body is read back into the resource; the answer is the new resource.
            let post = ClientRequest(method: .post, url: try #require(URL(string: server.baseURL + "/articles")),
                                     headers: ["Content-Type": "application/vnd.api+json"],
                                     body: .bytes(Array(#"{"data": {"type": "articles", "id": "4", "attributes": {"title": "Fourth"}, "relationships": {"author": {"data": {"type": "people", "id": "9"}}}}}"#.utf8)))
            let response = try await HTTPTransport().send(post)
            #expect(response.status == 201)
            let created = String(decoding: try await response.body.collect(upTo: 1 << 20), as: UTF8.self)
            #expect(created == #"{"data":{"type":"articles","id":"4","attributes":{"title":"Fourth"},"#
                    + #""relationships":{"author":{"data":{"type":"people","id":"9"}}}}}"# + "\n")
            _ = try await client.call("/articles/4")
            #expect(try await Self.rows(store, "Article", ["id", "authorID"]).last == "4 9")
        } teardown: {
            await store.close()
            await server.stop()
            directory.remove()
        }
    }

    @Test("a sync stopped after page 1, or failing on page 2, deletes nothing", arguments: ["sqlite", "postgres"])
    func interruptedSync(kind: String) async throws {
        let fixture = try await Fixture.start()
        let directory = try TemporaryDirectory("replica-jsonapi")
        let store = try await Self.open(kind, directory)
        try await withTeardown {
            try await Self.seedStale(store)
            fixture.failing.withLock { $0 = true }
            let error = await #expect(throws: ClientError.self) { try await Self.client(store, fixture).call("/articles") }
            #expect(error?.status == 503)
            #expect(try await Self.rows(store, "Article", ["id"]) == ["99"])
            #expect(try await Self.rows(store, "Comment", ["id"]) == [])
            fixture.failing.withLock { $0 = false }

            let truncated = try await Self.client(store, fixture, maxPages: 1).call("/articles")
            #expect(truncated.isTruncated)
            #expect(try await Self.rows(store, "Article", ["id"]) == ["1", "2", "99"])
            #expect(try await Self.rows(store, "Comment", ["id"]) == ["1", "2"])
        } teardown: {
            await store.close()
            await fixture.server.stop()
            directory.remove()
        }
    }
}
