import Foundation
import HTTPTypes
import Hummingbird
import AsyncHTTPClient
import NIOCore
import Replica
import ReplicaTestSupport
import Testing

/// Two pages of ``GitHubFixture/issues`` (one issue each, `Link: <…?page=2>; rel="next"`), counting
/// the first pages asked for; from the third cycle on the first issue has a key it did not have.
/// `@unchecked Sendable`: guarded by `lock`.
final class GitHubIssuePages: @unchecked Sendable {
    private let lock = NSLock()
    private var base = ""
    private var cycles = 0

    func setBase(_ url: String) { lock.withLock { base = url } }
    var cycleCount: Int { lock.withLock { cycles } }

    func respond(_ request: Request) -> Response {
        lock.withLock {
            guard let all = try? JSONValue(parsing: GitHubFixture.issues), case .array(let issues) = all else {
                return Response(status: .internalServerError)
            }
            var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
            let body: JSONValue
            if request.uri.queryParameters["page"] == "2" {
                body = .array([issues[1]])
            } else {
                cycles += 1
                var first = issues[0]
                if cycles >= 3, case .object(var object) = first {
                    object["milestone"] = .null
                    first = .object(object)
                }
                body = .array([first])
                if let name = HTTPField.Name("Link") {
                    headers[name] = "<\(base)/repos/octocat/Hello-World/issues?page=2>; rel=\"next\""
                }
            }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body.serialized())))
        }
    }
}

@Suite("replica sync: unmapped keys of a real API's pages")
struct UnmappedKeyCommandTests {
    static let path = "/repos/octocat/Hello-World/issues"

    /// The warnings of the first sync of both pages (every key of the first page's objects is first seen there).
    static func firstWarnings(_ page1: String) -> String {
        """
        warning: GET \(page1): Issue: 18 keys matched no attribute and were not stored: author_association × 2 (first at /0/author_association), \
        comments × 2 (first at /0/comments), comments_url × 2 (first at /0/comments_url), html_url × 2 (first at /0/html_url), \
        labels × 2 (first at /0/labels), labels_url × 2 (first at /0/labels_url), locked × 2 (first at /0/locked), \
        repository_url × 2 (first at /0/repository_url), url × 2 (first at /0/url)
        warning: GET \(page1): User: 10 keys matched no attribute and were not stored: avatar_url × 2 (first at /0/user/avatar_url), \
        gravatar_id × 2 (first at /0/user/gravatar_id), html_url × 2 (first at /0/user/html_url), \
        site_admin × 2 (first at /0/user/site_admin), url × 2 (first at /0/user/url)
        warning: 5 of these keys end in _url: "ignoreKeys": ["*_url"] drops them without a warning; "unmappedKeys": "keep" stores unmapped keys as JSON in a column
        warning: --strict makes these errors (nothing is written)

        """
    }

