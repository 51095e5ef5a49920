import Foundation
import GRDB
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Snapshot rows that fail to load")
struct SnapshotLoadErrorTests {
    typealias Item = LiveResultFixture.Item

    struct Named: Decodable, Equatable { var id: Int64; var name: String }

    static func item(_ id: Int64) -> Item {
        Item(id: id, groupID: 1, category: "c\(id % 3)", score: id, name: "n\(id)", price: Double(id), flag: false)
    }

    /// A query whose snapshots never hold their rows: every row is read on access, 10 per query.
    static var lazyQuery: LiveQuery {
        var query = LiveQuery("Item", sort: [.ascending("id")])
        query.residentRowLimit = 0
        query.rowBatchSize = 10
        return query
    }

    static func path(_ row: Int) -> ResultIndexPath { ResultIndexPath(section: 0, row: row) }

    /// A store of 50 items and a lazy live result set on them (rows read 10 at a time).
    static func lazySet() async throws -> (LiveResultFixture, LiveResultSet) {
        let fixture = try LiveResultFixture()
        try await fixture.upsert((1 ... 50).map { item($0) })
        return (fixture, try LiveResultSet(engine: fixture.engine, query: lazyQuery))
    }

    /// Drops the items' table under the live result set: every later read of a row fails.
    static func dropItems(_ fixture: LiveResultFixture) async throws {
        let table = try fixture.store.requireEntity("Item").tableName
        try await fixture.store.database.write { db in try db.execute(sql: "DROP TABLE \(table.quotedIdentifier)") }
    }

    @Test("a read that fails under a lazy snapshot throws from loadRow, rows(in:) and decode, naming the entity, and is recorded in loadError")
    func readFailureSurfaces() async throws {
        let (fixture, set) = try await Self.lazySet()
        defer { set.close() }
        let snapshot = set.snapshot
        #expect(!snapshot.holdsRows && snapshot.count == 50 && snapshot.loadError == nil)
        #expect(try snapshot.loadRow(at: Self.path(0))?["name"] == .string("n1"), "rows 1–10 are read and cached")

        // The table disappears under the snapshot.
        try await Self.dropItems(fixture)

        let thrown = #expect(throws: StoreError.self) { try snapshot.loadRow(at: Self.path(20)) }
        #expect(thrown?.code == .sqlite)
        #expect(thrown?.message.hasPrefix("cannot read 10 rows (keys 21 … 30) of 'Item' for a live result: ") == true,
                "\(thrown.map(String.init(describing:)) ?? "")")
        #expect(thrown?.message.contains("no such table") == true, "the store's own message is kept")
        #expect(snapshot.loadError == thrown, "a thrown failure is recorded too")

        let range = #expect(throws: StoreError.self) { try snapshot.rows(in: 30 ..< 35) }
        #expect(range?.message.contains("of 'Item'") == true)
        let decoded = #expect(throws: StoreError.self) { try snapshot.decode(Named.self, at: Self.path(40)) }
        #expect(decoded?.code == .sqlite, "the read failure, not a decoding error about a row of nulls")
        #expect(throws: StoreError.self) { try snapshot.decode(Named.self, in: 40 ..< 41) }

        // Rows already read still come from the cache.
        #expect(try snapshot.loadRow(at: Self.path(1))?["name"] == .string("n2"))
        #expect(try snapshot.rows(in: 0 ..< 10).map(\.primaryKey) == (1 ... 10).map { .integer($0) })
        // Out of range is not a read.
        #expect(try snapshot.loadRow(at: Self.path(50)) == nil)
    }

    @Test("accessors that cannot throw return the row's placeholder and record the error in loadError")
    func nonThrowingAccessorsRecord() async throws {
        let (fixture, set) = try await Self.lazySet()
        defer { set.close() }
        let snapshot = set.snapshot
        try await Self.dropItems(fixture)

        let row = try #require(snapshot.row(at: Self.path(44)))
        #expect(row.primaryKey == .integer(45) && row["name"] == .null, "a placeholder: key and sort values only")
        let recorded = try #require(snapshot.loadError, "the failure is not silent")
        #expect(recorded.message.hasPrefix("cannot read 10 rows (keys 41 … 50) of 'Item' for a live result: "), "\(recorded)")

        // Its rows and sections record into the snapshot.
        #expect(snapshot.rows[5]["name"] == .null && snapshot.sections[0].rows[15]["name"] == .null)
        #expect(snapshot.loadError?.message.contains("(keys 16 … 25)") == true, "the latest failure: \(snapshot.loadError.map(String.init(describing:)) ?? "")")
    }

    @Test("a row deleted since the snapshot reads as its placeholder without any load error")
    func deletedRowIsNotAnError() async throws {
        let (fixture, set) = try await Self.lazySet()
        defer { set.close() }
        let snapshot = set.snapshot
        try await fixture.replaceGroup(1, with: (1 ... 40).map { Self.item($0) })
        let row = try #require(try snapshot.loadRow(at: Self.path(44)))
        #expect(row.primaryKey == .integer(45) && row["name"] == .null && row["score"] == .null)
        #expect(snapshot.row(at: Self.path(40))?["name"] == .null)
        #expect(try snapshot.loadRow(at: Self.path(39))?["name"] == .string("n40"))
        #expect(snapshot.loadError == nil, "deleted rows are not read errors")
    }

    /// A row source whose row reads fail with an error of its own (a store of another module).
    struct UnreachableSource: LiveRowSource {
        struct Unreachable: Error, CustomStringConvertible {
            var description: String { "the replica's server is unreachable" }
        }

        let store: Store
        func requireEntity(_ name: String) throws -> Entity { try store.requireEntity(name) }
        func loadLive(_ request: LiveLoadRequest) throws -> LiveLoad { try store.loadLive(request) }
        func liveRows(of entity: Entity, keys: [AttributeValue], predicate: RowPredicate) throws -> [EntityRow] {
            throw Unreachable()
        }
    }

    @Test("a failing row source's own error becomes a StoreError naming the entity and the key, in sections too")
    func failingRowSource() async throws {
        let fixture = try LiveResultFixture()
        try await fixture.upsert((1 ... 30).map { Self.item($0) })
        var query = Self.lazyQuery
        query.sectionKey = "category"
        query.sort = [.ascending("category"), .ascending("id")]
        query.rowBatchSize = 1
        let source = UnreachableSource(store: fixture.store)
        let snapshot = try QueryPlan(query: query, source: source).load(source)
        #expect(!snapshot.holdsRows && snapshot.sections.count == 3)

        let thrown = #expect(throws: StoreError.self) { try snapshot.loadRow(at: ResultIndexPath(section: 1, row: 0)) }
        #expect(thrown?.code == .sqlite && thrown?.path == nil)
        #expect(thrown?.message == "cannot read row 1 of 'Item' for a live result: the replica's server is unreachable",
                "\(thrown.map(String.init(describing:)) ?? "")")

        let placeholder = snapshot.sections[2].rows[1]
        #expect(placeholder.primaryKey == .integer(5) && placeholder["category"] == .string("c2") && placeholder["name"] == .null,
                "key and sort values")
        #expect(snapshot.loadError?.message == "cannot read row 5 of 'Item' for a live result: the replica's server is unreachable")
    }
}
