import Foundation
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

/// The seeded sync-session model of ``SyncSessionModelTests`` over an entity with a composite
/// primary key: refs identified by (repo, name), the same names in two repositories, each
/// repository's refs synced through `/repos/:repo/refs` (the repo part filled from the route)
/// with stale deletion. After every sync the synced repository's rows equal the server's (or,
/// under a page cap, the fetched pages upserted into the previous rows), the other repository's
/// rows are untouched, and a failed sync leaves every row as it was. The same seed runs against
/// an SQLite engine and a PostgreSQL replica.
@Suite("Sync session model with composite keys")
struct CompositeKeyModelTests {
    /// The server: refs with an id of their own, nested under repositories; `sha` may be null,
    /// which the client refuses (its attribute is not nullable), so such refs are skipped.
    static let serverSchema = #"""
        {"name": "model-refs-server", "version": 1, "keyConvention": "camelCase",
         "entities": {
           "Repo": {"table": "repos", "primaryKey": "name", "attributes": {"name": "string"}},
           "Ref": {"table": "refs", "attributes": {"id": "integer", "repo": "string", "name": "string", "sha": "string"},
                   "relationships": {"repository": {"toOne": "Repo", "foreignKey": "repo"}}}}}
        """#
    /// The client: a ref is its repository and name; the server's id is a plain attribute.
    static let clientSchema = #"""
        {"name": "model-refs-client", "version": 1, "keyConvention": "camelCase",
         "entities": {"Ref": {"table": "refs", "primaryKey": ["repo", "name"], "attributes": {
            "repo": "string", "name": "string", "id": "integer", "sha": {"type": "string", "nullable": false}}}},
         "routes": [{"path": "/repos/:repo/refs", "target": "Ref", "stale": "delete"}]}
        """#

    /// A ref's key as the test keeps it.
    struct Key: Hashable, Comparable, CustomStringConvertible {
        var repo: String
        var name: String
        static func < (a: Key, b: Key) -> Bool { (a.repo, a.name) < (b.repo, b.name) }
        var description: String { "\(repo)/\(name)" }
    }

    /// A server ref: `sha == nil` is invalid for the client.
    struct ServerRef {
        var repo: String
        var name: String
        var sha: String?
    }

    static let repos = ["alpha", "beta"]
    static let pageSize = 4
    static let steps = 500

    @Test("500 seeded steps over two repositories' refs: mutations, 304s, faults, page caps and skipped objects",
          arguments: StoreKind.allCases)
    func model(_ kind: StoreKind) async throws {
        let seed = ProcessInfo.processInfo.environment["REPLICA_MODEL_SEED"].flatMap { UInt64($0) } ?? 0xC0_4B05
        var random = SeededRandom(seed: seed)
        let resources = MockResource.resources(for: try Schema(json: Data(Self.serverSchema.utf8)))
        let refs = try #require(resources.first { $0.name == "refs" })
        let server = try await MockServer.start(resources: resources)
        let opened = try await TestStore.make(kind, schema: try Schema(json: Data(Self.clientSchema.utf8)))
        let store = opened.store
        let transport = HTTPTransport()
        let base = try #require(URL(string: server.baseURL))
        try await withTeardown {
        try await server.load(json: .array(Self.repos.map { .object(["name": .string($0)]) }), into: "repos")
        var truth: [Int64: ServerRef] = [:]
        var nextID: Int64 = 1
        var outcomes = SyncModelOutcomes()
        func unusedName(in repo: String) -> String? {
            let used = Set(truth.values.filter { $0.repo == repo }.map(\.name))
            // Few names, so that both repositories hold the same ones.
            let free = (0..<10).map { "refs/heads/b\($0)" }.filter { !used.contains($0) }
            return free.isEmpty ? nil : free[random.below(free.count)]
        }
        func sha() -> String? {
            random.below(8) == 0 ? nil : String(format: "%040x", random.below(1 << 30))
        }
        for step in 1...Self.steps {
            let context = "\(kind) seed \(seed) step \(step)"
            var changed: Set<Int64> = []
            for _ in 0..<random.below(5) {
                switch random.below(10) {
                case 0...3:
                    let repo = Self.repos[random.below(2)]
                    guard let name = unusedName(in: repo) else { continue }
                    truth[nextID] = ServerRef(repo: repo, name: name, sha: sha())
                    changed.insert(nextID)
                    nextID += 1
                case 4...5:
                    guard let id = truth.keys.sorted().randomElement(using: &random) else { continue }
                    truth[id]?.sha = sha()
                    changed.insert(id)
                case 6:
                    // A rename: to the client, one ref gone and another new.
                    guard let id = truth.keys.sorted().randomElement(using: &random), let repo = truth[id]?.repo,
                          let name = unusedName(in: repo) else { continue }
                    truth[id]?.name = name
                    changed.insert(id)
                default:
                    guard let id = truth.keys.sorted().randomElement(using: &random) else { continue }
                    truth[id] = nil
                    changed.remove(id)
                    _ = try await server.options.store.delete(refs, id: .int(id))
                }
            }
            let upserts = changed.sorted().compactMap { id -> JSONValue? in
                guard let ref = truth[id] else { return nil }
                return .object(["id": .int(id), "repo": .string(ref.repo), "name": .string(ref.name),
                                "sha": ref.sha.map { .string($0) } ?? .null])
            }
            if !upserts.isEmpty { try await server.load(json: .array(upserts), into: "refs") }

            // One repository's sync, under the step's conditions.
            let repo = Self.repos[random.below(2)]
            let served = truth.values.filter { $0.repo == repo }.sorted { $0.name < $1.name }
            let conditions = SyncModelStep(&random, objects: served.count, pageSize: Self.pageSize,
                                           path: "/repos/\(repo)/refs", stalls: false)
            let (pages, maxPages, faults) = (conditions.pages, conditions.maxPages, conditions.faults)
            server.setConditions(MockConditions(faults: faults))
            let client = conditions.client(store, transport: transport, base: base)

            let before = try await Self.stored(store)
            do {
                let result = try await client.call("/repos/\(repo)/refs?_sort=name&_page=1&_limit=\(Self.pageSize)",
                                                   options: SyncOptions(onInvalid: .skip))
                let truncated = maxPages < pages
                #expect(result.isTruncated == truncated, "\(context): isTruncated")
                var expected = before
                let fetched = truncated ? Array(served.prefix(maxPages * Self.pageSize)) : served
                if !truncated {
                    // Gone upstream: deleted, in this repository only. Skipped (invalid) refs keep their rows.
                    let names = Set(served.map(\.name))
                    expected = expected.filter { $0.key.repo != repo || names.contains($0.key.name) }
                }
                for ref in fetched {
                    if let sha = ref.sha { expected[Key(repo: repo, name: ref.name)] = sha }
                }
                let stored = try await Self.stored(store)
                #expect(stored == expected, Comment(rawValue: "\(context): \(repo) synced (\(result.pages) pages, "
                                                    + "\(result.unchangedPages) unchanged, maxPages \(maxPages)): "
                                                    + Self.difference(stored, expected)))
                outcomes.record(result, truncated: truncated)
            } catch {
                #expect(try await Self.stored(store) == before, "\(context): store after a failed sync (\(error))")
                #expect(!faults.isEmpty, "\(context): failed without an injected fault: \(error)")
                outcomes.recordFailure()
            }
        }
        for missing in outcomes.missing { Issue.record("\(kind) seed \(seed): \(missing)") }
        // Both repositories hold refs of the same names: the composite key keeps them apart.
        let stored = try await Self.stored(store)
        let shared = Set(stored.keys.filter { $0.repo == "alpha" }.map(\.name))
            .intersection(stored.keys.filter { $0.repo == "beta" }.map(\.name))
        #expect(!shared.isEmpty, "\(kind) seed \(seed): no name stored in both repositories")
        server.setConditions(MockConditions())
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
            await opened.close()
        }
    }

    /// The keys whose rows differ, as `key: stored ≠ expected`.
    static func difference(_ stored: [Key: String], _ expected: [Key: String]) -> String {
        Set(stored.keys).union(expected.keys).sorted().compactMap { key in
            stored[key] == expected[key] ? nil : "\(key): \(stored[key] ?? "absent") ≠ \(expected[key] ?? "absent")"
        }.joined(separator: ", ")
    }

    /// The client store as (repo, name) → sha, read through the rows' composite keys.
    static func stored(_ store: any ReplicaStore) async throws -> [Key: String] {
        var result: [Key: String] = [:]
        for row in try await store.rows(RowQuery("Ref")) {
            guard let parts = row.primaryKey.compositeKeyParts, parts.count == 2,
                  case .string(let repo) = parts[0], case .string(let name) = parts[1],
                  case .string(let sha)? = row["sha"] else { continue }
            result[Key(repo: repo, name: name)] = sha
        }
        return result
    }
}