    @Test("--every warns about each key once per process, and about a new key when it appears; --strict lists every key")
    func everyWarnsOnce() async throws {
        let pages = GitHubIssuePages()
        let router = Router()
        router.get(.init(Self.path)) { request, _ -> Response in pages.respond(request) }
        let server = try await StreamingServer.start(router)
        let base = "http://127.0.0.1:\(server.port)"
        pages.setBase(base)
        let directory = try TemporaryDirectory("replica-unmapped")
        try await withTeardown {
            let schema = directory.path("github.json")
            try Data(GitHubFixture.schema(ignoreKeys: ["node_id"]).utf8).write(to: URL(fileURLWithPath: schema))
            let out = directory.path("out")
            let err = directory.path("err")
            _ = FileManager.default.createFile(atPath: out, contents: nil)
            _ = FileManager.default.createFile(atPath: err, contents: nil)
            let sync = Process()
            sync.executableURL = URL(fileURLWithPath: ChildProcess.replica)
            sync.arguments = ["sync", "--db", directory.path("github.sqlite"), "--schema", schema, "--base-url", base,
                              "--every", "0.05", Self.path]
            sync.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
            sync.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
            try sync.run()
            defer { if sync.isRunning { sync.terminate() } }
            // Each sync prints its line, then the path's status line ("…: ok 0.0 s ago (…), next in 0.1 s").
            func syncLines() throws -> [Substring] {
                try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("\(Self.path): ok ") }
            }
            // Four cycles done: the fourth's first page asked for and its line printed.
            try await waitUntil("four lines", timeout: .seconds(30)) { try syncLines().count >= 4 }
            // Awaited, not waitUntilExit(): the server the sync waits on runs in this process.
            sync.interrupt()
            try await waitUntil("the sync's exit", timeout: .seconds(30)) { !sync.isRunning }
            #expect(sync.terminationStatus == 0)
            #expect(try syncLines().prefix(2) == [
                "\(Self.path): 200, Issue: inserted 2 · User: inserted 2 (4 objects, 2 pages)",
                "\(Self.path): 200, inserted 0, updated 0, deleted 0 (4 objects, 2 pages)",
            ])
            let page1 = "\(base)\(Self.path)"
            let stderr = try String(contentsOfFile: err, encoding: .utf8)
            #expect(stderr == Self.firstWarnings(page1) + """
                warning: GET \(page1): Issue: 1 key matched no attribute and was not stored: milestone × 1 (first at /0/milestone)
                warning: --strict makes these errors (nothing is written)

                """, "\(stderr)")

            let strictDB = directory.path("strict.sqlite")
            let strict = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", strictDB, "--schema", schema,
                                                                          "--base-url", base, "--strict", Self.path])
            #expect(strict.status == 1)
            #expect(strict.stderr == "Error: \(Self.path): GET \(page1): 15 keys matched no attribute or entity: Issue: author_association × 1 "
                    + "(first at /0/author_association), comments × 1 (first at /0/comments), comments_url × 1 (first at /0/comments_url), "
                    + "html_url × 1 (first at /0/html_url), labels × 1 (first at /0/labels), labels_url × 1 (first at /0/labels_url), "
                    + "locked × 1 (first at /0/locked), milestone × 1 (first at /0/milestone), repository_url × 1 (first at /0/repository_url), "
                    + "url × 1 (first at /0/url); User: avatar_url × 1 (first at /0/user/avatar_url), gravatar_id × 1 "
                    + "(first at /0/user/gravatar_id), html_url × 1 (first at /0/user/html_url), site_admin × 1 (first at /0/user/site_admin), "
                    + "url × 1 (first at /0/user/url) (strict: nothing was written)\n", "\(strict.stderr)")
            #expect(!FileManager.default.fileExists(atPath: strictDB))

            // keep: the same pages stored, nothing warned, the kept keys readable with `replica query`.
            let keepSchema = directory.path("keep.json")
            try Data(GitHubFixture.schema(issueKeys: "keep", userKeys: "ignore", ignoreKeys: ["node_id", "*_url"]).utf8)
                .write(to: URL(fileURLWithPath: keepSchema))
            let keepDB = directory.path("keep.sqlite")
            let kept = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", keepDB, "--schema", keepSchema,
                                                                        "--base-url", base, Self.path])
            #expect(kept.status == 0)
            #expect(kept.stderr == "", "\(kept.stderr)")
            let query = try await ChildProcess.run(ChildProcess.replica, ["query", "--db", keepDB, "Issue", "--sort", "id",
                                                                         "--format", "ndjson"])
            #expect(query.stdout == """
                {"id":1,"number":1347,"title":"Found a bug","state":"open","userID":1,"unmapped":{"url":"https://api.github.com/repos/octocat/Hello-World/issues/1347","locked":false,"comments":0,"labels":[{"id":208045946,"name":"bug"}],"author_association":"COLLABORATOR","milestone":null}}
                {"id":2,"number":1348,"title":"Typo","state":"closed","userID":2,"unmapped":{"url":"https://api.github.com/repos/octocat/Hello-World/issues/1348","locked":true,"comments":3,"labels":[],"author_association":"NONE"}}

                """, "\(query.stdout)")
        } teardown: {
            directory.remove()
            await server.stop()
        }
    }

    @Test("replica serve of a keep entity serves its objects whole; synced, the kept keys round-trip")
    func mockServerRoundTrip() async throws {
        let directory = try TemporaryDirectory("replica-unmapped")
        defer { directory.remove() }
        let schema = directory.path("github.json")
        try Data(#"""
            {"name": "github", "entities": {"User": {"table": "users", "unmappedKeys": "keep",
             "attributes": {"id": "integer", "login": "string", "type": "string"}}}, "routes": [{"path": "/users", "target": "User"}]}
            """#.utf8).write(to: URL(fileURLWithPath: schema))
        let data = directory.url("data.json")
        try Data("{\"users\": \(GitHubFixture.users)}".utf8).write(to: data)
        let (serve, line) = try await SyncCommandTests.serve(schema: schema, data: data)
        defer { if serve.isRunning { serve.interrupt() }; serve.waitUntilExit() }
        let base = String(line.dropFirst("Listening on ".count))

        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + "/users"), timeout: .seconds(10))
        let served = try JSONValue(parsing: Array(buffer: try await response.body.collect(upTo: 1 << 20)))
        // Served as loaded: the mapped keys first, then the kept ones in their order.
        #expect(served[0]?.serialized() == #"{"id":1,"login":"octocat","type":"User","node_id":"MDQ6VXNlcjE=","#
                + #""avatar_url":"https://github.com/images/error/octocat_happy.gif","gravatar_id":"","#
                + #""url":"https://api.github.com/users/octocat","html_url":"https://github.com/octocat","site_admin":false}"#)

        let db = directory.path("github.sqlite")
        let sync = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", db, "--schema", schema, "--base-url", base, "/users"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stderr == "")
        let store = try Store(path: db)
        #expect(try store.count("User", where: "unmapped = ?", arguments: [.string(#"{"node_id":"MDQ6VXNlcjE=","#
            + #""avatar_url":"https://github.com/images/error/octocat_happy.gif","gravatar_id":"","#
            + #""url":"https://api.github.com/users/octocat","html_url":"https://github.com/octocat","site_admin":false}"#)]) == 1)
        let map = try SQLiteReplica(store: store).mapping.requireMap("User")
        let stored = try store.rows("User").map { JSONValue.object(map.encode($0)) }
        #expect(stored == served.arrayValue)
    }
}
