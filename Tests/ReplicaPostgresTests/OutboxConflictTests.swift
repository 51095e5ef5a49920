import Foundation
import Replica
import ReplicaCore
import ReplicaHTTP
import ReplicaPostgres
import ReplicaServer
import ReplicaTestSupport
import Testing

/// Local changes sent with `If-Match` (the ETag the API gave the row when it last confirmed a
/// change of it), and what each conflict policy does when another client changed the row first.
@Suite("Outbox: preconditions and conflicts, on SQLite and PostgreSQL")
struct OutboxConflictTests {
    /// Ann confirmed once (so her row's ETag is known), then renamed by another client, then
    /// changed locally again: the push meets a 412.
    static func conflicting(_ kind: StoreKind, policy: ConflictPolicy?) async throws -> (OutboxPushTests.Loop, Mutation, PushResult) {
        let loop = try await OutboxPushTests.Loop.start(kind) { configuration in
            if let policy { configuration.conflictPolicies["Person"] = policy }
        }
        let store = loop.store
        try await store.saveLocally("Person", ["id": .integer(1), "name": .string("Ann B.")])
        #expect(try await loop.client.push().confirmed.count == 1)
        let people = try #require(loop.server.resources.first { $0.name == "people" })
        _ = try await loop.server.options.store.modify(people, id: .int(1), values: ["name": .string("Ann C."), "numberOfKids": .int(3)])
        let mutation = try await store.saveLocally("Person", ["id": .integer(1), "name": .string("Ann D.")])
        #expect(mutation.precondition?.hasPrefix("\"") == true)
        let pushed = try await loop.client.push()
        return (loop, mutation, pushed)
    }

    static func row(_ store: any ReplicaStore) async throws -> String {
        let row = try await store.rows(RowQuery("Person", where: "id = 1")).first
        return "\(row?["name"] ?? .null), \(row?["numberOfKids"] ?? .null) kids"
    }

    @Test("server wins by default: the change is rejected with the 412 and the row is the API's", arguments: StoreKind.allCases)
    func serverWins(kind: StoreKind) async throws {
        let (loop, mutation, pushed) = try await Self.conflicting(kind, policy: nil)
        try await withTeardown { () async throws in
            #expect(pushed.description == "0 confirmed, 1 rejected, 0 still pending")
            let rejected = try await loop.store.outbox(.rejected)
            #expect(rejected.map(\.id) == [mutation.id])
            #expect(rejected.first?.rejection?.status == 412)
            #expect(rejected.first?.rejection?.body.contains("does not match") == true)
            #expect(try await Self.row(loop.store) == "Ann C., 3 kids")
            #expect(try await loop.remote().first == "1: Ann C.")
        } teardown: {
            await loop.stop()
        }
    }

    @Test("client wins: sent again without If-Match, the change overwrites the API's row", arguments: StoreKind.allCases)
    func clientWins(kind: StoreKind) async throws {
        let (loop, _, pushed) = try await Self.conflicting(kind, policy: .clientWins)
        try await withTeardown { () async throws in
            #expect(pushed.description == "1 confirmed, 0 rejected, 0 still pending")
            #expect(try await loop.store.outbox().isEmpty)
            #expect(try await loop.remote().first == "1: Ann D.")
            #expect(try await Self.row(loop.store) == "Ann D., 3 kids")
        } teardown: {
            await loop.stop()
        }
    }

    @Test("merge by field: the change's attributes win, the others are the API's", arguments: StoreKind.allCases)
    func mergeFields(kind: StoreKind) async throws {
        let (loop, _, pushed) = try await Self.conflicting(kind, policy: .mergeFields)
        try await withTeardown { () async throws in
            #expect(pushed.description == "1 confirmed, 0 rejected, 0 still pending")
            #expect(try await Self.row(loop.store) == "Ann D., 3 kids")
            _ = try await loop.client.call("/people")
            #expect(try await Self.row(loop.store) == "Ann D., 3 kids")
        } teardown: {
            await loop.stop()
        }
    }

    @Test("a closure decides on the API's row: here, a merge of both names", arguments: StoreKind.allCases)
    func closure(kind: StoreKind) async throws {
        let seen = Locked<[String]>([])
        let (loop, _, pushed) = try await Self.conflicting(kind, policy: .resolve { conflict in
            guard case .string(let theirs)? = conflict.server?["name"], case .string(let ours)? = conflict.mutation.changes["name"] else {
                return .serverWins
            }
            seen.withLock { $0.append("\(conflict.status) \(theirs) / \(ours)") }
            return .send(["id": .integer(1), "name": .string(theirs + " + " + ours)])
        })
        try await withTeardown { () async throws in
            #expect(seen.withLock { $0 } == ["412 Ann C. / Ann D."])
            #expect(pushed.description == "1 confirmed, 0 rejected, 0 still pending")
            #expect(try await loop.remote().first == "1: Ann C. + Ann D.")
            #expect(try await Self.row(loop.store) == "Ann C. + Ann D., 3 kids")
        } teardown: {
            await loop.stop()
        }
    }

