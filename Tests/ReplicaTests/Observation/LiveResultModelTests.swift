import Foundation
import GRDB
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Thousands of random transactions through the sync engine; after each, the live result set's
/// snapshot equals a fresh query, and the diff it reports turns the previous snapshot into it.
@Suite("LiveResult model")
struct LiveResultModelTests {
    struct Variant: Sendable, CustomStringConvertible {
        var name: String
        var query: LiveQuery
        var seed: UInt64
        var description: String { name }
    }

    static let variants: [Variant] = [
        Variant(name: "predicate, two-key sort",
                query: LiveQuery("Item", where: .greaterOrEqual("score", .integer(6)),
                                 sort: [.descending("score"), .ascending("name")]),
                seed: 1),
        Variant(name: "sections by category, offset 2",
                query: LiveQuery("Item", where: .notEqual("flag", .bool(true)) || .isNull("score"),
                                 sort: [.ascending("name")], sectionKey: "category", sectionOffset: 2),
                seed: 2),
        Variant(name: "sections by a nullable integer, descending",
                query: LiveQuery("Item", sort: [.descending("score"), .ascending("name")], sectionKey: "score",
                                 sectionOffset: 1),
                seed: 5),
        Variant(name: "sections descending with a limit",
                query: LiveQuery("Item", where: .less("score", .integer(15)) || .isNull("score"),
                                 sort: [.descending("category"), .ascending("price")], sectionKey: "category", limit: 12),
                seed: 3),
        Variant(name: "limit without sections",
                query: LiveQuery("Item", where: .in("category", [.string("a"), .string("b"), .string("B")]),
                                 sort: [.ascending("price"), .descending("flag")], limit: 8),
                seed: 4),
        // Snapshots that hold no row values (as past LiveQuery.residentRowLimit): rows are read on access.
        Variant(name: "rows read on access, predicate, two-key sort",
                query: Self.readOnAccess(LiveQuery("Item", where: .greaterOrEqual("score", .integer(6)),
                                                   sort: [.descending("score"), .ascending("name")])),
                seed: 6),
        Variant(name: "rows read on access, sections by category, offset 2",
                query: Self.readOnAccess(LiveQuery("Item", where: .notEqual("flag", .bool(true)) || .isNull("score"),
                                                   sort: [.ascending("name")], sectionKey: "category", sectionOffset: 2)),
                seed: 7),
        Variant(name: "a window of rows 3..<9, sections by category",
                query: Self.windowed(LiveQuery("Item", where: .notEqual("flag", .bool(true)) || .isNull("score"),
                                               sort: [.ascending("name")], sectionKey: "category"), 3 ..< 9),
                seed: 8),
    ]

    static func windowed(_ query: LiveQuery, _ range: Range<Int>) -> LiveQuery {
        var query = query
        query.window = .rows(range)
        return query
    }

    static func readOnAccess(_ query: LiveQuery) -> LiveQuery {
        var query = query
        query.residentRowLimit = 0
        query.rowBatchSize = 3
        return query
    }

    static let categories: [String?] = ["a", "b", "B", "c", "é", "e\u{301}", nil, "aa"]
    static let names = ["x", "y", "z", "Ann", "ann", "bob", "Émile", "zoë", ""]

