import Foundation
import Replica
import ReplicaCore
import ReplicaHTTP
import ReplicaPostgres
import ReplicaServer
import ReplicaTestSupport
import Testing

/// A randomized model of local writes against the mock API, on both stores: local saves,
/// creates and deletes (some the API refuses with 422, some meet a 412 because another client
/// changed the row since the API confirmed ours), another client changing the API's data,
/// full syncs, pushes into an API that is down or failing, and answers lost after the API
/// applied them (a process killed between the reply and the confirmation's commit).
///
/// After every sync the store must read as the API's data with the pending mutations applied on
/// top, in commit order; at the end, once everything is sent, every confirmed create exists on
/// the API exactly once, every refused one is listed with its 422, and the store is the API's data.
@Suite("Outbox model: seeded local writes, syncs, faults and lost answers")
struct OutboxModelTests {
    /// The API's people by id, read from its store.
    static func serverRows(_ server: MockServer, _ people: MockResource) async throws -> [Int64: String] {
        var rows: [Int64: String] = [:]
        for object in try await server.options.store.objects(people, query: MockQuery()).objects {
            guard case .int(let id)? = object["id"] else { continue }
            if case .string(let name)? = object["name"] { rows[id] = name } else { rows[id] = "" }
        }
        return rows
    }

    /// The local rows by key.
    static func localRows(_ store: any ReplicaStore) async throws -> [Int64: String] {
        var rows: [Int64: String] = [:]
        for row in try await store.rows(RowQuery("Person")) {
            guard case .integer(let id)? = row["id"] else { continue }
            if case .string(let name)? = row["name"] { rows[id] = name } else { rows[id] = "" }
        }
        return rows
    }

    /// The API's rows with the pending mutations applied in commit order: what the store must read as.
    static func expected(_ server: [Int64: String], pending: [Mutation]) -> [Int64: String] {
        var rows = server
        for mutation in pending {
            guard case .integer(let key) = mutation.key else { continue }
            var name: String?
            if case .string(let value)? = mutation.changes["name"] { name = value }
            switch mutation.kind {
            case .create:
                if let name { rows[key] = name } else if rows[key] == nil { rows[key] = "" }
            case .update:
                if rows[key] != nil, let name { rows[key] = name }
            case .delete:
                rows[key] = nil
            }
        }
        return rows
    }

