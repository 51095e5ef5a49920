import Foundation
import Replica
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// `unmappedKeys: keep` and `ignoreKeys`, asserted on SQLite and on PostgreSQL through the one store protocol.
@Suite("Unmapped keys on SQLite and PostgreSQL")
struct UnmappedKeyBehaviourTests {
    static func schema(_ json: String) throws -> Schema { try Schema(json: Data(json.utf8)) }

    @Test("keep writes the same compact JSON on both paths and both stores; an object with none sets NULL",
          arguments: StoreKind.allCases)
    func keep(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind, schema: Self.schema(
            GitHubFixture.schema(issueKeys: "keep", userKeys: "keep", ignoreKeys: ["node_id"])))
        try await withTeardown {
            let store = test.store
            // General path: issues with a nested user.
            let issues = try await store.sync(.get, "/repos/octocat/Hello-World/issues", body: Data(GitHubFixture.issues.utf8),
                                              options: SyncOptions(strictKeys: true))
            #expect(issues.ignoredKeys.isEmpty)
            #expect(try await store.count("Issue", where: "unmapped = ?", arguments: [.string(GitHubFixture.Kept.issue1)]) == 1)
            #expect(try await store.count("User", where: "unmapped = ?", arguments: [.string(GitHubFixture.Kept.user1)]) == 1)
            let rows = try await store.rows(RowQuery("Issue", sort: [.ascending("id")]))
            #expect(rows.first?["unmapped"] == .json(try JSONValue(parsing: GitHubFixture.Kept.issue1)))
            // Fast path (flat users; on PostgreSQL through COPY): the same text.
            let users = try await store.sync(.get, "/users", body: Data(GitHubFixture.users.utf8), options: SyncOptions())
            #expect(users.ignoredKeys.isEmpty)
            #expect(try await store.count("User", where: "unmapped = ?", arguments: [.string(GitHubFixture.Kept.user1)]) == 1)
            _ = try await store.sync(.get, "/users", body: Data(GitHubFixture.plainUser.utf8), options: SyncOptions())
            #expect(try await store.count("User", where: "unmapped IS NULL", arguments: []) == 1)
        } teardown: {
            await test.close()
        }
    }

    @Test("ignoreKeys drops keys without counting them, on both stores", arguments: StoreKind.allCases)
    func ignoreKeys(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind, schema: Self.schema(
            GitHubFixture.schema(userKeys: "ignore", ignoreKeys: ["node_id", "*_url", "url", "locked", "comments", "labels"])))
        try await withTeardown {
            let result = try await test.store.sync(.get, "/repos/octocat/Hello-World/issues", body: Data(GitHubFixture.issues.utf8),
                                                   options: SyncOptions())
            #expect(result.ignoredKeys.map(\.description) == ["Issue.author_association × 2 (first at /0/author_association)"])
            #expect(try await test.store.count("Issue", where: nil, arguments: []) == 2)
        } teardown: {
            await test.close()
        }
    }
}