    @Test("random transactions: old snapshot + diff == new snapshot == fresh query", arguments: variants)
    func randomTransactions(_ variant: Variant) async throws {
        let fixture = try LiveResultFixture()
        var random = SeededRandom(seed: variant.seed)
        var items: [Int64: LiveResultFixture.Item] = [:]
        var nextID: Int64 = 1

        func randomItem(id: Int64, group: Int64) -> LiveResultFixture.Item {
            LiveResultFixture.Item(
                id: id, groupID: group,
                category: Self.categories.randomElement(using: &random) ?? nil,
                score: Int.random(in: 0 ..< 10, using: &random) == 0 ? nil : Int64.random(in: 0 ..< 20, using: &random),
                name: Self.names.randomElement(using: &random) ?? "",
                price: Double(Int.random(in: 0 ..< 30, using: &random)) / 4,
                flag: Bool.random(using: &random))
        }
        func mutate(_ item: inout LiveResultFixture.Item) {
            switch Int.random(in: 0 ..< 4, using: &random) {
            case 0: item.category = Self.categories.randomElement(using: &random) ?? nil
            case 1: item.score = Int64.random(in: 0 ..< 20, using: &random)
            case 2: item.price = Double(Int.random(in: 0 ..< 30, using: &random)) / 4
            default: item.name = Self.names.randomElement(using: &random) ?? ""; item.flag.toggle()
            }
        }

        // A first batch so that the result starts non-empty.
        var seedItems: [LiveResultFixture.Item] = []
        for _ in 0 ..< 20 {
            seedItems.append(randomItem(id: nextID, group: Int64.random(in: 1 ... 4, using: &random)))
            nextID += 1
        }
        for item in seedItems { items[item.id] = item }
        try await fixture.upsert(seedItems)

        let resultSet = try LiveResultSet(engine: fixture.engine, query: variant.query)
        defer { resultSet.close() }
        let updates = resultSet.updates()
        var iterator = updates.makeAsyncIterator()
        var last = updates.initial
        #expect(last == (try fixture.freshSnapshot(variant.query)))
        var diffCount = 0
        var kinds = [String: Int]()

        for step in 0 ..< 500 {
            let kind = Int.random(in: 0 ..< 20, using: &random)
            if kind < 9 {
                // Upsert a few items, new or changed.
                var batch: [LiveResultFixture.Item] = []
                for _ in 0 ..< Int.random(in: 1 ... 4, using: &random) {
                    if items.isEmpty || Int.random(in: 0 ..< 3, using: &random) == 0 {
                        batch.append(randomItem(id: nextID, group: Int64.random(in: 1 ... 4, using: &random)))
                        nextID += 1
                    } else if let id = items.keys.sorted().randomElement(using: &random), var item = items[id] {
                        mutate(&item)
                        batch.append(item)
                    }
                }
                for item in batch { items[item.id] = item }
                try await fixture.upsert(batch)
            } else if kind < 18 {
                // Replace a group: drop some (deleted as stale), change some, add some.
                let group = Int64.random(in: 1 ... 4, using: &random)
                var kept: [LiveResultFixture.Item] = []
                for id in items.keys.sorted() where items[id]?.groupID == group {
                    guard var item = items[id] else { continue }
                    if Int.random(in: 0 ..< 4, using: &random) == 0 {
                        items[id] = nil
                        continue
                    }
                    if Int.random(in: 0 ..< 3, using: &random) == 0 { mutate(&item) }
                    kept.append(item)
                }
                for _ in 0 ..< Int.random(in: 0 ... 3, using: &random) {
                    kept.append(randomItem(id: nextID, group: group))
                    nextID += 1
                }
                kept.shuffle(using: &random)
                for item in kept { items[item.id] = item }
                try await fixture.replaceGroup(group, with: kept)
            } else if kind == 18 {
                // Written behind the engine's back, then announced as unknown changes.
                let victim = items.keys.sorted().randomElement(using: &random)
                let score = Int64.random(in: 0 ..< 20, using: &random)
                try await fixture.store.database.write { db in
                    try db.execute(sql: "UPDATE items SET score = ? WHERE id % 3 = 0", arguments: [score])
                    if let victim { try db.execute(sql: "DELETE FROM items WHERE id = ?", arguments: [victim]) }
                }
                if let victim { items[victim] = nil }
                for (id, item) in items where id % 3 == 0 { var changed = item; changed.score = score; items[id] = changed }
                fixture.engine.publishUnknownChanges(entities: ["Item"])
            } else {
                // Another entity: costs the result set nothing.
                _ = try await fixture.engine.sync(.get, "/tags", body: Data(#"[{"id": \#(step), "label": "t"}]"#.utf8))
            }

            let snapshot = resultSet.snapshot
            let fresh = try fixture.freshSnapshot(variant.query)
            #expect(snapshot == fresh, "step \(step): live \(snapshot) vs fresh \(fresh)")
            #expect(snapshot.holdsRows == (variant.query.residentRowLimit > 0) || snapshot.isEmpty)
            if !snapshot.holdsRows {
                // Rows read on access (through the cache the result set keeps current) are the store's.
                let read = Array(snapshot.rows)
                #expect(read.count == fresh.count && zip(read, fresh.rows).allSatisfy { $0.isIdentical(to: $1) },
                        "step \(step): rows read \(read) vs fresh \(Array(fresh.rows))")
                #expect(try snapshot.rows(in: 0 ..< snapshot.count).map(\.primaryKey) == read.map(\.primaryKey))
            }
            // A new diff (equality alone cannot tell when the snapshots hold no row values).
            if resultSet.statistics.diffs != diffCount {
                guard let update = await iterator.next() else {
                    Issue.record("the update sequence ended")
                    return
                }
                #expect(update.previous == last)
                #expect(update.snapshot == snapshot)
                #expect(try update.diff.apply(to: last) == snapshot, "step \(step): \(update.diff)")
                #expect(try ResultDiff(from: last, to: snapshot).apply(to: last) == snapshot)
                diffCount += 1
                let diff = update.diff
                for (name, count) in [("sectionInserts", diff.sectionInserts.count), ("sectionDeletes", diff.sectionDeletes.count),
                                      ("inserts", diff.rowInserts.count), ("deletes", diff.rowDeletes.count),
                                      ("moves", diff.rowMoves.count), ("updates", diff.rowUpdates.count)] {
                    kinds[name, default: 0] += count
                }
                last = snapshot
            }
            if snapshot != fresh { break }
        }
        let statistics = resultSet.statistics
        #expect(diffCount > 50)
        for kind in ["inserts", "deletes", "moves", "updates"] { #expect(kinds[kind, default: 0] > 0, "no \(kind): \(kinds)") }
        if variant.query.sectionKey != nil {
            #expect(kinds["sectionInserts", default: 0] > 0 && kinds["sectionDeletes", default: 0] > 0, "\(kinds)")
        }
        if variant.query.limit != nil { #expect(statistics.requeries > 1, "the window had to be re-read: \(statistics)") }
        #expect(statistics.keyFetches > statistics.requeries, "\(statistics)")
        if variant.query.limit == nil {
            #expect(statistics.incrementalDiffs > diffCount / 2, "most diffs come from the changed keys alone: \(statistics)")
        }
        #expect(statistics.catchUpDiffs == 0, "a consumer in lockstep gets the incremental diffs")
        if variant.query.residentRowLimit == 0 {
            #expect(statistics.resets > 0, "unknown changes to a snapshot without rows are resets: \(statistics)")
        }
    }
}
