import Foundation
import Hummingbird
import NIOCore
import Replica
import ReplicaHTTP
import ReplicaTestSupport
import Testing

/// A git hosting API's references as its REST documentation shows them ("list matching
/// references", "get a reference", "update a reference", "delete a reference"), served over HTTP
/// from a table keyed by (owner, repo, ref): the objects name neither owner nor repository.
final class RefsAPI: Sendable {
    struct Key: Hashable, Comparable {
        var owner: String, repo: String, ref: String
        static func < (a: Key, b: Key) -> Bool { (a.owner, a.repo, a.ref) < (b.owner, b.repo, b.ref) }
    }

    let refs = Locked<[Key: String]>([:])
    /// The paths requests asked for, as sent (percent-encoding kept).
    let requests = Locked<[String]>([])

    static func object(_ key: Key, sha: String) -> JSONValue {
        let url = "https://api.example.com/repos/\(key.owner)/\(key.repo)/git/\(key.ref)"
        return .object(["ref": .string(key.ref), "node_id": .string("MDM6UmVm\(key.ref.count)"), "url": .string(url),
                        "object": .object(["sha": .string(sha), "type": .string("commit"),
                                           "url": .string("https://api.example.com/repos/\(key.owner)/\(key.repo)/git/commits/\(sha)")])])
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(string: value.serialized())))
    }

    /// The key of `/repos/:owner/:repo/git/refs/<ref, percent-encoded>`.
    static func key(_ request: Request) -> Key? {
        let parts = request.uri.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard parts.count == 6, parts[0] == "repos", parts[3] == "git", parts[4] == "refs",
              let ref = parts[5].removingPercentEncoding else { return nil }
        return Key(owner: parts[1], repo: parts[2], ref: ref)
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/repos/:owner/:repo/git/refs") { request, context in
            self.requests.withLock { $0.append("GET " + request.uri.path) }
            let owner = context.parameters.get("owner") ?? "", repo = context.parameters.get("repo") ?? ""
            let listed = self.refs.withLock { $0 }.filter { $0.key.owner == owner && $0.key.repo == repo }
            return Self.json(.array(listed.keys.sorted().compactMap { key in listed[key].map { Self.object(key, sha: $0) } }))
        }
        router.get("/repos/:owner/:repo/git/refs/**") { request, _ in
            self.requests.withLock { $0.append("GET " + request.uri.path) }
            guard let key = Self.key(request), let sha = self.refs.withLock({ $0[key] }) else {
                return Self.json(["message": "Not Found"], status: .notFound)
            }
            return Self.json(Self.object(key, sha: sha))
        }
        router.put("/repos/:owner/:repo/git/refs/**") { request, _ in
            self.requests.withLock { $0.append("PUT " + request.uri.path) }
            let body = try await request.body.collect(upTo: 1 << 20)
            guard let key = Self.key(request), let json = try? JSONValue(parsing: String(buffer: body)),
                  case .string(let sha)? = json["object"]?["sha"] ?? json["sha"] else {
                return Self.json(["message": "Validation Failed"], status: .unprocessableContent)
            }
            self.refs.withLock { $0[key] = sha }
            return Self.json(Self.object(key, sha: sha))
        }
        router.delete("/repos/:owner/:repo/git/refs/**") { request, _ in
            self.requests.withLock { $0.append("DELETE " + request.uri.path) }
            guard let key = Self.key(request), self.refs.withLock({ $0.removeValue(forKey: key) }) != nil else {
                return Self.json(["message": "Not Found"], status: .notFound)
            }
            return Response(status: .noContent)
        }
        return router
    }
}

@Suite("composite keys over HTTP")
struct CompositeKeyHTTPTests {
    static let main = "aa218f56b14c9653891f9e74264a383fa43fefbd"
    static let spoon = "d0dd1f61b33d64e29d8bc1372a94ef6a2fee76a9"
    static let moved = "762941318ee16e59dabbacb1b4049eec22f0d303"

    static func key(_ repo: String, _ ref: String) -> AttributeValue {
        .compositeKey([.string("octocat"), .string(repo), .string(ref)])
    }

    static func stored(_ store: Store) throws -> [String] {
        try store.rows("Ref", sort: [.ascending("repo"), .ascending("ref")]).map {
            "\($0["repo"] ?? .null) \($0["ref"] ?? .null) \($0["sha"] ?? .null)"
        }
    }

