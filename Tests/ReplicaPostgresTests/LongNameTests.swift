import Foundation
import Replica
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// Index names the library makes (a join table's, a declared index without a name) are fitted
/// to PostgreSQL's 63 bytes the same way on both stores, instead of being cut by PostgreSQL (two
/// long names sharing their first 63 bytes would become one index).
@Suite("Long index names on both stores")
struct LongNameTests {
    static let schema = #"""
        {"name": "t", "entities": {
          "Issue": {"attributes": {"id": "integer", "titleOfTheIssueAsTheTrackerNamesIt": "string", "bodyOfTheIssueAsTheTrackerNamesIt": "string"},
            "indexes": [{"attributes": ["titleOfTheIssueAsTheTrackerNamesIt", "bodyOfTheIssueAsTheTrackerNamesIt"]}],
            "relationships": {"labels": {"toMany": "Label", "through": "issue_labels_of_the_public_issue_tracker_of_repos"}}},
          "Label": {"attributes": {"id": "integer", "name": "string"}}},
         "routes": [{"path": "/issues", "target": "Issue", "stale": "delete"}]}
        """#

    @Test("the fitted names are created on PostgreSQL, and links sync through the long join table on both stores",
          arguments: StoreKind.allCases)
    func fitted(kind: StoreKind) async throws {
        let schema = try Schema(json: Data(Self.schema.utf8))
        try schema.checkOpening(in: .postgres)
        let joinIndex = Identifier.fitted("issue_labels_of_the_public_issue_tracker_of_repos_labelID_index")
        let declared = Identifier.fitted("issues_titleOfTheIssueAsTheTrackerNamesIt_bodyOfTheIssueAsTheTrackerNamesIt_index")
        #expect(joinIndex.utf8.count == 63 && declared.utf8.count == 63)
        let opened = try await TestStore.make(kind, schema: schema)
        try await withTeardown {
            let session = try opened.store.session(.entity("Issue"), source: "test")
            _ = try await session.stage(body: Data(#"[{"id": 1, "labels": [{"id": 7, "name": "bug"}, {"id": 8, "name": "docs"}]}]"#.utf8),
                                        source: "test")
            _ = try await session.commit(complete: true)
            #expect(try await opened.store.rows(RowQuery("Label", sort: [SortKey("id")])).map { $0["name"] } == [.string("bug"), .string("docs")])
            if let url = opened.url {
                let names = try await PostgresCluster.start().psql(url, "SELECT indexname FROM pg_indexes ORDER BY indexname")
                    .split(separator: "\n").map(String.init)
                #expect(names.contains(joinIndex), "\(names)")
                #expect(names.contains(declared), "\(names)")
            }
        } teardown: {
            await opened.close()
        }
    }
}
