import Foundation
import NIOCore
import NIOPosix
import Replica
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// Live result sets over both stores: the same snapshots and diffs, on PostgreSQL from syncs
/// made by another replica (another process, as far as the database can tell).
@Suite("Live result sets on SQLite and PostgreSQL")
struct LiveBehaviourTests {
    /// A test store, the live result set on it, and the store that writes (on PostgreSQL a second
    /// replica on the same database: its commits reach the set through LISTEN only).
    struct Fixture {
        let test: TestStore
        let writer: any ReplicaStore
        let results: LiveResultSet
        let close: @Sendable () async -> Void
    }

    static func open(_ kind: StoreKind, query: LiveQuery) async throws -> Fixture {
        let test = try await TestStore.make(kind)
        switch test.store {
        case let engine as SQLiteReplica:
            let results = try LiveResultSet(engine: engine, query: query)
            return Fixture(test: test, writer: engine, results: results, close: { results.close(); await test.close() })
        case let replica as PostgresReplica:
            let url = try #require(test.url)
            let writer = try await PostgresReplica.open(url: url)
            let results = try await LiveResultSet(replica: replica, query: query)
            return Fixture(test: test, writer: writer, results: results,
                           close: { results.close(); await writer.close(); await test.close() })
        default:
            throw CancellationError()
        }
    }

    static func integers(_ keys: [AttributeValue]) -> [Int64] {
        keys.compactMap { if case .integer(let value) = $0 { value } else { nil } }
    }

    @Test("a live result set follows the writer's syncs: inserts, moves, updates, deletes, the predicate and the sort",
          arguments: StoreKind.allCases, [10_000, 0])
    func followsSyncs(kind: StoreKind, residentRowLimit: Int) async throws {
        var query = LiveQuery("Person", where: "numberofkids > ?", arguments: [.integer(0)], sort: [.ascending("name")])
        query.residentRowLimit = residentRowLimit
        let fixture = try await Self.open(kind, query: query)
        try await withTeardown {
        let updates = fixture.results.updates()
        #expect(updates.initial.isEmpty)
        var iterator = updates.makeAsyncIterator()

        _ = try await fixture.writer.sync(.get, "/people", body: peopleJSON([(1, "Cy", 1), (2, "Ann", 2), (3, "Bob", 0)]),
                                          options: SyncOptions())
        let first = try #require(await iterator.next())
        #expect(Self.integers(first.snapshot.rows.keys) == [2, 1])
        #expect(Self.integers(first.diff.rowInserts.map(\.key)).sorted() == [1, 2])
        #expect(first.snapshot.holdsRows == (residentRowLimit > 0))

        // 1 is renamed to the front, 3 now has kids.
        _ = try await fixture.writer.sync(.get, "/people", body: peopleJSON([(1, "Al", 1), (2, "Ann", 2), (3, "Bob", 3)]),
                                          options: SyncOptions())
        let second = try #require(await iterator.next())
        #expect(Self.integers(second.snapshot.rows.keys) == [1, 2, 3])
        #expect(Self.integers(second.diff.rowInserts.map(\.key)) == [3])
        #expect(Self.integers((second.diff.rowMoves + second.diff.rowUpdates).map(\.key)) == [1])
        #expect(second.diff.rowDeletes.isEmpty)
        #expect(second.snapshot.rows.map { $0["name"] } == [.string("Al"), .string("Ann"), .string("Bob")])

        // 1 is gone from the collection (stale), 2 no longer has kids, 3 changes in place.
        _ = try await fixture.writer.sync(.get, "/people", body: peopleJSON([(2, "Ann", 0), (3, "Bob", 4)]),
                                          options: SyncOptions())
        let third = try #require(await iterator.next())
        #expect(Self.integers(third.snapshot.rows.keys) == [3])
        #expect(Self.integers(third.diff.rowDeletes.map(\.key)).sorted() == [1, 2])
        #expect(Self.integers(third.diff.rowUpdates.map(\.key)) == [3])
        #expect(third.snapshot.rows.map { $0["numberOfKids"] } == [.integer(4)])

        let fresh = try await fixture.test.store.rows(RowQuery("Person", where: "numberOfKids > ?", arguments: [.integer(0)],
                                                               sort: [.ascending("name")]))
        #expect(fixture.results.snapshot.rows.map(\.values) == fresh.map(\.values))
        } teardown: {
            await fixture.close()
        }
    }

    @Test("sections, a limit and a refreshed predicate read the same on both stores", arguments: StoreKind.allCases)
    func sectionsAndRefresh(kind: StoreKind) async throws {
        let query = LiveQuery("Person", sort: [.descending("numberOfKids"), .ascending("name")], sectionKey: "numberOfKids",
                              limit: 4)
        let fixture = try await Self.open(kind, query: query)
        try await withTeardown {
        let updates = fixture.results.updates()
        var iterator = updates.makeAsyncIterator()
        _ = try await fixture.writer.sync(.get, "/people", body: peopleJSON([(1, "b", 1), (2, "a", 1), (3, "c", 2), (4, "d", nil),
                                                                             (5, "e", 0), (6, "f", 2)]),
                                          options: SyncOptions())
        let loaded = try #require(await iterator.next())
        // Descending puts NULL last, as SQLite does; the limit keeps the first four.
        #expect(loaded.snapshot.sections.map(\.key) == [.integer(2), .integer(1)])
        #expect(Self.integers(loaded.snapshot.rows.keys) == [3, 6, 2, 1])

        let diff = try await fixture.results.refresh(predicate: "name >= ?", arguments: [.string("d")])
        #expect(Self.integers(fixture.results.snapshot.rows.keys) == [6, 5, 4])
        #expect(Self.integers(diff.rowDeletes.map(\.key)).sorted() == [1, 2, 3])
        #expect(fixture.results.snapshot.sections.map(\.key) == [.integer(2), .integer(0), .null])

        let invalid = await #expect(throws: StoreError.self) {
            try await fixture.results.refresh(predicate: "no_such_column = 1")
        }
        #expect(invalid?.description.contains("no_such_column") == true)
        #expect(Self.integers(fixture.results.snapshot.rows.keys) == [6, 5, 4])
        } teardown: {
            await fixture.close()
        }
    }

    @Test("a large snapshot's rows are read on demand from any thread, the event loops the application shares included",
          arguments: StoreKind.allCases)
    func rowsReadOnEventLoops(kind: StoreKind) async throws {
        var query = LiveQuery("Person", sort: [.ascending("name")])
        query.residentRowLimit = 0
        query.rowBatchSize = 1
        let fixture = try await Self.open(kind, query: query)
        try await withTeardown {
        var iterator = fixture.results.updates().makeAsyncIterator()
        _ = try await fixture.writer.sync(.get, "/people", body: peopleJSON([(1, "Cy", 1), (2, "Ann", 2), (3, "Bob", 0)]),
                                          options: SyncOptions())
        let snapshot = try #require(await iterator.next()).snapshot
        #expect(!snapshot.holdsRows)
        // Each loop of NIO's shared group reads one row of its own (a batch of one row is a read
        // each): a store that waited on a future of one of these loops from that loop would trap.
        let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
        var names: [String] = []
        for (index, loop) in loops.enumerated() {
            let position = index % snapshot.rows.count
            let name = try await loop.submit { snapshot.rows[position]["name"]?.jsonValue.stringValue ?? "" }.get()
            names.append(name)
        }
        #expect(names == loops.indices.map { ["Ann", "Bob", "Cy"][$0 % 3] })
        } teardown: {
            await fixture.close()
        }
    }
}
