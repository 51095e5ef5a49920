import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// What a consumer of ``LiveResultUpdates`` keeps alive: `replica watch` at a million rows must
/// not hold its first snapshot (keys and sort values of every row) for the whole session.
@Suite("LiveResultUpdates retention")
struct UpdatesRetentionTests {
    @Test("an iterator does not keep the initial snapshot once the result has moved on")
    func iteratorReleasesInitial() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert([LiveResultSetTests.item(1, "a")])
        let set = try LiveResultSet(engine: fixture.engine, query: LiveQuery("Item", sort: [.ascending("id")]))
        weak var initialMemo: SnapshotMemo?
        var iterator: LiveResultUpdates.Iterator
        do {
            let updates = set.updates()
            #expect(updates.initial.count == 1)
            initialMemo = updates.initial.memo
            iterator = updates.makeAsyncIterator()
        }
        // Still the current snapshot: the result set holds it.
        #expect(initialMemo != nil)

        try await fixture.upsert([LiveResultSetTests.item(2, "a")])
        do {
            let update = try #require(await iterator.next())
            #expect(update.snapshot.count == 2)
            #expect(update.previous.memo === initialMemo)
        }
        // Neither the iterator nor the result set keeps it now. (The result set's queue may still be
        // returning from the call that handed the update over, its locals alive for a moment: on a
        // loaded machine the check ran before, once in a full run. A snapshot kept stays past the wait.)
        let deadline = ContinuousClock.now + .seconds(10)
        while initialMemo != nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(initialMemo == nil)
        #expect(set.snapshot.count == 2)
    }

    @Test("the sequence value still gives its initial snapshot after iterating")
    func sequenceKeepsInitial() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert([LiveResultSetTests.item(1, "a")])
        let set = try LiveResultSet(engine: fixture.engine, query: LiveQuery("Item", sort: [.ascending("id")]))
        let updates = set.updates()
        var iterator = updates.makeAsyncIterator()
        try await fixture.upsert([LiveResultSetTests.item(2, "a")])
        let update = try #require(await iterator.next())
        #expect(updates.initial.count == 1)
        #expect(try update.diff.apply(to: updates.initial) == update.snapshot)
    }
}
