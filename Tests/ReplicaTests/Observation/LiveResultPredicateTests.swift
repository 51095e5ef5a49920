import Foundation
import GRDB
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("LiveResult predicates and queries")
struct LiveResultPredicateTests {
    @Test("typed comparisons produce quoted-identifier SQL and bound arguments")
    func typedComparisons() {
        #expect(RowPredicate.equal("userID", .integer(3)) == RowPredicate(sql: #""userID" = ?"#, arguments: [.integer(3)]))
        #expect(RowPredicate.equal("a", .null).sql == #""a" IS NULL"#)
        #expect(RowPredicate.notEqual("a", .null).sql == #""a" IS NOT NULL"#)
        #expect(RowPredicate.notEqual("a", .string("x")).sql == #""a" <> ?"#)
        #expect(RowPredicate.less("a", .integer(1)).sql == #""a" < ?"#)
        #expect(RowPredicate.lessOrEqual("a", .integer(1)).sql == #""a" <= ?"#)
        #expect(RowPredicate.greater("a", .integer(1)).sql == #""a" > ?"#)
        #expect(RowPredicate.greaterOrEqual("a", .integer(1)).sql == #""a" >= ?"#)
        #expect(RowPredicate.isNull("a").arguments.isEmpty)
        #expect(RowPredicate.in("s", [.string("x"), .string("y")]) == RowPredicate(sql: #""s" IN (?, ?)"#,
                                                                                   arguments: [.string("x"), .string("y")]))
        #expect(RowPredicate.in("s", []).sql == "0")
        #expect(RowPredicate.like("e", "%@x.org") == RowPredicate(sql: #""e" LIKE ?"#, arguments: [.string("%@x.org")]))
        // Identifiers with quotes are escaped, never spliced.
        #expect(RowPredicate.isNull(#"we"ird"#).sql == #""we""ird" IS NULL"#)
    }

    @Test("&&, || and ! parenthesize and concatenate arguments; .all is the identity of &&")
    func combinators() {
        let p = RowPredicate.equal("a", .integer(1)) && (.less("b", .integer(2)) || !.like("c", "x%"))
        #expect(p.sql == #"(("a" = ?) AND ((("b" < ?) OR ((NOT ("c" LIKE ?))))))"#)
        #expect(p.arguments == [.integer(1), .integer(2), .string("x%")])
        #expect((RowPredicate.all && .isNull("a")) == .isNull("a"))
        #expect((RowPredicate.isNull("a") && .all) == .isNull("a"))
        #expect((RowPredicate.isNull("a") || .all).isAll)
        #expect(RowPredicate(sql: "").isAll)
    }

    @Test("typed predicates select the same rows as SQLite: bools, nulls, IN, LIKE")
    func predicatesRun() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert([
            .init(id: 1, groupID: 1, category: "a", score: 5, name: "Ann", price: 1, flag: true),
            .init(id: 2, groupID: 1, category: nil, score: nil, name: "bob", price: 2, flag: false),
            .init(id: 3, groupID: 2, category: "b", score: 9, name: "ann", price: 3, flag: true),
        ])
        func keys(_ predicate: RowPredicate) throws -> [AttributeValue] {
            try LiveResultSet(engine: fixture.engine, query: LiveQuery("Item", where: predicate)).snapshot.rows.map(\.primaryKey)
        }
        #expect(try keys(.equal("flag", .bool(true))) == [.integer(1), .integer(3)])
        #expect(try keys(.equal("category", .null)) == [.integer(2)])
        #expect(try keys(.notEqual("category", .string("a"))) == [.integer(3)])
        #expect(try keys(.in("category", [.string("a"), .string("b")]) && .greater("score", .integer(6))) == [.integer(3)])
        #expect(try keys(.like("name", "an%")) == [.integer(1), .integer(3)])
        #expect(try keys(!.isNull("score") && .lessOrEqual("price", .double(2))) == [.integer(1)])
    }

    @Test("the section key leads the effective sort; the store breaks ties by primary key")
    func effectiveSort() {
        let prepended = LiveQuery("Item", sort: [.descending("score"), .ascending("category")], sectionKey: "category")
        #expect(prepended.effectiveSort == [.ascending("category"), .descending("score")])
        let kept = LiveQuery("Item", sort: [.descending("category"), .ascending("name")], sectionKey: "category")
        #expect(kept.effectiveSort == kept.sort)
        #expect(LiveQuery("Item", sort: [.ascending("name")]).effectiveSort == [.ascending("name")])
    }

    @Test("invalid queries throw: unknown entity, sort attribute or section key, bad SQL")
    func invalidQueries() throws {
        let fixture = try LiveResultFixture()
        #expect { try LiveResultSet(engine: fixture.engine, query: LiveQuery("Nope")) } throws: {
            ($0 as? StoreError)?.code == .unknownEntity
        }
        #expect { try LiveResultSet(engine: fixture.engine, query: LiveQuery("Item", sort: [.ascending("nope")])) } throws: {
            ($0 as? StoreError)?.code == .unknownAttribute
        }
        #expect { try LiveResultSet(engine: fixture.engine, query: LiveQuery("Item", sectionKey: "nope")) } throws: {
            ($0 as? LiveResultError)?.code == .invalidQuery
        }
        #expect { try LiveResultSet(engine: fixture.engine, query: LiveQuery("Item", where: "score >>> ?")) } throws: {
            ($0 as? StoreError)?.code == .sqlite
        }
        // A failed open leaves no observer behind.
        let probe = fixture.engine.addObserver(queue: DispatchQueue(label: "probe")) { _ in }
        for id in 1 ..< probe.id { #expect(!fixture.engine.observers.contains(id)) }
    }

    @Test("SQLite ordering: the Swift comparator sorts mixed values exactly as ORDER BY")
    func orderingMatchesSQLite() throws {
        var random = SeededRandom(seed: 42)
        let texts = ["", "a", "A", "b", "é", "e\u{301}", "z", "Z", "aa", "\u{1F600}", "ß", "ss"]
        var values: [AttributeValue] = [.null, .integer(Int64.max), .integer(Int64.min), .double(9.2e18), .double(-0.5),
                                        .bool(true), .bool(false), .data([]), .data([0, 1]), .data([1])]
        for _ in 0 ..< 200 {
            switch Int.random(in: 0 ..< 5, using: &random) {
            case 0: values.append(.integer(Int64.random(in: -5 ... 5, using: &random)))
            case 1: values.append(.double(Double(Int.random(in: -20 ... 20, using: &random)) / 4))
            case 2: values.append(.string(texts.randomElement(using: &random) ?? ""))
            case 3: values.append(.data((0 ..< Int.random(in: 0 ... 2, using: &random)).map { _ in UInt8.random(in: 0 ... 2, using: &random) }))
            default: values.append(.date(Date(timeIntervalSince1970: Double(Int.random(in: -3 ... 3, using: &random)))))
            }
        }
        let queue = try DatabaseQueue()
        let sqliteOrder: [Int] = try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (i INTEGER PRIMARY KEY, v)")
            for (index, value) in values.enumerated() {
                try db.execute(sql: "INSERT INTO t (i, v) VALUES (?, ?)", arguments: [index, value.databaseValue])
            }
            return try Int.fetchAll(db, sql: "SELECT i FROM t ORDER BY v, i")
        }
        let swiftOrder = values.indices.sorted { a, b in
            let result = SQLiteOrdering.compare(values[a], values[b])
            return result != 0 ? result < 0 : a < b
        }
        #expect(swiftOrder == sqliteOrder)
    }
}
