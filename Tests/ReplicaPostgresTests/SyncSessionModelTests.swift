import Foundation
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

/// A seeded model test of paged syncs against the mock server: after every sync the store
/// equals the server (success), or the server's fetched pages upserted into the previous
/// store (a sync cut at `maxPages`), or exactly the previous store (failure). The same seed runs
/// against an SQLite engine and a PostgreSQL replica: the client, its sessions and its
/// validators must behave the same on both. People carry tags, a many-to-many relationship
/// (`through` a join table) whose links must follow the same rule as the rows.
@Suite("Sync session model")
struct SyncSessionModelTests {
    /// The server's people: `numberOfKids` may be null, which the client refuses (its
    /// attribute is not nullable), so such objects are skipped under `onInvalid: .skip`.
    static let serverSchema = #"""
        {"name": "model-server", "version": 1, "keyConvention": "camelCase",
         "entities": {"Person": {"table": "people", "attributes": {"id": "integer", "name": "string", "numberOfKids": "integer",
            "tags": "json"}}},
         "routes": [{"path": "/people", "target": "Person", "stale": "delete"}]}
        """#
    static let clientSchema = #"""
        {"name": "model-client", "version": 1, "keyConvention": "camelCase",
         "entities": {"Person": {"table": "people", "attributes": {"id": "integer",
            "name": {"type": "string", "nullable": false}, "numberOfKids": {"type": "integer", "nullable": false}},
            "relationships": {"tags": {"toMany": "Tag", "through": "person_tags"}}},
          "Tag": {"attributes": {"id": "integer", "name": "string"},
            "relationships": {"people": {"toMany": "Person", "through": "person_tags"}}}},
         "routes": [{"path": "/people", "target": "Person", "stale": "delete"}]}
        """#

    /// One person as the test keeps it: `kids == nil` is invalid for the client.
    struct Person: Equatable, CustomStringConvertible {
        var name: String
        var kids: Int64?
        /// The ids of the person's tags, sorted.
        var tags: [Int64] = []
        var description: String { "\(name)/\(kids.map(String.init) ?? "null")/tags \(tags)" }
    }

    /// The tags people share: ids 1…tagCount.
    static let tagCount: Int64 = 6

    /// Up to three distinct tags, sorted.
    static func someTags(_ random: inout SeededRandom) -> [Int64] {
        Array(Set((0..<random.below(4)).map { _ in 1 + Int64(random.below(Int(tagCount))) })).sorted()
    }

    static let pageSize = 4
    static let steps = 500

    @Test("500 seeded steps of mutations, 304s, faults, page caps, skipped objects and many-to-many tags", arguments: StoreKind.allCases)
    func model(_ kind: StoreKind) async throws {
        let seed = ProcessInfo.processInfo.environment["REPLICA_MODEL_SEED"].flatMap { UInt64($0) } ?? 0x5E55_1011
        var random = SeededRandom(seed: seed)
        let serverSchema = try Schema(json: Data(Self.serverSchema.utf8))
        let resources = MockResource.resources(for: serverSchema)
        let people = try #require(resources.first)
        let server = try await MockServer.start(resources: resources)
        let opened = try await TestStore.make(kind, schema: try Schema(json: Data(Self.clientSchema.utf8)))
        let store = opened.store
        let transport = HTTPTransport()
        let base = try #require(URL(string: server.baseURL))
        try await withTeardown {
        var truth: [Int64: Person] = [:]
        var nextID: Int64 = 1
        var outcomes = SyncModelOutcomes()
        for step in 1...Self.steps {
            let context = "\(kind) seed \(seed) step \(step)"
            // Mutate the server.
            var upserts: [JSONValue] = []
            for _ in 0..<random.below(5) {
                switch random.below(10) {
                case 0...3:
                    let person = Person(name: "", kids: random.below(8) == 0 ? nil : Int64(random.below(5)),
                                        tags: Self.someTags(&random))
                    truth[nextID] = person
                    nextID += 1
                case 4...6:
                    guard let id = truth.keys.sorted().randomElement(using: &random) else { continue }
                    truth[id]?.kids = random.below(6) == 0 ? nil : Int64(random.below(5))
                    if random.below(2) == 0 { truth[id]?.tags = Self.someTags(&random) }
                    truth[id]?.name = ""
                default:
                    guard let id = truth.keys.sorted().randomElement(using: &random) else { continue }
                    truth[id] = nil
                    _ = try await server.options.store.delete(people, id: .int(id))
                }
            }
            // Sorted: a Dictionary's order changes from process to process, the seed must decide everything.
            for id in truth.keys.sorted() where truth[id]?.name.isEmpty == true {
                // Names sort the collection: a new name moves the person to another page.
                let name = "n\(random.below(1000))-\(id)"
                truth[id]?.name = name
                var object: JSONObject = ["id": .int(id), "name": .string(name)]
                object["numberOfKids"] = truth[id]?.kids.map { JSONValue.int($0) } ?? .null
                // Tags nested whole, or (one time in four) as bare keys.
                let bare = random.below(4) == 0
                object["tags"] = .array((truth[id]?.tags ?? []).map { tag in
                    bare ? .int(tag) : .object(["id": .int(tag), "name": .string("tag\(tag)")])
                })
                upserts.append(.object(object))
            }
            if !upserts.isEmpty { try await server.load(json: .array(upserts), into: "people") }

            // Pick the sync's conditions.
            let conditions = SyncModelStep(&random, objects: truth.count, pageSize: Self.pageSize, path: "/people", stalls: true)
            let (pages, maxPages, faults) = (conditions.pages, conditions.maxPages, conditions.faults)
            server.setConditions(MockConditions(faults: faults))
            let client = conditions.client(store, transport: transport, base: base)

            let before = try await Self.stored(store)
            do {
                let result = try await client.call("/people?_sort=name&_page=1&_limit=\(Self.pageSize)",
                                                   options: SyncOptions(onInvalid: .skip))
                let truncated = maxPages < pages
                #expect(result.isTruncated == truncated, "\(context): isTruncated")
                var expected = before
                let sorted = truth.sorted { $0.value.name < $1.value.name }
                let fetched = truncated ? Array(sorted.prefix(maxPages * Self.pageSize)) : sorted
                if !truncated {
                    // Deleted upstream: gone. Skipped (invalid) objects keep whatever row they had.
                    expected = expected.filter { truth[$0.key] != nil }
                }
                for (id, person) in fetched where person.kids != nil { expected[id] = person }
                let stored = try await Self.stored(store)
                let report = "\(context): store after a successful sync (\(result.pages) pages, "
                    + "\(result.unchangedPages) unchanged, maxPages \(maxPages)): \(Self.difference(stored, expected))"
                #expect(stored == expected, Comment(rawValue: report))
                outcomes.record(result, truncated: truncated)
            } catch {
                #expect(try await Self.stored(store) == before, "\(context): store after a failed sync (\(error))")
                #expect(!faults.isEmpty, "\(context): failed without an injected fault: \(error)")
                outcomes.recordFailure()
            }
        }
        // The run exercised every outcome.
        for missing in outcomes.missing { Issue.record("\(kind) seed \(seed): \(missing)") }
        server.setConditions(MockConditions())
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
            await opened.close()
        }
    }

    /// The ids whose rows differ, as `id: stored ≠ expected`.
    static func difference(_ stored: [Int64: Person], _ expected: [Int64: Person]) -> String {
        Set(stored.keys).union(expected.keys).sorted().compactMap { id in
            stored[id] == expected[id] ? nil
                : "\(id): \(stored[id].map(String.init(describing:)) ?? "absent") ≠ \(expected[id].map(String.init(describing:)) ?? "absent")"
        }.joined(separator: ", ")
    }

    /// The client store as id → person, with the tags each is linked to.
    static func stored(_ store: any ReplicaStore) async throws -> [Int64: Person] {
        var tagged: [Int64: [Int64]] = [:]
        for tag in 1...tagCount {
            let linked = try RowPredicate.linked(to: "Tag", .integer(tag), through: "people", in: store.schema)
            for row in try await store.rows(RowQuery("Person", where: linked.sql, arguments: linked.arguments)) {
                if case .integer(let id) = row.primaryKey { tagged[id, default: []].append(tag) }
            }
        }
        var result: [Int64: Person] = [:]
        for row in try await store.rows(RowQuery("Person")) {
            guard case .integer(let id) = row.primaryKey else { continue }
            var kids: Int64?
            if case .integer(let value)? = row["numberOfKids"] { kids = value }
            var name = ""
            if case .string(let value)? = row["name"] { name = value }
            result[id] = Person(name: name, kids: kids, tags: tagged[id] ?? [])
        }
        return result
    }
}
