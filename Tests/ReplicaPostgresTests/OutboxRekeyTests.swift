import Foundation
import Replica
import ReplicaCore
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// A row saved locally under a temporary key takes the API's key when its create is confirmed:
/// change observers and live result sets see one row that changed, not one that left and
/// another that came.
@Suite("Outbox: a confirmed create's new key is one row changed, in change sets and live result sets")
struct OutboxRekeyTests {
    static func keys(_ snapshot: ResultSnapshot) -> [AttributeValue] { Array(snapshot.rows.keys) }

    /// The next update of `iterator` whose snapshot shows `key`.
    static func update(showing key: AttributeValue, _ iterator: inout LiveResultUpdates.AsyncIterator) async throws -> LiveResultUpdate {
        while true {
            let update = try #require(await iterator.next())
            if keys(update.snapshot).contains(key) { return update }
        }
    }

    @Test("the change set lists the row updated and rekeyed; a list by name gets one update, a list by key one move",
          arguments: StoreKind.allCases)
    func oneRowChanged(kind: StoreKind) async throws {
        let loop = try await OutboxPushTests.Loop.start(kind)
        // A replica of another process too: on PostgreSQL it learns of the commit by LISTEN; on
        // SQLite by polling the file, and of the new key from the file's rekey log.
        var elsewhere: (any ReplicaStore)?
        var monitor: ExternalChangeMonitor?
        switch kind {
        case .postgres:
            elsewhere = try await PostgresReplica.open(url: try #require(loop.test.url))
        case .sqlite:
            let other = try SQLiteReplica(store: Store(path: try #require(loop.test.path)))
            monitor = other.detectExternalChanges(every: .milliseconds(20))
            elsewhere = other
        }
        let byName = try await LiveResultSet(store: loop.store, query: LiveQuery("Person", sort: [.ascending("name")]))
        let byKey = try await LiveResultSet(store: loop.store, query: LiveQuery("Person", sort: [.ascending("id")]))
        var afar: LiveResultSet?
        if let elsewhere { afar = try await LiveResultSet(store: elsewhere, query: LiveQuery("Person", sort: [.ascending("name")])) }
        try await withTeardown {
            let changes = await loop.store.changes(for: ["Person"])
            var changeSets = changes.makeAsyncIterator()
            var names = byName.updates().makeAsyncIterator()
            var ids = byKey.updates().makeAsyncIterator()
            var far = afar?.updates().makeAsyncIterator()

            try await loop.store.saveLocally("Person", ["name": .string("Cy")])
            let saved = try #require(await changeSets.next())
            #expect(saved["Person"]?.inserted.values == [.integer(-1)])
            let pendingByName = try await Self.update(showing: .integer(-1), &names)
            let pendingByKey = try await Self.update(showing: .integer(-1), &ids)
            #expect(Self.keys(pendingByKey.snapshot) == [.integer(-1), .integer(1), .integer(2)])
            var pendingFar: LiveResultUpdate?
            if far != nil { pendingFar = try await Self.update(showing: .integer(-1), &far!) }

            let pushed = try await loop.client.push()
            #expect(pushed.description == "1 confirmed, 0 rejected, 0 still pending")
            var confirmed = try #require(await changeSets.next())
            while confirmed["Person"]?.rekeyed.isEmpty != false { confirmed = try #require(await changeSets.next()) }
            let person = try #require(confirmed["Person"])
            #expect(person.rekeyed == [KeyChange(from: .integer(-1), to: .integer(3))])
            #expect(person.updated.values == [.integer(3)])
            #expect(person.inserted.isEmpty && person.deleted.isEmpty)
            #expect(person.description == "0 inserted, 1 updated, 0 deleted, 1 rekeyed")

            // By name, Cy stays last: one update of the row, under its new key.
            let byNameUpdate = try await Self.update(showing: .integer(3), &names)
            #expect(Self.keys(byNameUpdate.snapshot) == [.integer(1), .integer(2), .integer(3)])
            #expect(byNameUpdate.diff.rowInserts.isEmpty && byNameUpdate.diff.rowDeletes.isEmpty && byNameUpdate.diff.rowMoves.isEmpty)
            let update = try #require(byNameUpdate.diff.rowUpdates.first)
            #expect(byNameUpdate.diff.rowUpdates.count == 1)
            #expect(update.key == .integer(3) && update.previousKey == .integer(-1))
            #expect(update.description == "-1 → 3 [0, 2] → [0, 2]")
            #expect(update.row["name"] == .string("Cy"))
            #expect(try byNameUpdate.diff.apply(to: pendingByName.snapshot) == byNameUpdate.snapshot)

            // By key, the row goes from first to last: one move.
            let byKeyUpdate = try await Self.update(showing: .integer(3), &ids)
            #expect(Self.keys(byKeyUpdate.snapshot) == [.integer(1), .integer(2), .integer(3)])
            #expect(byKeyUpdate.diff.rowInserts.isEmpty && byKeyUpdate.diff.rowDeletes.isEmpty && byKeyUpdate.diff.rowUpdates.isEmpty)
            #expect(byKeyUpdate.diff.rowMoves.map(\.description) == ["-1 → 3 [0, 0] → [0, 2]"])
            #expect(byKeyUpdate.diff.steps.first == .removeRow(key: .integer(-1), at: ResultIndexPath(section: 0, row: 0),
                                                                movingTo: ResultIndexPath(section: 0, row: 2)))
            #expect(try byKeyUpdate.diff.apply(to: pendingByKey.snapshot) == byKeyUpdate.snapshot)

            // Another process's live result set hears the same.
            if let pendingFar {
                let farUpdate = try await Self.update(showing: .integer(3), &far!)
                #expect(farUpdate.diff.rowUpdates.map(\.description) == ["-1 → 3 [0, 2] → [0, 2]"])
                #expect(farUpdate.diff.rowInserts.isEmpty && farUpdate.diff.rowDeletes.isEmpty)
                #expect(try farUpdate.diff.apply(to: pendingFar.snapshot) == farUpdate.snapshot)
            }
        } teardown: {
            byName.close()
            byKey.close()
            afar?.close()
            monitor?.stop()
            await elsewhere?.close()
            await loop.stop()
        }
    }

    @Test("a row the API's key already names (a sync brought it before the confirmation) stays, the temporary one is deleted",
          arguments: StoreKind.allCases)
    func keyAlreadyThere(kind: StoreKind) async throws {
        let loop = try await OutboxPushTests.Loop.start(kind, interceptors: [OutboxPushTests.LosingAnswers(1)])
        let byName = try await LiveResultSet(store: loop.store, query: LiveQuery("Person", sort: [.ascending("name"), .ascending("id")]))
        try await withTeardown {
            var updates = byName.updates().makeAsyncIterator()
            try await loop.store.saveLocally("Person", ["name": .string("Cy")])
            // The API makes row 3, and the answer is lost; a sync brings row 3 beside the pending -1.
            _ = try await loop.client.push()
            _ = try await loop.client.call("/people")
            #expect(try await loop.local() == ["-1: Cy", "1: Ann", "2: Bob", "3: Cy"])
            // The live result set shows both before the confirmation comes (not one diff for both commits).
            _ = try await Self.update(showing: .integer(3), &updates)
            let pushed = try await loop.client.push()
            #expect(pushed.confirmed.count == 1)
            #expect(try await loop.local() == ["1: Ann", "2: Bob", "3: Cy"])
            var last = try #require(await updates.next())
            while Self.keys(last.snapshot).contains(.integer(-1)) { last = try #require(await updates.next()) }
            #expect(Self.keys(last.snapshot) == [.integer(1), .integer(2), .integer(3)])
            #expect(last.diff.rowDeletes.map(\.key) == [.integer(-1)])
            #expect(last.diff.rowInserts.isEmpty)
            #expect(last.diff.rowUpdates.allSatisfy { $0.previousKey == nil })
        } teardown: {
            byName.close()
            await loop.stop()
        }
    }
}

/// Diffs with renames computed from two snapshots (the path of a limited query).
@Suite("Outbox: a rekeyed row in a limited live result set")
struct RekeyedLimitedTests {
    @Test("a limited live result set reports a rekeyed row as one update", arguments: StoreKind.allCases)
    func limited(kind: StoreKind) async throws {
        let loop = try await OutboxPushTests.Loop.start(kind)
        var query = LiveQuery("Person", sort: [.ascending("name")])
        query.limit = 2
        let results = try await LiveResultSet(store: loop.store, query: query)
        try await withTeardown {
            var updates = results.updates().makeAsyncIterator()
            try await loop.store.saveLocally("Person", ["name": .string("Al")])
            let pending = try await OutboxRekeyTests.update(showing: .integer(-1), &updates)
            #expect(pending.snapshot.rows.keys.map(\.description) == ["-1", "1"])
            _ = try await loop.client.push()
            let update = try await OutboxRekeyTests.update(showing: .integer(3), &updates)
            #expect(update.snapshot.rows.keys.map(\.description) == ["3", "1"])
            #expect(update.diff.rowUpdates.map(\.description) == ["-1 → 3 [0, 0] → [0, 0]"])
            #expect(update.diff.rowInserts.isEmpty && update.diff.rowDeletes.isEmpty && update.diff.rowMoves.isEmpty)
            #expect(try update.diff.apply(to: pending.snapshot) == update.snapshot)
        } teardown: {
            results.close()
            await loop.stop()
        }
    }
}
