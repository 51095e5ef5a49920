import Foundation
import Hummingbird
import Replica
import ReplicaHTTP
import ReplicaOpenAPI
import ReplicaServer
import ReplicaTestSupport
import Testing

/// `replica schema infer --base-url` and `Schema.infer(baseURL:…)`: a live API's pages, fetched through
/// the real HTTP client with their `Link: rel="next"` pages, matched against route patterns, and the
/// schema inferred from them syncs the same pages with no key left over.
@Suite("replica schema infer: from a live API")
struct SchemaInferLiveTests {
    static let path = "/repos/octocat/Hello-World/issues"
    static let pattern = "/repos/:owner/:repo/issues"

    /// GitHub's issue pages (two pages of one issue, `Link` to the second) on a free port.
    static func withIssuesAPI(_ body: (String) async throws -> Void) async throws {
        let pages = GitHubIssuePages()
        let router = Router()
        router.get(.init(path)) { request, _ -> Response in pages.respond(request) }
        router.get("/nope") { _, _ -> Response in
            Response(status: .notFound, headers: [.contentType: "application/json"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}"#)))
        }
        let server = try await StreamingServer.start(router)
        let base = "http://127.0.0.1:\(server.port)"
        pages.setBase(base)
        try await withTeardown {
            try await body(base)
        } teardown: {
            await server.stop()
        }
    }

    @Test("Schema.infer reads every page, makes :owner and :repo scope attributes, and its schema syncs the pages with no unmapped key and no change the second time")
    func swiftAPI() async throws {
        try await Self.withIssuesAPI { base in
            let transport = HTTPTransport()
            let url = try #require(URL(string: base))
            let inferred = try await Schema.infer(name: "github", baseURL: url, paths: [Self.path], routes: [Self.pattern],
                                                  transport: transport)
            #expect(inferred.schema.entities.map(\.name) == ["Issue", "User", "Label"])
            #expect(inferred.schema.routes.map(\.path) == [Self.pattern])
            let issue = try inferred.schema.requireEntity("Issue")
            // Scope attributes from the pattern; both pages' issues seen (2 objects: never null in 2 → not null).
            #expect(issue.attribute(named: "owner")?.type == .string)
            #expect(issue.attribute(named: "repo")?.type == .string)
            #expect(issue.attribute(named: "number")?.isNullable == false)
            #expect(issue.relationships.map(\.name).contains("user"))
            #expect(inferred.notes.allSatisfy { $0.place.hasPrefix(base + Self.path) }, "\(inferred.notes)")

            // The inferred schema syncs what it was inferred from, through the same client.
            let engine = try SQLiteReplica(store: Store.inMemory(schema: inferred.schema))
            let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(transport: transport, baseURLs: [.production: url]))
            let first = try await client.call(Self.path)
            #expect(first.pages == 2)
            #expect(first.sync.ignoredKeys.map(\.description) == [])
            #expect(try engine.store.rows("Issue").map { $0["owner"] } == [.string("octocat"), .string("octocat")])
            let second = try await client.call(Self.path)
            #expect(second.changes.isEmpty, "\(second.changes)")
            // The API's third answer has a key no sample had: reported, not dropped in silence.
            let third = try await client.call(Self.path)
            #expect(third.sync.ignoredKeys.map(\.description) == ["Issue.milestone × 1 (first at /0/milestone)"])

            // One page only with maxPages 1: a key seen once is not "never null in several".
            var one = SchemaInference(name: "github")
            #expect(try await one.addPath(Self.path, baseURL: url, routes: [Self.pattern], transport: transport, maxPages: 1) == 1)
            #expect(try one.infer().schema.requireEntity("Issue").attribute(named: "number")?.isNullable == true)

            try await transport.shutdown()
        }
    }

