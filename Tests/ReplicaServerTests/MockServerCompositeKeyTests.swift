import Foundation
import Replica
import ReplicaServer
import ReplicaTestSupport
import Testing

/// The mock server addresses an object of a composite-key entity by its whole key, one path segment
/// a part (`/refs/:owner/:repo/:ref`), and lists or creates within the leading parts
/// (`/refs/:owner/:repo`): refs/heads/main of two repositories are two objects, on every store.
@Suite("MockServer: composite keys")
struct MockServerCompositeKeyTests {
    static let stores = ["memory", "sqlite", "postgres"]

    static var refs: MockResource {
        get throws {
            let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/git-refs.json"))
            return MockResource(entity: try schema.requireEntity("Ref"), in: schema)
        }
    }

    /// Two repositories' refs, as a git hosting API lists them (plus the owner and repository the
    /// API's path carries).
    static let seed = JSONValue.parse("""
        [{"owner": "octocat", "repo": "Hello-World", "ref": "refs/heads/main", "node_id": "MDM6UmVmcmVmcy9oZWFkcy9tYWlu",
          "object": {"sha": "aa218f56b14c9653891f9e74264a383fa43fefbd", "type": "commit"}},
         {"owner": "octocat", "repo": "Spoon-Knife", "ref": "refs/heads/main", "node_id": "MDM6UmVmcmVmcy9oZWFkcy9tYWlo",
          "object": {"sha": "d0dd1f61b33d64e29d8bc1372a94ef6a2fee76a9", "type": "commit"}},
         {"owner": "octocat", "repo": "Hello-World", "ref": "refs/tags/v1.0", "node_id": "MDM6UmVmcmVmcy90YWdzL3YxLjA=",
          "object": {"sha": "7fd1a60b01f91b314f59955a4e4d4e80d8edf11d", "type": "tag"}}]
        """)

    static func lines(_ reply: Reply) -> [String] {
        (reply.json?.arrayValue ?? []).map { ref in
            [ref["owner"], ref["repo"], ref["ref"], ref["object"]?["sha"]].map { $0?.stringValue ?? "-" }.joined(separator: " ")
        }
    }

