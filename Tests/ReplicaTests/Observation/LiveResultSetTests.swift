import Foundation
import GRDB
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("LiveResultSet behaviour")
struct LiveResultSetTests {
    typealias Item = LiveResultFixture.Item

    static func item(_ id: Int64, _ category: String?, score: Int64? = 1, group: Int64 = 1, name: String = "n") -> Item {
        Item(id: id, groupID: group, category: category, score: score, name: name, price: Double(id), flag: false)
    }

    @Test("section offset shifts every reported section index, in snapshots and diffs")
    func sectionOffset() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert([Self.item(1, "a"), Self.item(2, "c")])
        let set = try LiveResultSet(engine: fixture.engine,
                                    query: LiveQuery("Item", sort: [.ascending("id")], sectionKey: "category", sectionOffset: 3))
        let updates = set.updates()
        var iterator = updates.makeAsyncIterator()
        #expect(updates.initial.sections.map(\.key) == [.string("a"), .string("c")])
        #expect(updates.initial.indexPath(of: .integer(2)) == ResultIndexPath(section: 4, row: 0))
        #expect(updates.initial.sectionIndex(of: .string("c")) == 4)
        #expect(updates.initial.row(at: ResultIndexPath(section: 3, row: 0))?.primaryKey == .integer(1))
        #expect(updates.initial.row(at: ResultIndexPath(section: 0, row: 0)) == nil)