    @Test("replica schema infer --base-url: one line per path, the schema written; an error status names the URL and shows the body")
    func command() async throws {
        try await Self.withIssuesAPI { base in
            let directory = try TemporaryDirectory("replica-infer-live")
            defer { directory.remove() }
            let schema = directory.path("github.json")
            let inferred = try await ChildProcess.run(ChildProcess.replica, [
                "schema", "infer", "--base-url", base, "--route", Self.pattern, "--header", "Authorization: Bearer t",
                Self.path, "-o", schema,
            ])
            #expect(inferred.status == 0, "\(inferred.stderr)")
            let lines = inferred.stderr.split(separator: "\n").map(String.init)
            #expect(lines.first == "fetched \(Self.path): 2 pages (route \(Self.pattern))")
            #expect(lines.last == "wrote \(schema): 3 entities, 1 route")
            #expect(inferred.stdout == "")

            let synced = try await ChildProcess.run(ChildProcess.replica, [
                "sync", "--db", directory.path("cache.sqlite"), "--schema", schema, "--base-url", base, Self.path,
            ])
            #expect(synced.status == 0, "\(synced.stderr)")
            #expect(synced.stdout == "\(Self.path): 200, Issue: inserted 2 · User: inserted 2 · Label: inserted 1 (5 objects, 2 pages)\n")
            #expect(synced.stderr == "")

            let missing = try await ChildProcess.run(ChildProcess.replica, ["schema", "infer", "--base-url", base, "/nope"])
            #expect(missing.status == 1)
            #expect(missing.stderr == #"Error: GET \#(base)/nope: HTTP 404: {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}"# + "\n")

            let bad = try await ChildProcess.run(ChildProcess.replica, ["schema", "infer", "--base-url", base, "issues.json"])
            #expect(bad.status == 64)
            #expect(bad.stderr.contains("with --base-url, each argument is a path starting with /, not 'issues.json'"), "\(bad.stderr)")
            let noBase = try await ChildProcess.run(ChildProcess.replica, ["schema", "infer", "--max-pages", "2", "issues.json"])
            #expect(noBase.stderr.contains("--header and --max-pages need --base-url"), "\(noBase.stderr)")
            let malformed = directory.path("issues.json")
            try Data(#"[{"id": 1, "title": "a"}, {"id": 2,, "title": "b"}]"#.utf8).write(to: URL(fileURLWithPath: malformed))
            let broken = try await ChildProcess.run(ChildProcess.replica, ["schema", "infer", malformed])
            #expect(broken.status == 1)
            #expect(broken.stderr == "Error: \(malformed): byte 35 (line 1, column 36): unexpected ',': expected a string key after ','\n")
        }
    }
}

/// An OpenAPI document to a running mock of its API, and a client syncing from it over HTTP.
@Suite("replica schema infer --openapi: the pet store served and synced")
struct OpenAPIMockTests {
    static let petStore = packageRoot.appendingPathComponent("Schemas/openapi/petstore.yaml")

    @Test("the imported pet store's mock answers the document's paths, and the client syncs them with no unmapped key")
    func servedAndSynced() async throws {
        let imported = try OpenAPISchemaImport.schema(contentsOf: Self.petStore)
        let server = try await MockServer.start(schema: imported.schema)
        let transport = HTTPTransport()
        try await withTeardown {
            _ = try await server.load(json: .array([
                ["id": 10, "name": "doggie", "photoUrls": ["https://example.com/d.png"], "status": "available",
                 "tags": [["id": 1, "name": "friendly"]]],
                ["id": 11, "name": "kitty", "photoUrls": [], "status": "sold"],
            ]), into: "pets")
            let url = try #require(URL(string: server.baseURL))
            let engine = try SQLiteReplica(store: Store.inMemory(schema: imported.schema))
            let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(transport: transport, baseURLs: [.production: url]))
            let available = try await client.call("/pet/findByStatus?status=available")
            #expect(available.sync.ignoredKeys.map(\.description) == [])
            #expect(try engine.store.rows("Pet").map(\.primaryKey) == [.integer(10)])
            #expect(try engine.store.rows("Tag").map { $0["name"] } == [.string("friendly")])
            let kitty = try await client.call("/pet/11")
            #expect(kitty.sync.ignoredKeys.map(\.description) == [])
            #expect(try engine.store.rows("Pet").map(\.primaryKey) == [.integer(10), .integer(11)])
            // Unchanged upstream: the same pages change nothing.
            #expect(try await client.call("/pet/findByStatus?status=available").changes.isEmpty)
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
        }
    }

    @Test("replica schema infer --openapi writes the schema; a Swagger 2.0 document and mixed options are refused, saying why")
    func command() async throws {
        let directory = try TemporaryDirectory("replica-openapi")
        defer { directory.remove() }
        let output = directory.path("petstore.json")
        let imported = try await ChildProcess.run(ChildProcess.replica, ["schema", "infer", "--openapi", Self.petStore.path, "-o", output])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.split(separator: "\n").last == "wrote \(output): 6 entities, 17 routes")
        #expect(imported.stderr.split(separator: "\n").filter { $0.hasPrefix("note: ") }.count == 7)
        #expect(try Schema(contentsOf: URL(fileURLWithPath: output)).entities.map(\.name).sorted()
                    == ["Category", "Customer", "Order", "Pet", "Tag", "User"])

        let swagger = directory.path("old.json")
        try Data(#"{"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}}"#.utf8).write(to: URL(fileURLWithPath: swagger))
        let refused = try await ChildProcess.run(ChildProcess.replica, ["schema", "infer", "--openapi", swagger])
        #expect(refused.status == 1)
        #expect(refused.stderr.hasPrefix("Error: \(swagger): /swagger: a Swagger 2.0 document"), "\(refused.stderr)")

        let mixed = try await ChildProcess.run(ChildProcess.replica, ["schema", "infer", "--openapi", swagger, "people.json"])
        #expect(mixed.status == 64)
        #expect(mixed.stderr.contains("--openapi reads one document: give no sample files"), "\(mixed.stderr)")
    }
}
