import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Live result resets")
struct ResetTests {
    typealias Item = LiveResultFixture.Item

    static func item(_ id: Int64, name: String = "n", score: Int64 = 1) -> Item {
        Item(id: id, groupID: 1, category: "a", score: score, name: name, price: Double(id), flag: false)
    }

    @Test("a commit changing more rows than the threshold arrives as one reset; fewer arrive row by row")
    func threshold() async throws {
        let fixture = try LiveResultFixture()
        var query = LiveQuery("Item", sort: [.ascending("name")])
        #expect(query.resetThreshold == 10_000)
        query.resetThreshold = 5
        let set = try LiveResultSet(engine: fixture.engine, query: query)
        var iterator = set.updates().makeAsyncIterator()

        // 5 changes: listed.
        try await fixture.upsert((1 ... 5).map { Self.item($0, name: "n\($0)") })
        let listed = try #require(await iterator.next())
        #expect(!listed.diff.isReset && listed.diff.resetSnapshot == nil)
        #expect(listed.diff.rowInserts.map(\.key) == (1 ... 5).map { .integer($0) })

        // 6 inserts: a reset, decided from the row counts alone (no diff computed).
        try await fixture.upsert((6 ... 11).map { Self.item($0, name: "n\($0)") })
        let reset = try #require(await iterator.next())
        #expect(reset.diff.isReset)
        #expect(!reset.diff.isEmpty)
        #expect(reset.diff.changes.isEmpty && reset.diff.steps.isEmpty && reset.diff.changeCount == 0)
        #expect(reset.diff.resetSnapshot == reset.snapshot)
        #expect(reset.snapshot.count == 11)
        #expect(try reset.diff.apply(to: reset.previous) == reset.snapshot)
        #expect(reset.diff.description == "reset to 11 rows")
        #expect(set.statistics.resets == 1)

        // Same count, but six rows move (names reversed): the diff is computed, then replaced.
        try await fixture.upsert((1 ... 6).map { Self.item($0, name: "z\(10 - $0)") })
        let moved = try #require(await iterator.next())
        #expect(moved.diff.isReset)
        #expect(moved.snapshot.rows.suffix(6).map(\.primaryKey) == (1 ... 6).reversed().map { .integer($0) })
        #expect(try moved.diff.apply(to: moved.previous) == moved.snapshot)
        #expect(set.statistics.resets == 2)

        // Without a threshold every change is listed.
        let fresh = try LiveResultFixture()
        query.resetThreshold = nil
        let unbounded = try LiveResultSet(engine: fresh.engine, query: query)
        var all = unbounded.updates().makeAsyncIterator()
        try await fresh.upsert((1 ... 30).map { Self.item($0, name: "m\($0)") })
        let update = try #require(await all.next())
        #expect(!update.diff.isReset)
        #expect(update.diff.rowInserts.count == 30)
        #expect(try update.diff.apply(to: update.previous) == update.snapshot)
        #expect(unbounded.statistics.resets == 0)
    }

    @Test("a delegate hears a reset as one didReset call between will and did")
    func delegate() async throws {
        let fixture = try LiveResultFixture()
        var query = LiveQuery("Item", sort: [.ascending("id")])
        query.resetThreshold = 2
        let set = try LiveResultSet(engine: fixture.engine, query: query)
        let delegate = RecordingDelegate()
        let queue = DispatchQueue(label: "delegate")
        set.setDelegate(delegate, queue: queue)
        var updates = delegate.updates.makeAsyncIterator()
        try await fixture.upsert([Self.item(1)])
        _ = await updates.next()
        try await fixture.upsert((2 ... 4).map { Self.item($0) })
        let snapshot = try #require(await updates.next())
        #expect(snapshot.count == 4)
        #expect(queue.sync { delegate.events } == ["will", "+1", "did", "will", "reset 4", "did"])
        let (finished, diff) = try #require(queue.sync { delegate.finished.last })
        #expect(diff.isReset && finished == snapshot)
        withExtendedLifetime(delegate) {}
    }
}