    @Test("two changes of a row in one push: the second goes with the ETag the first one's confirmation answered",
          arguments: StoreKind.allCases)
    func chained(kind: StoreKind) async throws {
        let loop = try await OutboxPushTests.Loop.start(kind)
        try await withTeardown { () async throws in
            let store = loop.store
            try await store.saveLocally("Person", ["id": .integer(1), "name": .string("Ann B.")])
            #expect(try await loop.client.push().confirmed.count == 1)
            let first = try await store.saveLocally("Person", ["id": .integer(1), "name": .string("Ann C.")])
            let second = try await store.saveLocally("Person", ["id": .integer(1), "numberOfKids": .integer(4)])
            #expect(first.precondition != nil && second.precondition == first.precondition)
            let pushed = try await loop.client.push()
            #expect(pushed.description == "2 confirmed, 0 rejected, 0 still pending")
            #expect(try await Self.row(store) == "Ann C., 4 kids")
        } teardown: {
            await loop.stop()
        }
    }

    @Test("a row whose version is not known (synced in a collection) is sent without If-Match", arguments: StoreKind.allCases)
    func noVersion(kind: StoreKind) async throws {
        let loop = try await OutboxPushTests.Loop.start(kind)
        try await withTeardown { () async throws in
            let mutation = try await loop.store.saveLocally("Person", ["id": .integer(2), "name": .string("Bobby")])
            #expect(mutation.precondition == nil)
            #expect(try await loop.client.push().confirmed.count == 1)
        } teardown: {
            await loop.stop()
        }
    }

    /// Leaves out the `ETag` of every answer: an API that gives versions in its objects only.
    struct DroppingETags: Interceptor {
        func intercept(_ request: ClientRequest, next: Next) async throws -> ClientResponse {
            var response = try await next(request)
            response.headers = HeaderFields(response.headers.filter { $0.name.lowercased() != "etag" }.map { ($0.name, $0.value) })
            return response
        }
    }

    /// People whose objects carry the version the API numbers (`"versionAttribute": "version"`).
    static func versionedSchema() throws -> Schema {
        try Schema(json: Data(#"""
        {"name": "people", "version": 1, "keyConvention": "camelCase",
         "entities": {"Person": {"table": "people", "versionAttribute": "version",
                                 "attributes": {"id": "integer", "name": "string", "numberOfKids": "integer",
                                                "version": {"type": "integer", "nullable": true}}}},
         "routes": [{"path": "/people", "target": "Person", "stale": "delete"}, {"path": "/people/:id", "target": "Person"}]}
        """#.utf8))
    }

    @Test("without ETags, the entity's version attribute is the precondition: If-Match \"1\" from a synced row, then the version the API answered",
          arguments: StoreKind.allCases)
    func versionAttribute(kind: StoreKind) async throws {
        let loop = try await OutboxPushTests.Loop.start(kind, people: #"[{"id": 1, "name": "Ann", "version": 1}, {"id": 2, "name": "Bob", "version": 1}]"#,
                                                        schema: try Self.versionedSchema(), interceptors: [DroppingETags()])
        try await withTeardown { () async throws in
            let store = loop.store
            func version() async throws -> AttributeValue? { try await store.rows(RowQuery("Person", where: "id = 1")).first?["version"] }
            // A row known only from a sync: its version is the precondition.
            let first = try await store.saveLocally("Person", ["id": .integer(1), "name": .string("Ann B.")])
            #expect(first.precondition == "\"1\"")
            #expect(try await loop.client.push().description == "1 confirmed, 0 rejected, 0 still pending")
            #expect(try await version() == .integer(2))

            // Another client changes the row (version 3); the next local change was made on version 2.
            let people = try #require(loop.server.resources.first { $0.name == "people" })
            _ = try await loop.server.options.store.modify(people, id: .int(1), values: ["name": .string("Ann C."), "version": .int(3)])
            let second = try await store.saveLocally("Person", ["id": .integer(1), "name": .string("Ann D.")])
            #expect(second.precondition == "\"2\"")
            let pushed = try await loop.client.push()
            #expect(pushed.description == "0 confirmed, 1 rejected, 0 still pending")
            let rejection = try #require(try await store.outbox(.rejected).first?.rejection)
            #expect(rejection.status == 412)
            #expect(rejection.body.contains(#"If-Match \"2\" does not match people 1, whose ETag is \"3\""#))
            #expect(try await Self.row(store).hasPrefix("Ann C., "))
            #expect(try await version() == .integer(3))
            // Made on the API's row as it is now, the change goes through.
            let third = try await store.saveLocally("Person", ["id": .integer(1), "name": .string("Ann E.")])
            #expect(third.precondition == "\"3\"")
            #expect(try await loop.client.push().confirmed.count == 1)
            #expect(try await loop.remote().first == "1: Ann E.")
            #expect(try await version() == .integer(4))

            // A create is numbered 1 by the API; a bare update of it then carries that version.
            let created = try await store.saveLocally("Person", ["name": .string("Cy")])
            _ = try await loop.client.push()
            let cy = try #require(try await store.rows(RowQuery("Person", where: "name = 'Cy'")).first)
            #expect(cy["version"] == .integer(1))
            #expect(created.precondition == nil)
            let renamed = try await store.saveLocally("Person", ["id": cy["id"] ?? .null, "name": .string("Cyd")])
            #expect(renamed.precondition == "\"1\"")
            #expect(try await loop.client.push().confirmed.count == 1)
            #expect(try await loop.remote().last?.hasSuffix(": Cyd") == true)
        } teardown: {
            await loop.stop()
        }
    }
}