    @Test("list, find, save and delete refs by (owner, repo, ref) through the HTTP client")
    func refsOverHTTP() async throws {
        let api = RefsAPI()
        api.refs.withLock {
            $0[.init(owner: "octocat", repo: "Hello-World", ref: "refs/heads/main")] = Self.main
            $0[.init(owner: "octocat", repo: "Hello-World", ref: "refs/heads/feature")] = Self.main
            $0[.init(owner: "octocat", repo: "Spoon-Knife", ref: "refs/heads/main")] = Self.spoon
        }
        let server = try await StreamingServer.start(api.router())
        let transport = HTTPTransport()
        try await withTeardown {
            let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/git-refs.json"))
            let store = try Store.inMemory(schema: schema)
            let base = try #require(URL(string: "http://127.0.0.1:\(server.port)"))
            var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: base])
            configuration.timeout = .seconds(20)
            let client = ReplicaClient(engine: try SQLiteReplica(store: store), configuration: configuration)

            let hello = try await client.call("/repos/octocat/Hello-World/git/refs")
            #expect(hello.sync.changes["Ref"]?.inserted.values == [Self.key("Hello-World", "refs/heads/feature"),
                                                                   Self.key("Hello-World", "refs/heads/main")])
            _ = try await client.call("/repos/octocat/Spoon-Knife/git/refs")
            #expect(try Self.stored(store) == ["Hello-World refs/heads/feature \(Self.main)",
                                               "Hello-World refs/heads/main \(Self.main)",
                                               "Spoon-Knife refs/heads/main \(Self.spoon)"])

            // find: the ref's slashes travel percent-encoded in one segment.
            api.refs.withLock { $0[.init(owner: "octocat", repo: "Hello-World", ref: "refs/heads/main")] = Self.moved }
            let found = try #require(try await client.find("Ref", id: Self.key("Hello-World", "refs/heads/main")))
            #expect(found.primaryKey == Self.key("Hello-World", "refs/heads/main"))
            #expect(found["sha"] == .string(Self.moved))
            #expect(api.requests.withLock { $0.last } == "GET /repos/octocat/Hello-World/git/refs/refs%2Fheads%2Fmain")
            #expect(try await client.find("Ref", id: Self.key("Hello-World", "refs/heads/gone")) == nil)

            // save: PUT to the ref's own path; the reply is stored under the whole key.
            let saved = try #require(try await client.save("Ref", ["owner": .string("octocat"), "repo": .string("Spoon-Knife"),
                                                                   "ref": .string("refs/heads/main"), "sha": .string(Self.moved)]))
            #expect(saved.primaryKey == Self.key("Spoon-Knife", "refs/heads/main"))
            #expect(api.requests.withLock { $0.last } == "PUT /repos/octocat/Spoon-Knife/git/refs/refs%2Fheads%2Fmain")
            #expect(try Self.stored(store) == ["Hello-World refs/heads/feature \(Self.main)",
                                               "Hello-World refs/heads/main \(Self.moved)",
                                               "Spoon-Knife refs/heads/main \(Self.moved)"])

            // delete: the server's and the stored row of that key only.
            try await client.delete("Ref", id: Self.key("Hello-World", "refs/heads/main"))
            #expect(api.requests.withLock { $0.last } == "DELETE /repos/octocat/Hello-World/git/refs/refs%2Fheads%2Fmain")
            #expect(try Self.stored(store) == ["Hello-World refs/heads/feature \(Self.main)",
                                               "Spoon-Knife refs/heads/main \(Self.moved)"])

            // A key of the wrong shape is refused before any request.
            let count = api.requests.withLock { $0.count }
            await #expect(throws: ClientError.self) { try await client.delete("Ref", id: .string("refs/heads/main")) }
            #expect(api.requests.withLock { $0.count } == count)

            // Stale deletion: the feature branch is gone upstream; Spoon-Knife keeps its main.
            api.refs.withLock { $0[.init(owner: "octocat", repo: "Hello-World", ref: "refs/heads/feature")] = nil }
            let emptied = try await client.call("/repos/octocat/Hello-World/git/refs")
            #expect(emptied.sync.changes["Ref"]?.deleted.values == [Self.key("Hello-World", "refs/heads/feature")])
            #expect(try Self.stored(store) == ["Spoon-Knife refs/heads/main \(Self.moved)"])
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
        }
    }
}
