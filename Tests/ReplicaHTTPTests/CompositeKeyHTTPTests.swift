import Foundation
import Hummingbird
import NIOCore
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaServerPostgres
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
            configuration.timeout = .seconds(60)  // a hang guard: heads have taken over 10 s in a loaded parallel run
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

/// `Schemas/git-refs.json` against the mock server (each of its stores), which addresses a ref by
/// its whole key: `/refs/:owner/:repo` lists a repository's refs, `/refs/:owner/:repo/:ref` is one.
/// Synced page by page (`Link: rel="next"`) through the real HTTP client into an SQLite replica.
@Suite("composite keys through the mock server")
struct CompositeKeyMockServerTests {
    /// The git-refs schema with the mock server's routes in place of the hosting API's.
    static func schema() throws -> Schema {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("Schemas/git-refs.json"), encoding: .utf8)
        let entities = text.range(of: #""routes": ["#).map { text[..<$0.lowerBound] } ?? ""
        return try Schema(json: Data((entities + #""routes": [{"path": "/refs/:owner/:repo", "target": "Ref", "stale": "delete"}, "#
                                      + #"{"path": "/refs/:owner/:repo/:ref", "target": "Ref"}]}"#).utf8))
    }

    static let seed = """
        [{"owner": "octocat", "repo": "Hello-World", "ref": "refs/heads/main", "node_id": "MDM6UmVmcmVmcy9oZWFkcy9tYWlu",
          "url": "https://api.example.com/repos/octocat/Hello-World/git/refs/heads/main",
          "object": {"sha": "\(CompositeKeyHTTPTests.main)", "type": "commit"}},
         {"owner": "octocat", "repo": "Hello-World", "ref": "refs/heads/feature", "node_id": "MDM6UmVmcmVmcy9oZWFkcy9mZWF0",
          "url": "https://api.example.com/repos/octocat/Hello-World/git/refs/heads/feature",
          "object": {"sha": "\(CompositeKeyHTTPTests.main)", "type": "commit"}},
         {"owner": "octocat", "repo": "Hello-World", "ref": "refs/tags/v1.0", "node_id": "MDM6UmVmcmVmcy90YWdzL3YxLjA=",
          "url": "https://api.example.com/repos/octocat/Hello-World/git/refs/tags/v1.0",
          "object": {"sha": "7fd1a60b01f91b314f59955a4e4d4e80d8edf11d", "type": "tag"}},
         {"owner": "octocat", "repo": "Spoon-Knife", "ref": "refs/heads/main", "node_id": "MDM6UmVmcmVmcy9oZWFkcy9tYWlo",
          "url": "https://api.example.com/repos/octocat/Spoon-Knife/git/refs/heads/main",
          "object": {"sha": "\(CompositeKeyHTTPTests.spoon)", "type": "commit"}}]
        """

    static func key(_ repo: String, _ ref: String) -> AttributeValue { CompositeKeyHTTPTests.key(repo, ref) }

    @Test("sync, find, save and delete refs by (owner, repo, ref) against the mock server", arguments: ["memory", "sqlite", "postgres"])
    func refsAgainstMockServer(kind: String) async throws {
        let schema = try Self.schema()
        let directory = try TemporaryDirectory("replica-refs")
        let refs = MockResource(entity: try schema.requireEntity("Ref"), in: schema)
        let server = try await MockServer.start(resources: [refs],
                                                options: MockServerOptions(store: try await NestedKeySyncTests.mockStore(kind, in: directory)))
        let transport = HTTPTransport()
        try await withTeardown {
            #expect(try await server.load(json: try JSONValue(parsing: Self.seed), into: "refs").loaded == 4)
            let store = try Store(path: directory.path("refs.sqlite"), schema: schema)
            let base = try #require(URL(string: server.baseURL))
            var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: base])
            configuration.timeout = .seconds(60)  // a hang guard: heads have taken over 10 s in a loaded parallel run
            let client = ReplicaClient(engine: try SQLiteReplica(store: store), configuration: configuration)

            // One repository, a ref a page: the Link header leads through three pages.
            let hello = try await client.call("/refs/octocat/Hello-World", params: ["_limit": 1])
            #expect(hello.pages == 3)
            #expect(hello.changes["Ref"]?.inserted.values == [Self.key("Hello-World", "refs/heads/feature"),
                                                              Self.key("Hello-World", "refs/heads/main"),
                                                              Self.key("Hello-World", "refs/tags/v1.0")])
            let spoon = try await client.call("/refs/octocat/Spoon-Knife")
            #expect(spoon.changes["Ref"]?.inserted.values == [Self.key("Spoon-Knife", "refs/heads/main")])
            #expect(try CompositeKeyHTTPTests.stored(store) == [
                "Hello-World refs/heads/feature \(CompositeKeyHTTPTests.main)", "Hello-World refs/heads/main \(CompositeKeyHTTPTests.main)",
                "Hello-World refs/tags/v1.0 7fd1a60b01f91b314f59955a4e4d4e80d8edf11d",
                "Spoon-Knife refs/heads/main \(CompositeKeyHTTPTests.spoon)"])

            // find: GET by the whole key (the ref percent-encoded); the other repository's main is not touched.
            let moved = try await server.options.store.modify(refs, id: ["octocat", "Hello-World", "refs/heads/main"],
                                                              values: ["object.sha": .string(CompositeKeyHTTPTests.moved)])
            #expect(moved?["object.sha"] == .string(CompositeKeyHTTPTests.moved))
            let found = try #require(try await client.find("Ref", id: Self.key("Hello-World", "refs/heads/main")))
            #expect(found["sha"] == .string(CompositeKeyHTTPTests.moved))
            #expect(try await client.find("Ref", id: Self.key("Hello-World", "refs/heads/gone")) == nil)

            // save: a PUT to the whole key updates one ref, and creates one the server lacks.
            let saved = try #require(try await client.save("Ref", [
                "owner": .string("octocat"), "repo": .string("Spoon-Knife"), "ref": .string("refs/heads/main"),
                "sha": .string(CompositeKeyHTTPTests.moved), "type": .string("commit"),
            ]))
            #expect(saved.primaryKey == Self.key("Spoon-Knife", "refs/heads/main"))
            #expect(try await server.options.store.object(refs, id: ["octocat", "Spoon-Knife", "refs/heads/main"])?["object.sha"]
                        == .string(CompositeKeyHTTPTests.moved))
            let branch = try #require(try await client.save("Ref", [
                "owner": .string("octocat"), "repo": .string("Spoon-Knife"), "ref": .string("refs/heads/new-branch"),
                "sha": .string(CompositeKeyHTTPTests.spoon), "type": .string("commit"),
            ]))
            #expect(branch.primaryKey == Self.key("Spoon-Knife", "refs/heads/new-branch"))
            #expect(try await server.options.store.object(refs, id: ["octocat", "Spoon-Knife", "refs/heads/new-branch"])?["object.sha"]
                        == .string(CompositeKeyHTTPTests.spoon))

            // delete: the server's ref and the stored row of that key only.
            try await client.delete("Ref", id: Self.key("Hello-World", "refs/heads/main"))
            #expect(try await server.options.store.object(refs, id: ["octocat", "Hello-World", "refs/heads/main"]) == nil)
            #expect(try CompositeKeyHTTPTests.stored(store) == [
                "Hello-World refs/heads/feature \(CompositeKeyHTTPTests.main)",
                "Hello-World refs/tags/v1.0 7fd1a60b01f91b314f59955a4e4d4e80d8edf11d",
                "Spoon-Knife refs/heads/main \(CompositeKeyHTTPTests.moved)",
                "Spoon-Knife refs/heads/new-branch \(CompositeKeyHTTPTests.spoon)"])

            // Deleted on the server behind the client's back: the repository's next sync deletes it,
            // inside its scope only.
            #expect(try await server.options.store.delete(refs, id: ["octocat", "Hello-World", "refs/heads/feature"]))
            let resynced = try await client.call("/refs/octocat/Hello-World", params: ["_limit": 1])
            #expect(resynced.changes["Ref"]?.deleted.values == [Self.key("Hello-World", "refs/heads/feature")])
            #expect(resynced.changes["Ref"]?.inserted.values ?? [] == [])
            #expect(try store.count("Ref") == 3)
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
            directory.remove()
        }
    }
}