    @Test("the resource of a composite-key entity is keyed by the entity's parts, in order")
    func resourceKey() throws {
        let refs = try Self.refs
        #expect(refs.primaryKey == .composite([MockProperty("owner", .string), MockProperty("repo", .string),
                                               MockProperty("ref", .string)]))
        #expect(refs.primaryKey.kind == .composite)
        #expect(refs.primaryKey.name == "owner,repo,ref")
        #expect(refs.properties.map(\.name) == ["owner", "repo", "ref", "node_id", "url", "object.sha", "object.type"])
        #expect(refs.primaryKey.key(of: ["owner": "octocat", "repo": "Hello-World", "ref": "refs/heads/main"])
                    == .array(["octocat", "Hello-World", "refs/heads/main"]))
        #expect(refs.primaryKey.key(of: ["owner": "octocat", "repo": "Hello-World"]) == nil)
        #expect(refs.primaryKey.key(of: ["owner": "octocat", "repo": "Hello-World", "ref": .null]) == nil)
        #expect(refs.primaryKey.values(of: .array(["octocat", "Hello-World"])) == nil)
        #expect(refs.primaryKey.values(of: "octocat") == nil)
        // One part is a one-property key; the second listing of a name is dropped.
        #expect(MockPrimaryKey.composite([MockProperty("slug", .string)]) == .string("slug"))
        #expect(MockPrimaryKey.composite([MockProperty("n", .integer), MockProperty("n", .string)]) == .autoIncrement("n"))
        #expect(MockPrimaryKey.composite([]) == .default)
    }

    @Test("show, list within leading parts, create, update and delete by the whole key", arguments: stores)
    func crudByTuple(kind: String) async throws {
        try await withServer([try Self.refs], options: MockServerOptions(store: try await Fixture.store(kind))) { server, client in
            #expect(try await server.load(json: Self.seed, into: "refs").loaded == 3)

            // The whole collection in key order; the leading parts filter it.
            let all = try await client.get("/refs")
            #expect(Self.lines(all) == ["octocat Hello-World refs/heads/main aa218f56b14c9653891f9e74264a383fa43fefbd",
                                        "octocat Hello-World refs/tags/v1.0 7fd1a60b01f91b314f59955a4e4d4e80d8edf11d",
                                        "octocat Spoon-Knife refs/heads/main d0dd1f61b33d64e29d8bc1372a94ef6a2fee76a9"])
            let spoon = try await client.get("/refs/octocat/Spoon-Knife")
            #expect(spoon.status == 200)
            #expect(spoon.header("X-Total-Count") == "1")
            #expect(Self.lines(spoon) == ["octocat Spoon-Knife refs/heads/main d0dd1f61b33d64e29d8bc1372a94ef6a2fee76a9"])
            #expect(Self.lines(try await client.get("/refs/octocat")).count == 3)
            #expect(Self.lines(try await client.get("/refs/octocat/Hello-World?object.type=tag"))
                        == ["octocat Hello-World refs/tags/v1.0 7fd1a60b01f91b314f59955a4e4d4e80d8edf11d"])
            #expect(Self.lines(try await client.get("/refs/hubot")) == [])

            // One ref: its slashes travel percent-encoded in one segment.
            let main = try await client.get("/refs/octocat/Hello-World/refs%2Fheads%2Fmain")
            #expect(main.status == 200)
            #expect(main.json?["object"]?["sha"] == "aa218f56b14c9653891f9e74264a383fa43fefbd")
            #expect(main.json?["repo"] == "Hello-World")
            let missing = try await client.get("/refs/octocat/Hello-World/refs%2Fheads%2Fgone")
            #expect(missing.status == 404)
            #expect(missing.text.contains("no refs with owner octocat, repo Hello-World, ref refs/heads/gone"))

            // Create within a repository: the path's parts are set, the Location is the whole key.
            let created = try await client.post("/refs/octocat/Spoon-Knife",
                                                #"{"ref": "refs/heads/feature", "object": {"sha": "7638417db6d59f3c431d3e1f261cc637155684cd", "type": "commit"}}"#)
            #expect(created.status == 201)
            #expect(created.header("Location") == "/refs/octocat/Spoon-Knife/refs%2Fheads%2Ffeature")
            #expect(created.json?["owner"] == "octocat")
            #expect(created.json?["repo"] == "Spoon-Knife")
            #expect(try await client.get("/refs/octocat/Spoon-Knife/refs%2Fheads%2Ffeature").status == 200)
            // The same key again is a conflict; a key lacking a part is a 422 naming it.
            let again = try await client.post("/refs", #"{"owner": "octocat", "repo": "Spoon-Knife", "ref": "refs/heads/feature"}"#)
            #expect(again.status == 409)
            let partial = try await client.post("/refs", #"{"owner": "octocat", "ref": "refs/heads/x", "object": {"sha": "ab"}}"#)
            #expect(partial.status == 422)
            #expect(partial.json?["errors"]?["repo"]?.arrayValue?.first?.stringValue == "is required: part of the key of refs")

            // Update one ref: the other repository's refs/heads/main stays; a key part in the body is not a move.
            let moved = try await client.patch("/refs/octocat/Hello-World/refs%2Fheads%2Fmain",
                                               #"{"repo": "Spoon-Knife", "object": {"sha": "762941318ee16e59dabbacb1b4049eec22f0d303"}}"#)
            #expect(moved.status == 200)
            #expect(moved.json?["repo"] == "Hello-World")
            #expect(moved.json?["object"]?["sha"] == "762941318ee16e59dabbacb1b4049eec22f0d303")
            #expect(moved.json?["object"]?["type"] == "commit")
            #expect(try await client.get("/refs/octocat/Spoon-Knife/refs%2Fheads%2Fmain").json?["object"]?["sha"]
                        == "d0dd1f61b33d64e29d8bc1372a94ef6a2fee76a9")
            // PATCH needs the object; PUT to a whole key makes it (a client naming objects by key creates so).
            #expect(try await client.patch("/refs/octocat/Linguist/refs%2Fheads%2Fmain", #"{"url": "x"}"#).status == 404)
            let put = try await client.put("/refs/octocat/Linguist/refs%2Fheads%2Fmain",
                                           #"{"owner": "hubot", "object": {"sha": "5b8a1b0c", "type": "commit"}}"#)
            #expect(put.status == 201)
            #expect(put.header("Location") == "/refs/octocat/Linguist/refs%2Fheads%2Fmain")
            #expect(put.json?["owner"] == "octocat")
            #expect(try await client.put("/refs/octocat/Linguist/refs%2Fheads%2Fmain", #"{"url": "u"}"#).json?["object"]?["sha"] == "5b8a1b0c")
            #expect(try await client.delete("/refs/octocat/Linguist/refs%2Fheads%2Fmain").status == 204)

            // Delete one ref by its key.
            #expect(try await client.delete("/refs/octocat/Spoon-Knife/refs%2Fheads%2Fmain").status == 204)
            #expect(try await client.delete("/refs/octocat/Spoon-Knife/refs%2Fheads%2Fmain").status == 404)
            #expect(Self.lines(try await client.get("/refs")).map { $0.split(separator: " ").prefix(3).joined(separator: " ") }
                        == ["octocat Hello-World refs/heads/main", "octocat Hello-World refs/tags/v1.0",
                            "octocat Spoon-Knife refs/heads/feature"])

            // Loading rejects an object lacking a part, alone.
            let loaded = try await server.load(json: .parse(#"[{"owner": "o", "repo": "r", "ref": "a"}, {"owner": "o", "ref": "b"}]"#),
                                               into: "refs")
            #expect(loaded.loaded == 1)
            #expect(loaded.rejections == ["refs[1]: repo is required: part of the key of refs"])
        }
    }

    @Test("integer parts compare as numbers and a segment that is no integer finds nothing", arguments: stores)
    func integerParts(kind: String) async throws {
        let stars = MockResource("stars", properties: [MockProperty("starred_at", .string)],
                                 primaryKey: .composite([MockProperty("user_id", .integer), MockProperty("repo", .string)]))
        #expect(stars.properties.map(\.name) == ["user_id", "repo", "starred_at"])
        try await withServer([stars], options: MockServerOptions(store: try await Fixture.store(kind))) { server, client in
            for (user, repo) in [(10, "b"), (9, "z"), (10, "a"), (100, "a")] {
                let reply = try await client.post("/stars/\(user)", #"{"repo": "\#(repo)", "starred_at": "2011-01-26T19:06:43Z"}"#)
                #expect(reply.status == 201)
            }
            let listed = try await client.get("/stars")
            #expect(listed.json?.arrayValue?.map { "\($0["user_id"]?.serialized() ?? "-")/\($0["repo"]?.stringValue ?? "")" }
                        == ["9/z", "10/a", "10/b", "100/a"])
            // Sorted by another property, ties go by the whole key.
            let sorted = try await client.get("/stars?_sort=starred_at&_order=desc")
            #expect(sorted.json?.arrayValue?.map { "\($0["user_id"]?.serialized() ?? "-")/\($0["repo"]?.stringValue ?? "")" }
                        == ["9/z", "10/a", "10/b", "100/a"])
            #expect(try await client.get("/stars/10").json?.arrayValue?.count == 2)
            #expect(try await client.get("/stars/10/a").json?["starred_at"] == "2011-01-26T19:06:43Z")
            #expect(try await client.get("/stars/ten/a").status == 404)
            #expect(try await client.get("/stars/ten").status == 404)
            #expect(try await client.delete("/stars/10/a").status == 204)
            #expect(try await server.options.store.object(stars, id: [10, "b"])?["starred_at"] == "2011-01-26T19:06:43Z")
            #expect(try await server.options.store.object(stars, id: [10, "a"]) == nil)
            // A key of another shape matches nothing, on every store.
            #expect(try await server.options.store.object(stars, id: 10) == nil)
            #expect(try await server.options.store.delete(stars, id: [10]) == false)
        }
    }

    @Test("a stored table keyed otherwise is refused with both keys named, not written through", arguments: ["sqlite", "postgres"])
    func storedKeyMismatch(kind: String) async throws {
        let store = try await Fixture.store(kind)
        let byID = MockResource("refs", properties: [MockProperty("owner", .string), MockProperty("repo", .string),
                                                     MockProperty("ref", .string)])
        try await store.addResource(byID)
        _ = try await store.create(byID, values: ["owner": "octocat", "repo": "Hello-World", "ref": "refs/heads/main"])
        try await store.addResource(byID)   // the same key again: fine
        let error = await #expect(throws: MockServerError.self) { try await store.addResource(try Self.refs) }
        #expect(error?.code == .storeFailed)
        #expect(error?.message.hasSuffix("table refs is keyed by (id), the resource by (owner, repo, ref): "
                                         + "drop the table (MockStore.dropResource(_:) drops it with its objects) or use another store") == true)
        try await store.dropResource(byID)
        try await store.addResource(try Self.refs)
        #expect(try await store.create(try Self.refs, values: ["owner": "octocat", "repo": "Hello-World", "ref": "refs/heads/main"])["ref"]
                    == "refs/heads/main")
    }
}
