import Foundation
import Replica
import ReplicaServer
import ReplicaTestSupport
import Testing

/// The mock server serves an entity with a composite primary key under an id of its own: never
/// keyed by one part of the key, which would merge the refs/heads/main of two repositories.
@Suite("MockServer: composite-key entities")
struct MockServerCompositeKeyTests {
    @Test("a composite-key entity is a resource keyed by an added id; objects sharing key parts stay apart",
          arguments: ["memory", "sqlite", "postgres"])
    func refsStayApart(kind: String) async throws {
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/git-refs.json"))
        let refs = MockResource(entity: try schema.requireEntity("Ref"), in: schema)
        #expect(refs.primaryKey == .autoIncrement("id"))
        #expect(refs.properties.map(\.name) == ["id", "owner", "repo", "ref", "node_id", "url", "object.sha", "object.type"])
        try await withServer([refs], options: MockServerOptions(store: try Fixture.store(kind))) { server, client in
            let data = JSONValue.parse("""
                [{"owner": "octocat", "repo": "Hello-World", "ref": "refs/heads/main", "object": {"sha": "aa", "type": "commit"}},
                 {"owner": "octocat", "repo": "Spoon-Knife", "ref": "refs/heads/main", "object": {"sha": "bb", "type": "commit"}}]
                """)
            #expect(try await server.load(json: data, into: "refs").loaded == 2)
            let listed = try await client.get("/refs?_sort=repo")
            #expect(listed.json?.arrayValue?.compactMap { $0["repo"]?.stringValue } == ["Hello-World", "Spoon-Knife"])
            #expect(listed.json?.arrayValue?.compactMap { $0["object"]?["sha"]?.stringValue } == ["aa", "bb"])
        }
    }
}