        try await fixture.upsert([Self.item(3, "b"), Self.item(1, "c")])   // new section b; a disappears; 1 moves to c
        let update = try #require(await iterator.next())
        #expect(update.diff.sectionDeletes.map(\.index) == [3])
        #expect(update.diff.sectionInserts.map(\.index) == [3])
        #expect(update.diff.rowInserts.map(\.to) == [ResultIndexPath(section: 3, row: 0)])
        #expect(update.diff.rowMoves.map(\.from) == [ResultIndexPath(section: 3, row: 0)])
        #expect(update.diff.rowMoves.map(\.to) == [ResultIndexPath(section: 4, row: 0)])
        #expect(try update.diff.apply(to: update.previous) == update.snapshot)
        #expect(update.snapshot.indexPath(of: .integer(2)) == ResultIndexPath(section: 4, row: 1))
    }

    @Test("diff ordering: batch form and step form as documented")
    func diffOrdering() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert((1 ... 6).map { Self.item($0, "a", score: $0) })
        let set = try LiveResultSet(engine: fixture.engine, query: LiveQuery("Item", sort: [.ascending("score")]))
        let before = set.snapshot
        // Delete 2 and 4, insert 7 at the front and 8 at the end, move 6 to the front, rename 3.
        try await fixture.replaceGroup(1, with: [Self.item(1, "a", score: 1), Self.item(3, "a", score: 3, name: "renamed"),
                                                 Self.item(5, "a", score: 5), Self.item(6, "a", score: -1),
                                                 Self.item(7, "a", score: 0), Self.item(8, "a", score: 9)])
        let after = set.snapshot
        #expect(after.rows.map(\.primaryKey) == [6, 7, 1, 3, 5, 8].map { AttributeValue.integer($0) })
        let diff = ResultDiff(from: before, to: after)
        let path = { (row: Int) in ResultIndexPath(section: 0, row: row) }
        #expect(diff.rowDeletes.map(\.from) == [path(3), path(1)])
        #expect(diff.rowInserts.map(\.to) == [path(1), path(5)])
        #expect(diff.rowMoves.map(\.key) == [.integer(6)])
        #expect(diff.rowUpdates.map(\.key) == [.integer(3)])
        #expect(diff.rowUpdates.first?.from == path(2))
        #expect(diff.rowUpdates.first?.to == path(3))
        #expect(diff.steps == [
            .removeRow(key: .integer(6), at: path(5), movingTo: path(0)),
            .removeRow(key: .integer(4), at: path(3), movingTo: nil),
            .removeRow(key: .integer(2), at: path(1), movingTo: nil),
            .insertRow(after.rows[0], at: path(0), movedFrom: path(5)),
            .insertRow(after.rows[1], at: path(1), movedFrom: nil),
            .insertRow(after.rows[5], at: path(5), movedFrom: nil),
            .updateRow(after.rows[3], at: path(3), previously: path(2)),
        ])
        #expect(try diff.apply(to: before) == after)
        #expect(throws: LiveResultError.self) { try diff.apply(to: after) }
    }

    @Test("a diff from the changed keys keeps every untouched row in place")
    func untouchedRowsStay() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert((1 ... 5).map { Self.item($0, "a", score: $0) })
        let set = try LiveResultSet(engine: fixture.engine, query: LiveQuery("Item", sort: [.ascending("score")]))
        let updates = set.updates()
        var iterator = updates.makeAsyncIterator()
        let path = { (row: Int) in ResultIndexPath(section: 0, row: row) }

        // A value outside the sort changes: an update in place, no move.
        _ = try await fixture.upsert([Self.item(3, "a", score: 3, name: "renamed")])
        let renamed = try #require(await iterator.next())
        #expect(renamed.diff.changeCount == 1)
        #expect(renamed.diff.rowUpdates.map(\.key) == [.integer(3)])
        #expect(renamed.diff.rowUpdates.first?.from == path(2))
        #expect(renamed.diff.rowUpdates.first?.to == path(2))

        // 4 and 5 jump ahead of 1, 2 and 3: the changed rows move, the untouched ones stay,
        // although moving 1, 2 and 3 instead would also give the new order.
        _ = try await fixture.upsert([Self.item(4, "a", score: -2), Self.item(5, "a", score: -1)])
        let jumped = try #require(await iterator.next())
        #expect(jumped.snapshot.rows.map(\.primaryKey) == [4, 5, 1, 2, 3].map { AttributeValue.integer($0) })
        #expect(jumped.diff.rowMoves.map(\.key) == [.integer(4), .integer(5)])
        #expect(jumped.diff.rowMoves.map(\.from) == [path(3), path(4)])
        #expect(jumped.diff.rowMoves.map(\.to) == [path(0), path(1)])
        #expect(jumped.diff.changeCount == 2)
        #expect(try jumped.diff.apply(to: renamed.snapshot) == jumped.snapshot)
        #expect(set.statistics.incrementalDiffs == 2)
        #expect(set.statistics.requeries == 1)

        // Two changed rows trade places between the same untouched neighbours: one of them moves.
        _ = try await fixture.upsert([Self.item(1, "a", score: 3), Self.item(2, "a", score: 1)])
        let swapped = try #require(await iterator.next())
        #expect(swapped.snapshot.rows.map(\.primaryKey) == [4, 5, 2, 1, 3].map { AttributeValue.integer($0) })
        #expect(swapped.diff.rowMoves.count == 1)
        #expect(swapped.diff.rowUpdates.count == 1)
        #expect(try swapped.diff.apply(to: jumped.snapshot) == swapped.snapshot)
    }

    @Test("refresh replaces predicate and sort and reports the diff to consumers")
    func refresh() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert((1 ... 6).map { Self.item($0, $0 % 2 == 0 ? "even" : "odd", score: $0) })
        let set = try LiveResultSet(engine: fixture.engine,
                                    query: LiveQuery("Item", where: .equal("category", .string("odd")), sort: [.ascending("score")],
                                                     sectionKey: "category"))
        let updates = set.updates()
        var iterator = updates.makeAsyncIterator()
        let diff = try await set.refresh(.greater("score", .integer(2)), sort: [.descending("category"), .descending("score")])
        let snapshot = set.snapshot
        #expect(snapshot.sections.map(\.key) == [.string("odd"), .string("even")])
        #expect(snapshot.rows.map(\.primaryKey) == [5, 3, 6, 4].map { AttributeValue.integer($0) })
        #expect(try diff.apply(to: updates.initial) == snapshot)
        #expect(snapshot == (try fixture.freshSnapshot(set.query)))
        let update = try #require(await iterator.next())
        #expect(update.diff == diff)

        // SQL text form; nil predicate means every row; sort kept.
        let all = try await set.refresh(predicate: nil)
        #expect(set.snapshot.count == 6)
        #expect(try all.apply(to: snapshot) == set.snapshot)
        // An invalid refresh throws and keeps the query in force.
        await #expect(throws: StoreError.self) { try await set.refresh(predicate: "nope = ?", arguments: [.integer(1)]) }
        #expect(set.query.predicate.isAll)
        #expect(set.snapshot.count == 6)
    }

    @Test("a slow consumer gets bursts of commits as one coalesced diff")
    func coalescing() async throws {
        let fixture = try LiveResultFixture()
        let set = try LiveResultSet(engine: fixture.engine, query: LiveQuery("Item", sort: [.ascending("id")]))
        // Async sequence: five commits while the consumer is not in next() → one update.
        let updates = set.updates()
        var iterator = updates.makeAsyncIterator()
        for id in 1 ... 5 { try await fixture.upsert([Self.item(Int64(id), "a")]) }
        let final = set.snapshot
        let update = try #require(await iterator.next())
        #expect(update.previous == updates.initial)
        #expect(update.snapshot == final)
        #expect(update.diff.rowInserts.count == 5)

        // Delegate: its queue is blocked during five commits → the first diff, then one for the rest.
        let delegate = RecordingDelegate()
        let queue = DispatchQueue(label: "delegate")
        set.setDelegate(delegate, queue: queue)
        queue.suspend()
        for id in 6 ... 10 { try await fixture.upsert([Self.item(Int64(id), "a")]) }
        let expected = set.snapshot
        queue.resume()
        var last: ResultSnapshot?
        for await snapshot in delegate.updates {
            last = snapshot
            if snapshot == expected { break }
        }
        #expect(last == expected)
        let finished = queue.sync { delegate.finished }
        // Normally 2 (the first commit, then the rest); 1 if the writer outran even the first.
        #expect((1 ... 2).contains(finished.count), "\(finished.count) diffs for 5 commits")
        var shown = final
        for (snapshot, diff) in finished {
            shown = try diff.apply(to: shown)
            #expect(shown == snapshot)
        }
        #expect(queue.sync { delegate.events.first } == "will")
        #expect(queue.sync { delegate.events.filter { $0 == "did" }.count } == finished.count)
        withExtendedLifetime(delegate) {}
    }

    @Test("close from inside a delegate callback unregisters at once; iteration ends on close")
    func closeInsideCallback() async throws {
        let fixture = try LiveResultFixture()
        let set = try LiveResultSet(engine: fixture.engine, query: LiveQuery("Item"))
        let delegate = RecordingDelegate()
        delegate.onFinish = { $0.close() }
        let queue = DispatchQueue(label: "delegate")
        set.setDelegate(delegate, queue: queue)
        let updates = set.updates()
        try await fixture.upsert([Self.item(1, "a")])
        for await _ in delegate.updates { break }
        #expect(set.isClosed)
        #expect(!fixture.engine.observers.contains(set.token.id))
        let processed = set.statistics.changeSets
        try await fixture.upsert([Self.item(2, "a")])
        #expect(set.statistics.changeSets == processed)
        #expect(queue.sync { delegate.finished.count } == 1)
        // The async sequence ends: it may still hold the update made before closing.
        var count = 0
        for await _ in updates { count += 1 }
        #expect(count <= 1)
        withExtendedLifetime(delegate) {}
    }

    @Test("releasing the result set unregisters its observer")
    func deinitUnregisters() async throws {
        let fixture = try LiveResultFixture()
        var set: LiveResultSet? = try LiveResultSet(engine: fixture.engine, query: LiveQuery("Item"))
        let token = try #require(set?.token)
        #expect(fixture.engine.observers.contains(token.id))
        set = nil
        #expect(!fixture.engine.observers.contains(token.id))
    }

    @Test("unknown change sets re-run the query and diff by key")
    func unknownChanges() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert((1 ... 4).map { Self.item($0, "a", score: $0) })
        let query = LiveQuery("Item", sort: [.descending("score")])
        let set = try LiveResultSet(engine: fixture.engine, query: query)
        let updates = set.updates()
        var iterator = updates.makeAsyncIterator()
        try await fixture.store.database.write { db in
            try db.execute(sql: "DELETE FROM items WHERE id = 2")
            try db.execute(sql: "UPDATE items SET score = 10 WHERE id = 1")
            try db.execute(sql: "INSERT INTO items (id, groupID, category, score, name, price, flag) VALUES (9, 1, 'z', 0, 'q', 1, 0)")
        }
        let requeries = set.statistics.requeries
        fixture.engine.publishUnknownChanges(entities: ["Item"])
        let update = try #require(await iterator.next())
        #expect(set.statistics.requeries == requeries + 1)
        #expect(update.snapshot == (try fixture.freshSnapshot(query)))
        #expect(update.diff.rowDeletes.map(\.key) == [.integer(2)])
        #expect(update.diff.rowInserts.map(\.key) == [.integer(9)])
        #expect(update.diff.rowMoves.map(\.key) == [.integer(1)])
        #expect(try update.diff.apply(to: updates.initial) == update.snapshot)
    }

    @Test("changes outside the result cost no query; changed keys are fetched, not the whole result")
    func cheapWhenPossible() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert((1 ... 6).map { Self.item($0, "a", score: $0, group: $0 <= 3 ? 1 : 2) })
        let set = try LiveResultSet(engine: fixture.engine,
                                    query: LiveQuery("Item", where: .lessOrEqual("id", .integer(3)), sort: [.ascending("id")]))
        let start = set.statistics
        _ = try await fixture.engine.sync(.get, "/tags", body: Data(#"[{"id": 1, "label": "t"}]"#.utf8))
        #expect(set.statistics == start, "another entity's commit is not even delivered")
        // Deletes 6 (not shown; 4 and 5 unchanged): evaluated without any query.
        try await fixture.replaceGroup(2, with: [Self.item(4, "a", score: 4), Self.item(5, "a", score: 5)])
        var now = set.statistics
        #expect(now.batches == start.batches + 1)
        #expect(now.queryFreeBatches == start.queryFreeBatches + 1)
        #expect(now.keyFetches == start.keyFetches && now.requeries == start.requeries)
        // Updates of a shown and a hidden row: only those two keys are read.
        try await fixture.upsert([Self.item(2, "b", score: 2), Self.item(5, "b", score: 5)])
        now = set.statistics
        #expect(now.keyFetches == start.keyFetches + 1)
        #expect(now.requeries == start.requeries)
        #expect(set.snapshot.row(at: ResultIndexPath(section: 0, row: 1))?["category"] == .string("b"))
    }

    @Test("a live result set on a route's scope shows the rows its responses speak for")
    func scoped() async throws {
        let fixture = try LiveResultFixture()
        let set = try LiveResultSet(engine: fixture.engine, path: "/groups/2/items", sort: [.ascending("name")])
        #expect(set.query.predicate == .equal("groupID", .integer(2)))
        let updates = set.updates()
        var iterator = updates.makeAsyncIterator()
        try await fixture.replaceGroup(2, with: [Self.item(1, "a", name: "b"), Self.item(2, "a", name: "a")])
        try await fixture.replaceGroup(3, with: [Self.item(3, "a", name: "c")])
        let update = try #require(await iterator.next())
        #expect(update.snapshot.rows.map(\.primaryKey) == [.integer(2), .integer(1)])
        #expect(set.snapshot == update.snapshot)
        #expect { try LiveResultSet(engine: fixture.engine, path: "/stats") } throws: {
            ($0 as? LiveResultError)?.code == .invalidQuery
        }
        #expect(throws: RouteError.self) { try LiveResultSet(engine: fixture.engine, path: "/nowhere") }
    }
}
