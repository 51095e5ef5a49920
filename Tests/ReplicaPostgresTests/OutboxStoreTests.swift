import Foundation
import Replica
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// Local writes in the outbox, on SQLite and PostgreSQL alike: the row and its mutation in one
/// transaction, and every later sync rebased under what is pending.
@Suite("Outbox: local writes and the rebase, on SQLite and PostgreSQL")
struct OutboxStoreTests {
    private func names(_ store: any ReplicaStore) async throws -> [Int64: String] {
        var names: [Int64: String] = [:]
        for row in try await store.rows(RowQuery("Person")) {
            if case .integer(let id)? = row["id"], case .string(let name)? = row["name"] { names[id] = name }
        }
        return names
    }

    @Test("a local save changes the row and queues its mutation in one commit, which observers see", arguments: StoreKind.allCases)
    func saveLocally(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        try await withTeardown {
            let store = test.store
            _ = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 2), (2, "Bob", 0)]), options: SyncOptions())
            let changes = await store.changes(for: ["Person"])
            var iterator = changes.makeAsyncIterator()
            let mutation = try await store.saveLocally("Person", ["id": .integer(2), "name": .string("Robert")])
            #expect(mutation.kind == .update)
            #expect(mutation.entity == "Person")
            #expect(mutation.key == .integer(2))
            #expect(mutation.changes == ["id": .integer(2), "name": .string("Robert")])
            #expect(mutation.state == .pending)
            #expect(mutation.attempts == 0)
            #expect(UUID(uuidString: mutation.idempotencyKey) != nil)
            let published = await iterator.next()
            #expect(published?["Person"]?.updated.integers == [2])
            #expect(published?["Person"]?.inserted.isEmpty == true)
            #expect(try await names(store) == [1: "Ann", 2: "Robert"])
            #expect(try await store.outbox() == [mutation])
            #expect(try await store.pendingKeys("Person").integers == [2])
            // Readable in SQL too, beside the entity's rows.
            #expect(try await store.count("Person", where: "CAST(id AS TEXT) IN (SELECT key FROM replica_outbox "
                                          + "WHERE entity = 'Person' AND state = 'pending')", arguments: []) == 1)
        } teardown: {
            await test.close()
        }
    }

    @Test("a sync writes the server's rows, then the pending changes on top: nothing pending is overwritten or deleted as stale",
          arguments: StoreKind.allCases)
    func rebase(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        try await withTeardown {
            let store = test.store
            _ = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 2), (2, "Bob", 0), (3, "Cy", 1)]),
                                     options: SyncOptions())
            try await store.saveLocally("Person", ["id": .integer(1), "name": .string("Anna")])
            try await store.saveLocally("Person", ["id": .integer(9), "name": .string("Nina")])
            try await store.deleteLocally("Person", key: .integer(3))
            #expect(try await names(store) == [1: "Anna", 2: "Bob", 9: "Nina"])

            // The server renamed Ann and Bob and changed Ann's kids; it has neither Nina nor the
            // deletion yet, and still lists Cy.
            let result = try await store.sync(.get, "/people", body: peopleJSON([(1, "Annie", 3), (2, "Bobby", 0), (3, "Cy", 1)]),
                                              options: SyncOptions())
            #expect(try await names(store) == [1: "Anna", 2: "Bobby", 9: "Nina"])
            let ann = try await store.rows(RowQuery("Person", where: "id = 1")).first
            #expect(ann?["numberOfKids"] == .integer(3))
            // Cy came back from the server and went again: no change at all. Ann's row took the
            // server's kids.
            #expect(result.changes["Person"]?.inserted.isEmpty == true)
            #expect(result.changes["Person"]?.deleted.isEmpty == true)
            #expect(result.changes["Person"]?.updated.integers.sorted() == [1, 2])
            #expect(try await store.outbox().map(\.kind) == [.update, .create, .delete])
        } teardown: {
            await test.close()
        }
    }

    @Test("a sync the pending changes already match reports nothing for their rows", arguments: StoreKind.allCases)
    func rebaseUnchanged(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        try await withTeardown {
            let store = test.store
            _ = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 2), (2, "Bob", 0)]), options: SyncOptions())
            try await store.saveLocally("Person", ["id": .integer(1), "name": .string("Anna")])
            let again = try await store.sync(.get, "/people", body: peopleJSON([(1, "Anna", 2), (2, "Bob", 0)]), options: SyncOptions())
            #expect(again.changes["Person"] == nil)
        } teardown: {
            await test.close()
        }
    }

    @Test("a new row without a key gets a temporary one below every stored key", arguments: StoreKind.allCases)
    func temporaryKeys(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        try await withTeardown {
            let store = test.store
            _ = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 2)]), options: SyncOptions())
            let first = try await store.saveLocally("Person", ["name": .string("New")])
            let second = try await store.saveLocally("Person", ["name": .string("Newer")])
            #expect(first.key == .integer(-1))
            #expect(first.kind == .create)
            #expect(first.changes == ["name": .string("New")])
            #expect(second.key == .integer(-2))
            #expect(try await names(store) == [1: "Ann", -1: "New", -2: "Newer"])
            // Values take their attributes' types: an ISO 8601 string would become a date, an exact double an integer.
            let converted = try await store.saveLocally("Person", ["id": .integer(1), "numberOfKids": .double(4)])
            #expect(converted.changes["numberOfKids"] == .integer(4))
        } teardown: {
            await test.close()
        }
    }

    @Test("a local write that cannot be stored is refused whole, naming what", arguments: StoreKind.allCases)
    func refused(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        try await withTeardown { () async throws in
            let store = test.store
            await #expect { try await store.saveLocally("Person", ["id": .integer(1), "age": .integer(3)]) } throws: { error in
                guard let error = error as? SyncError else { return false }
                return error.code == .invalidWrite
                    && error.message == "Person has no attribute 'age' (it has id, name, numberOfKids, kilometersWalked, avatar); nothing was written"
            }
            await #expect { try await store.saveLocally("Person", ["id": .integer(1), "numberOfKids": .string("two")]) } throws: { error in
                (error as? SyncError)?.message == "Person.numberOfKids is integer: cannot hold two; nothing was written"
            }
            await #expect { try await store.saveLocally("Animal", ["id": .integer(1)]) } throws: { error in
                (error as? SyncError)?.code == .unknownEntity
            }
            await #expect { try await store.deleteLocally("Person", key: .compositeKey([.integer(1), .integer(2)])) } throws: { error in
                (error as? SyncError)?.code == .invalidKey
            }
            #expect(try await store.outbox().isEmpty)
            #expect(try await store.rows(RowQuery("Person")).isEmpty)
        } teardown: {
            await test.close()
        }
    }

    @Test("a discarded mutation leaves the outbox and is no longer applied by the next sync", arguments: StoreKind.allCases)
    func discard(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        try await withTeardown { () async throws in
            let store = test.store
            _ = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 2)]), options: SyncOptions())
            let mutation = try await store.saveLocally("Person", ["id": .integer(1), "name": .string("Anna")])
            try await store.discardMutation(mutation.id)
            #expect(try await store.outbox().isEmpty)
            #expect(try await names(store) == [1: "Anna"])
            _ = try await store.sync(.get, "/people", body: peopleJSON([(1, "Ann", 2)]), options: SyncOptions())
            #expect(try await names(store) == [1: "Ann"])
            await #expect { try await store.discardMutation(mutation.id) } throws: { error in
                (error as? SyncError)?.message == "the outbox has no mutation #\(mutation.id)"
            }
            await #expect { try await store.retryMutation(mutation.id) } throws: { error in
                (error as? SyncError)?.code == .invalidWrite
            }
        } teardown: {
            await test.close()
        }
    }
}
