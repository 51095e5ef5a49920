import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Live result windows")
struct WindowTests {
    typealias Item = LiveResultFixture.Item

    static func item(_ id: Int64, name: String) -> Item {
        Item(id: id, groupID: 1, category: "c", score: 1, name: name, price: Double(id), flag: false)
    }

    static func names(_ snapshot: ResultSnapshot) -> [String] {
        snapshot.rows.map { row in
            if case .string(let name)? = row["name"] { return name }
            return "?"
        }
    }

    @Test("a window shows its rows of the whole result; diffs cover the window, its start and the total")
    func rowsWindow() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert((1 ... 100).map { Self.item($0, name: String(format: "n%03d", $0 * 2)) })
        var query = LiveQuery("Item", sort: [.ascending("name")])
        query.window = .rows(10 ..< 15)
        let set = try LiveResultSet(engine: fixture.engine, query: query)
        defer { set.close() }
        var iterator = set.updates().makeAsyncIterator()
        let first = set.snapshot
        #expect(Self.names(first) == ["n022", "n024", "n026", "n028", "n030"])
        #expect(first.windowStart == 10 && first.totalCount == 100 && first.count == 5 && first.holdsRows)

        // A row before the window shifts it: one row enters at the top, one leaves at the bottom.
        try await fixture.upsert([Self.item(500, name: "n001")])
        let shifted = try #require(await iterator.next())
        #expect(Self.names(shifted.snapshot) == ["n020", "n022", "n024", "n026", "n028"])
        #expect(shifted.diff.rowInserts.map(\.key) == [.integer(10)] && shifted.diff.rowDeletes.map(\.key) == [.integer(15)])
        #expect(shifted.diff.totalCount == 101 && shifted.diff.windowStart == nil)
        #expect(try shifted.diff.apply(to: shifted.previous) == shifted.snapshot)

        // A change after the window changes only the total; one inside it is an update.
        try await fixture.upsert([Self.item(600, name: "z")])
        let counted = try #require(await iterator.next())
        #expect(counted.diff.changeCount == 0 && counted.diff.totalCount == 102)
        #expect(try counted.diff.apply(to: counted.previous) == counted.snapshot)
        try await fixture.upsert([Item(id: 12, groupID: 1, category: "changed", score: 1, name: "n024", price: 12, flag: false)])
        let updated = try #require(await iterator.next())
        #expect(updated.diff.rowUpdates.map(\.key) == [.integer(12)] && updated.diff.totalCount == nil)
        let statistics = set.statistics
        try await fixture.upsert([Item(id: 90, groupID: 1, category: "changed", score: 1, name: "n180", price: 90, flag: false)])
        #expect(set.statistics.diffs == statistics.diffs, "a change outside the window delivers nothing")

        // Moving it: the next page, then around a key.
        let moved = try await set.moveWindow(to: .rows(15 ..< 20))
        #expect(moved.windowStart == 15 && moved.rowDeletes.count == 5 && moved.rowInserts.count == 5)
        #expect(Self.names(set.snapshot) == ["n030", "n032", "n034", "n036", "n038"])
        try await set.moveWindow(to: .around(.integer(42), before: 2, after: 2))
        #expect(Self.names(set.snapshot) == ["n080", "n082", "n084", "n086", "n088"])
        #expect(set.snapshot.windowStart == 40)
        // The key leaves the result (with 500 and 600, stale in the group): the window stays at 40.
        try await fixture.replaceGroup(1, with: (1 ... 100).filter { $0 != 42 }.map { Self.item($0, name: String(format: "n%03d", $0 * 2)) })
        #expect(Self.names(set.snapshot) == ["n082", "n086", "n088", "n090", "n092"])
        #expect(set.snapshot.windowStart == 40 && set.snapshot.totalCount == 99)
        // No window: every row again.
        try await set.moveWindow(to: nil)
        #expect(set.snapshot.count == 99 && set.snapshot.windowStart == 0 && set.snapshot.totalCount == 99)
        // Every update applied in order gives the snapshot.
        var shown = updated.snapshot
        while let update = await iterator.next() {
            shown = try update.diff.apply(to: shown)
            #expect(shown == update.snapshot)
            if update.snapshot.count == 99 && update.snapshot.windowStart == 0 { break }
        }
    }

    @Test("a window on a result past residentRowLimit holds its rows and gets row diffs, not resets")
    func largeResult() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert((1 ... 10_500).map { Self.item($0, name: String(format: "n%05d", $0)) })
        var query = LiveQuery("Item", sort: [.ascending("name")])
        query.window = .rows(5_000 ..< 5_040)
        let set = try LiveResultSet(engine: fixture.engine, query: query)
        defer { set.close() }
        var iterator = set.updates().makeAsyncIterator()
        #expect(set.snapshot.holdsRows && set.snapshot.count == 40 && set.snapshot.totalCount == 10_500)
        #expect(set.snapshot.rows.first?["name"] == .string("n05001"))
        try await fixture.upsert([Item(id: 5_010, groupID: 1, category: "x", score: 1, name: "n05010", price: 1, flag: true)])
        let update = try #require(await iterator.next())
        #expect(!update.diff.isReset && update.diff.rowUpdates.map(\.key) == [.integer(5_010)])
        #expect(update.diff.rowUpdates.first?.row["category"] == .string("x"))
        #expect(set.statistics.requeries == 1)
    }
}
