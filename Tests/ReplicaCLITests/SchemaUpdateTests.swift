import Foundation
import Replica
import ReplicaTestSupport
import Testing

/// `replica schema infer --update SCHEMA`: an API that grows keys (GitHub's issues gained
/// `state_reason` and `reactions`, and a `milestone` object) costs no re-import: the schema gains
/// nullable attributes, entities and routes, nothing else changes, its version goes up, and a
/// store opened with it adds the columns and keeps its rows.
@Suite("replica schema infer --update")
struct SchemaUpdateTests {
    static let before = #"""
        [{"id": 1, "number": 1347, "title": "Found a bug", "state": "open", "user": {"id": 583231, "login": "octocat"}},
         {"id": 2, "number": 1348, "title": "Docs", "state": "closed", "user": {"id": 583231, "login": "octocat"}}]
        """#
    static let after = #"""
        [{"id": 1, "number": 1347, "title": "Found a bug", "state": "open", "state_reason": null,
          "user": {"id": 583231, "login": "octocat"}, "reactions": {"total_count": 3, "+1": 2},
          "milestone": {"id": 1002604, "number": 1, "title": "v1.0"}},
         {"id": 3, "number": 1349, "title": "New", "state": "closed", "state_reason": "completed",
          "user": {"id": 583231, "login": "octocat"}, "reactions": {"total_count": 0, "+1": 0}, "milestone": null}]
        """#

    @Test("adds the new keys nullable, the new entity and route, raises the version; the store migrates and keeps its rows")
    func update() async throws {
        let directory = try TemporaryDirectory("replica-schema-update")
        defer { directory.remove() }
        let issues = directory.path("issues.json")
        try Data(Self.before.utf8).write(to: URL(fileURLWithPath: issues))
        let schemaPath = directory.path("github.json")
        let first = try await ReplicaTool.run(["schema", "infer", "--route", "/repos/:owner/:repo/issues=\(issues)", "-o", schemaPath])
        #expect(first.status == 0, "\(first.stderr)")
        let original = try String(contentsOfFile: schemaPath, encoding: .utf8)
        let db = directory.path("github.sqlite")
        let imported = try await ReplicaTool.run(["import", "--db", db, "--schema", schemaPath, "--route", "/repos/octo/cat/issues", issues])
        #expect(imported.status == 0, "\(imported.stderr)")

        // The API grew: a second sample, and a labels route.
        try Data(Self.after.utf8).write(to: URL(fileURLWithPath: issues))
        let labels = directory.path("labels.json")
        try Data(#"[{"id": 208045946, "name": "bug", "color": "f29513"}]"#.utf8).write(to: URL(fileURLWithPath: labels))
        let updated = try await ReplicaTool.run(["schema", "infer", "--update", schemaPath, "--route", "/repos/:owner/:repo/issues=\(issues)",
                                                 "--route", "/repos/:owner/:repo/labels=\(labels)"])
        #expect(updated.status == 0, "\(updated.stderr)")
        #expect(updated.stdout == "")
        #expect(updated.stderr.hasSuffix("wrote \(schemaPath): version 1 → 2, added Issue.stateReason, Issue.reactionsTotalCount, "
                                         + "Issue.reactionsPlus1, Issue.milestoneID, Issue.milestone, entity Label, entity Milestone, "
                                         + "route GET /repos/:owner/:repo/labels\n"), "\(updated.stderr)")
        let schema = try Schema(contentsOf: URL(fileURLWithPath: schemaPath))
        #expect(schema.version == 2)
        let issue = try #require(schema.entity(named: "Issue"))
        #expect(issue.attribute(named: "stateReason")?.isNullable == true)
        // What was there is there, unchanged.
        let old = try Schema(json: Data(original.utf8))
        for attribute in try #require(old.entity(named: "Issue")).attributes {
            #expect(issue.attribute(named: attribute.name) == attribute, "\(attribute.name)")
        }

        // The store adds the columns, keeps its rows, and the new sample imports with nothing unmapped.
        let again = try await ReplicaTool.run(["import", "--db", db, "--schema", schemaPath, "--route", "/repos/octo/cat/issues",
                                               "--stale", "keep", issues])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!again.stderr.contains("unmapped"), "\(again.stderr)")
        let store = try Store(path: db, options: StoreOptions(readOnly: true))
        #expect(try store.rows("Issue", sort: [.ascending("id")]).map { $0["stateReason"] } == [.null, .null, .string("completed")])

        // Samples with nothing new leave the schema as it is.
        let unchanged = try await ReplicaTool.run(["schema", "infer", "--update", schemaPath, "--route", "/repos/:owner/:repo/issues=\(issues)"])
        #expect(unchanged.status == 0, "\(unchanged.stderr)")
        #expect(unchanged.stderr.hasSuffix("\(schemaPath): nothing to add; version 2 kept\n"), "\(unchanged.stderr)")
        #expect(try Schema(contentsOf: URL(fileURLWithPath: schemaPath)) == schema)
    }
}
