import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Live result sets over a composite-key entity merge changes by key tuples: changed rows are
/// fetched with `("owner", "repo", "ref") IN (VALUES …)` and placed, the query is not re-run.
@Suite("Live result sets with composite keys")
struct CompositeKeyLiveTests {
    static func page(_ repo: String, _ refs: [(String, String)]) -> Data {
        let objects = refs.map { #"{"ref": "\#($0.0)", "object": {"sha": "\#($0.1)", "type": "commit"}}"# }
        return Data(("[" + objects.joined(separator: ", ") + "]").utf8)
    }

    static func key(_ repo: String, _ ref: String) -> AttributeValue {
        .compositeKey([.string("octocat"), .string(repo), .string(ref)])
    }

    @Test("changes merge by key tuples, resident or lazy, and the diffs apply", arguments: [10_000, 0])
    func mergesByTuple(residentRowLimit: Int) async throws {
        let directory = try TemporaryDirectory("replica-composite-live")
        defer { directory.remove() }
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/git-refs.json"))
        let engine = try SQLiteReplica(store: Store(path: directory.path("refs.sqlite"), schema: schema))
        var query = LiveQuery("Ref", where: "sha <> ?", arguments: [.string("dead")], sort: [.ascending("sha")])
        query.residentRowLimit = residentRowLimit
        let set = try LiveResultSet(engine: engine, query: query)
        defer { set.close() }
        var iterator = set.updates().makeAsyncIterator()
        _ = try await engine.sync(.get, "/repos/octocat/Hello-World/git/refs", body: Self.page("Hello-World", [
            ("refs/heads/main", "b"), ("refs/heads/feature", "c")]))
        let first = try #require(await iterator.next())
        #expect(first.snapshot.rows.keys == [Self.key("Hello-World", "refs/heads/main"), Self.key("Hello-World", "refs/heads/feature")])

        _ = try await engine.sync(.get, "/repos/octocat/Spoon-Knife/git/refs", body: Self.page("Spoon-Knife", [
            ("refs/heads/main", "a")]))
        let second = try #require(await iterator.next())
        #expect(second.diff.rowInserts.map(\.key) == [Self.key("Spoon-Knife", "refs/heads/main")])
        #expect(try second.diff.apply(to: second.previous) == second.snapshot)

        // main moves past feature; feature leaves the predicate; Spoon-Knife stays.
        _ = try await engine.sync(.get, "/repos/octocat/Hello-World/git/refs", body: Self.page("Hello-World", [
            ("refs/heads/main", "d"), ("refs/heads/feature", "dead")]))
        let third = try #require(await iterator.next())
        #expect(third.snapshot.rows.keys == [Self.key("Spoon-Knife", "refs/heads/main"), Self.key("Hello-World", "refs/heads/main")])
        #expect(third.diff.rowDeletes.map(\.key) == [Self.key("Hello-World", "refs/heads/feature")])
        #expect((third.diff.rowMoves + third.diff.rowUpdates).map(\.key) == [Self.key("Hello-World", "refs/heads/main")])
        #expect(try third.diff.apply(to: third.previous) == third.snapshot)
        #expect(try third.snapshot.rows(in: 0 ..< 2).map { $0["sha"] } == [.string("a"), .string("d")])
        // Only the initial load ran the query; the changes were fetched by key.
        #expect(set.statistics.requeries == 1, "\(set.statistics)")
        #expect(set.statistics.keyFetches == 3, "\(set.statistics)")
    }
}