    @Test("500 seeded steps; the store is always the API's data plus what is pending", arguments: StoreKind.allCases)
    func model(kind: StoreKind) async throws {
        let losing = OutboxPushTests.LosingAnswers(0)
        let loop = try await OutboxPushTests.Loop.start(kind, interceptors: [losing])
        try await withTeardown {
            let store = loop.store
            let server = loop.server
            let people = try #require(server.resources.first { $0.name == "people" })
            server.setController(OutboxPushTests.RequiringNames(), for: "people")
            var random = SeededRandom(seed: kind == .sqlite ? 61 : 62)
            var createdNames: Set<String> = []
            var refusedNames: Set<String> = []
            var down = false
            var syncs = 0
            for step in 0..<500 {
                let local = try await Self.localRows(store)
                let keys = local.keys.sorted()
                switch random.below(20) {
                case 0...3:
                    // A local rename of a row (sometimes to an empty name, which the API refuses).
                    guard let key = keys.isEmpty ? nil : keys[random.below(keys.count)] else { continue }
                    let name = random.below(8) == 0 ? "" : "n\(step)"
                    let saved = try await store.saveLocally("Person", ["id": .integer(key), "name": .string(name)])
                    // Into the row's create, when no push has taken it: the API refuses that create for this name, or not.
                    if saved.kind == .create {
                        if name.isEmpty { refusedNames.insert("#\(saved.id)") } else { refusedNames.remove("#\(saved.id)") }
                    }
                case 4...6:
                    // A local create: a unique name, so its effect on the API can be counted.
                    let refused = random.below(8) == 0
                    let name = refused ? "" : "c\(step)"
                    let mutation = try await store.saveLocally("Person", ["name": .string(name)])
                    if refused { refusedNames.insert("#\(mutation.id)") } else { createdNames.insert(name) }
                case 7:
                    // A local delete; of a row whose create no push has taken, it takes the create back.
                    guard let key = keys.isEmpty ? nil : keys[random.below(keys.count)] else { continue }
                    let mutations = try await store.outbox().filter { $0.key == .integer(key) }
                    let takesBack = mutations.first.map { $0.kind == .create && $0.state == .pending && $0.sentAt == nil } ?? false
                    let queued = try await store.deleteLocally("Person", key: .integer(key))
                    #expect((queued == nil) == takesBack, "step \(step): delete of \(key) after \(mutations)")
                    if takesBack {
                        #expect(try await store.outbox().allSatisfy { $0.key != .integer(key) })
                        for mutation in mutations { refusedNames.remove("#\(mutation.id)") }
                    }
                case 8...10:
                    // Another client changes the API's data.
                    let remote = try await Self.serverRows(server, people).keys.sorted()
                    switch random.below(3) {
                    case 0:
                        _ = try await server.options.store.create(people, values: ["name": .string("o\(step)")])
                    case 1:
                        guard let id = remote.isEmpty ? nil : remote[random.below(remote.count)] else { continue }
                        _ = try await server.options.store.modify(people, id: .int(id), values: ["name": .string("o\(step)")])
                    default:
                        guard let id = remote.isEmpty ? nil : remote[random.below(remote.count)] else { continue }
                        _ = try await server.options.store.delete(people, id: .int(id))
                    }
                case 11...13:
                    // A full sync: the store is the API's data plus what is pending.
                    guard !down else { continue }
                    _ = try await loop.client.call("/people")
                    syncs += 1
                    let pending = try await store.outbox(.pending)
                    let want = Self.expected(try await Self.serverRows(server, people), pending: pending)
                    let have = try await Self.localRows(store)
                    #expect(have == want, "step \(step): after a sync, with \(pending.count) pending")
                    if have != want { return }
                case 14...16:
                    // A push; sometimes the API answers 503 to every write, sometimes an answer is lost
                    // after the API applied it.
                    let failing = random.below(4) == 0
                    if failing {
                        server.setConditions(MockConditions(faults: ["POST", "PUT", "PATCH", "DELETE"].map {
                            MockFault(.status(503), method: $0)
                        }))
                    }
                    losing.left.withLock { $0 = random.below(3) == 0 ? 1 : 0 }
                    _ = try await loop.client.push(concurrency: 1 + random.below(4))
                    losing.left.withLock { $0 = 0 }
                    if failing { server.setConditions(MockConditions()) }
                default:
                    // The API goes down or comes back.
                    down.toggle()
                    if down { server.goDown() } else { server.comeUp() }
                }
            }
            // Everything sent, then one last sync.
            server.comeUp()
            server.setConditions(MockConditions())
            for _ in 0..<5 where try await !store.outbox(.pending).isEmpty { _ = try await loop.client.push() }
            #expect(try await store.outbox(.pending).isEmpty)
            _ = try await loop.client.call("/people")
            let remote = try await Self.serverRows(server, people)
            #expect(try await Self.localRows(store) == remote)
            // Each confirmed create took effect once; a refused one never did.
            let names = remote.values.filter { $0.hasPrefix("c") }
            #expect(Set(names).count == names.count, "a create took effect twice")
            #expect(Set(names).isSubset(of: createdNames))
            #expect(!remote.values.contains(""))
            // Every refused mutation is listed, with the API's 422 and its field error.
            let rejected = try await store.outbox(.rejected)
            // A rename to an empty name or an empty create: 422; a change of a row the other client deleted: 404;
            // a change of a row the other client changed since the API confirmed ours: 412 (the server wins).
            #expect(rejected.allSatisfy { mutation in
                switch mutation.rejection?.status {
                case 422?: return mutation.rejection?.body.contains("can't be blank") == true
                case 404?: return mutation.kind == .update
                case 412?: return mutation.kind != .create && mutation.precondition != nil
                default: return false
                }
            })
            #expect(refusedNames.isSubset(of: Set(rejected.map { "#\($0.id)" })))
            #expect(syncs > 20)
            #expect(rejected.contains { $0.rejection?.status == 412 }, "the model never met a conflict")
        } teardown: {
            await loop.stop()
        }
    }
}
