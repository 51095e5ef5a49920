import Foundation
import MetricsTestKit
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// A live result set records, into the factory it was given, how long each commit that changed it
/// took to reach its consumers as a diff (``ReplicaMetrics/liveDiffLatency``).
@Suite("Live result sets: commit-to-diff latency")
struct LiveResultMetricsTests {
    static let schema = """
        {"name": "people", "entities": {"Person": {"attributes": {"id": "integer", "name": "string"}}},
         "routes": [{"path": "/people", "target": "Person", "stale": "delete"}]}
        """

    @Test("one latency per commit that changed the result, labelled with the entity; none for a commit that did not")
    func diffLatency() async throws {
        let metrics = TestMetrics()
        let engine = try SQLiteReplica(store: try Store.inMemory(schema: try Schema(json: Data(Self.schema.utf8), file: "people.json")))
        let set = try LiveResultSet(engine: engine, query: LiveQuery("Person", where: "name <> ?", arguments: [.string("hidden")],
                                                                     sort: [.ascending("name")]),
                                    metricsFactory: metrics)
        defer { set.close() }
        var updates = set.updates().makeAsyncIterator()
        _ = try await engine.sync(.get, "/people", body: Data(#"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]"#.utf8))
        let first = try #require(await updates.next())
        #expect(first.snapshot.count == 2)
        let timer = try metrics.expectTimer(ReplicaMetrics.liveDiffLatency, [("entity", "Person")])
        #expect(timer.values.count == 1)
        #expect(timer.values.allSatisfy { $0 > 0 })

        // A row the predicate leaves out: a commit, but no diff (`snapshot` evaluates the change sets received).
        _ = try await engine.sync(.get, "/people", body: Data(#"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}, {"id": 3, "name": "hidden"}]"#.utf8))
        #expect(set.snapshot.count == 2)
        #expect(timer.values.count == 1)

        _ = try await engine.sync(.get, "/people", body: Data(#"[{"id": 1, "name": "ann"}, {"id": 3, "name": "hidden"}]"#.utf8))
        let second = try #require(await updates.next())
        #expect(second.diff.rowDeletes.count == 1)
        #expect(timer.values.count == 2)
    }
}
