import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Live results larger than the resident limit")
struct LargeResultTests {
    typealias Item = LiveResultFixture.Item

    static func item(_ id: Int64, name: String? = nil, score: Int64 = 1) -> Item {
        Item(id: id, groupID: 1, category: "c\(id % 7)", score: score, name: name ?? "n\(id)", price: Double(id), flag: id % 2 == 0)
    }

    struct Named: Decodable, Equatable { var id: Int64; var name: String; var flag: Bool }
    struct Wrong: Decodable { var id: Int64; var price: String }

    @Test("typed rows: a snapshot decodes every row, a range (reading only its batch) or one path, as store.fetch does")
    func typedRows() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert((1 ... 10_500).map { Self.item($0) })
        let set = try LiveResultSet(engine: fixture.engine, query: LiveQuery("Item", sort: [.ascending("id")]))
        defer { set.close() }
        let snapshot = set.snapshot
        let cache = set.core.queue.sync { set.core.plan.cache }
        let screen = try snapshot.decode(Named.self, in: 100 ..< 140)
        #expect(screen.first == Named(id: 101, name: "n101", flag: false) && screen.count == 40)
        #expect(cache.fetchCount == 1, "one batch read for the range")
        #expect(try snapshot.decode(Named.self, at: ResultIndexPath(section: 0, row: 9)) == Named(id: 10, name: "n10", flag: true))
        #expect(try snapshot.decode(Named.self, at: ResultIndexPath(section: 0, row: 10_500)) == nil)
        let all = try snapshot.decode(Named.self)
        #expect(all == (try fixture.store.fetch(Named.self, from: "Item", sort: [.ascending("id")])))
        #expect(throws: StoreError.self) { try snapshot.decode(Wrong.self, in: 0 ..< 1) }
        do {
            _ = try snapshot.decode(Wrong.self, in: 0 ..< 1)
        } catch let error as StoreError {
            #expect(error.code == .decoding && "\(error)".contains("cannot decode Wrong from Item 1"), "\(error)")
        }
    }

    @Test("a result past residentRowLimit keeps keys and sort values, and reads rows in batches through a bounded cache")
    func readOnAccess() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert((1 ... 10_500).map { Self.item($0) })
        let query = LiveQuery("Item", sort: [.descending("price")])
        #expect(query.residentRowLimit == 10_000 && query.rowBatchSize == 256)
        let set = try LiveResultSet(engine: fixture.engine, query: query)
        defer { set.close() }
        let snapshot = set.snapshot
        let cache = set.core.queue.sync { set.core.plan.cache }
        #expect(!snapshot.holdsRows && snapshot.count == 10_500)
        #expect(cache.count == 0, "loading read keys and sort values only")
        #expect(snapshot.key(at: ResultIndexPath(section: 0, row: 0)) == .integer(10_500))

        // One row: its batch of 256 is read in one query; its neighbours come from the cache.
        let row = try #require(snapshot.row(at: ResultIndexPath(section: 0, row: 5_000)))
        #expect(row.primaryKey == .integer(5_500) && row["name"] == .string("n5500") && row["category"] == .string("c5"))
        #expect(cache.fetchCount == 1 && cache.count == 256)
        #expect(snapshot.sections[0].rows[5_255]["name"] == .string("n5245"))
        #expect(cache.fetchCount == 1)
        // A screenful: one query.
        let page = try snapshot.rows(in: 100 ..< 140)
        #expect(page.map(\.primaryKey) == (10_361 ... 10_400).reversed().map { .integer($0) })
        #expect(cache.fetchCount == 2)

        // Every row, in order, with the cache bounded.
        var expected: Int64 = 10_500
        for row in snapshot.rows {
            #expect(row.primaryKey == .integer(expected) && row["name"] == .string("n\(expected)"))
            expected -= 1
        }
        #expect(expected == 0)
        #expect(cache.count <= 4_096, "\(cache.count) rows cached")

        // A commit: a row diff (3 changes), values read afresh, the old row of a deleted one kept
        // when it was cached.
        var iterator = set.updates().makeAsyncIterator()
        _ = try set.snapshot.rows(in: 0 ..< 10)
        // One commit: 10,500 deleted as stale, 10,499 renamed, 20,000 new.
        let listed = (1 ... 10_498).map { Self.item($0) } + [Self.item(10_499, name: "renamed"), Self.item(20_000)]
        try await fixture.replaceGroup(1, with: listed)
        let update = try #require(await iterator.next())
        #expect(update.diff.rowDeletes.map(\.key) == [.integer(10_500)])
        #expect(update.diff.rowDeletes.first?.row["name"] == .string("n10500"), "the cached old row")
        #expect(update.diff.rowInserts.map(\.key) == [.integer(20_000)])
        #expect(update.diff.rowUpdates.map(\.key) == [.integer(10_499)])
        #expect(try update.diff.apply(to: update.previous) == update.snapshot)
        #expect(!update.snapshot.holdsRows)
        let after = update.snapshot
        #expect(try after.rows(in: 0 ..< 2).map(\.primaryKey) == [.integer(20_000), .integer(10_499)])
        #expect(after.row(at: ResultIndexPath(section: 0, row: 1))?["name"] == .string("renamed"))
        #expect(set.statistics.resets == 0)
        #expect(set.statistics.requeries == 1, "changed keys only: \(set.statistics)")
    }
}
