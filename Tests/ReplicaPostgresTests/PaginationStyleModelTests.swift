import Foundation
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

/// The seeded sync model of ``SyncSessionModelTests`` over each pagination style the mock
/// server answers in the body (a cursor, Stripe's last key, offsets with a total, Jira's
/// startAt with isLast, page numbers with a page count, HAL's next link), on SQLite and
/// PostgreSQL (40 steps each): between syncs people are added, renamed (moving them to other pages), made
/// invalid or deleted upstream; each sync has a random page cap. After every sync the store
/// equals the server (a whole sync: 304 pages vouching for their recorded keys), or the fetched
/// pages upserted into the previous store (a sync cut by the cap, deleting nothing).
@Suite("Sync model over every pagination style", .serialized)
struct PaginationStyleModelTests {
    struct Style: Sendable, CustomTestStringConvertible {
        var style: MockPagination
        var envelope: String
        var pagination: String
        var testDescription: String { style.rawValue }
    }

    static let pageSize = 4
    static let steps = 40

    static let styles: [Style] = [
        Style(style: .cursor, envelope: "items", pagination: #"{"style": "cursor", "cursor": "/response_metadata/next_cursor"}"#),
        Style(style: .stripe, envelope: "data", pagination: #"{"style": "after"}"#),
        Style(style: .offset, envelope: "items", pagination: #"{"style": "offset", "limit": 4, "total": "/total"}"#),
        Style(style: .jira, envelope: "values",
              pagination: #"{"style": "offset", "parameter": "startAt", "limitParameter": "maxResults", "limit": 4, "isLast": "/isLast"}"#),
        Style(style: .page, envelope: "items", pagination: #"{"style": "page", "sizeParameter": "per_page", "size": 4, "pageCount": "/total_pages"}"#),
        Style(style: .hal, envelope: "_embedded.people", pagination: #"{"style": "next", "next": "/_links/next/href"}"#),
    ]

    static let serverSchema = #"""
        {"name": "model-server", "version": 1, "keyConvention": "camelCase",
         "entities": {"Person": {"table": "people", "attributes": {"id": "integer", "name": "string", "numberOfKids": "integer"}}},
         "routes": [{"path": "/people", "target": "Person"}]}
        """#

    static func clientSchema(_ style: Style) throws -> Schema {
        try Schema(json: Data(#"""
            {"name": "model-client", "version": 1, "keyConvention": "camelCase", "unmappedKeys": "ignore",
             "entities": {"Person": {"table": "people", "attributes": {"id": "integer",
                "name": {"type": "string", "nullable": false}, "numberOfKids": {"type": "integer", "nullable": false}}}},
             "routes": [{"path": "/people", "target": "Person", "stale": "delete", "envelope": "\#(style.envelope)",
                         "pagination": \#(style.pagination)}]}
            """#.utf8))
    }

    struct Person: Equatable, CustomStringConvertible {
        var name: String
        var kids: Int64?
        var description: String { "\(name)/\(kids.map(String.init) ?? "null")" }
    }

    static func stored(_ store: any ReplicaStore) async throws -> [Int64: Person] {
        var result: [Int64: Person] = [:]
        for row in try await store.rows(RowQuery("Person")) {
            guard case .integer(let id) = row.primaryKey else { continue }
            var kids: Int64?
            if case .integer(let value)? = row["numberOfKids"] { kids = value }
            var name = ""
            if case .string(let value)? = row["name"] { name = value }
            result[id] = Person(name: name, kids: kids)
        }
        return result
    }

    @Test("40 seeded steps of mutations, 304s, page caps and skipped objects", arguments: styles, StoreKind.allCases)
    func model(style: Style, kind: StoreKind) async throws {
        let seed = ProcessInfo.processInfo.environment["REPLICA_MODEL_SEED"].flatMap { UInt64($0) } ?? 0x9A6E_5171
        var random = SeededRandom(seed: seed)
        let resources = MockResource.resources(for: try Schema(json: Data(Self.serverSchema.utf8)))
        let people = try #require(resources.first)
        var options = MockServerOptions()
        options.pagination = style.style
        options.pageSize = Self.pageSize
        let server = try await MockServer.start(resources: resources, options: options)
        let opened = try await TestStore.make(kind, schema: try Self.clientSchema(style))
        let store = opened.store
        let base = try #require(URL(string: server.baseURL))
        try await withTeardown {
            var truth: [Int64: Person] = [:]
            var nextID: Int64 = 1
            var outcomes = SyncModelOutcomes()
            for step in 1...Self.steps {
                let context = "\(style.style) \(kind) seed \(seed) step \(step)"
                var changed: [Int64] = []
                for _ in 0..<random.below(5) {
                    switch random.below(10) {
                    case 0...3:
                        truth[nextID] = Person(name: "", kids: random.below(8) == 0 ? nil : Int64(random.below(5)))
                        changed.append(nextID)
                        nextID += 1
                    case 4...6:
                        guard let id = truth.keys.sorted().randomElement(using: &random) else { continue }
                        truth[id]?.kids = random.below(6) == 0 ? nil : Int64(random.below(5))
                        truth[id]?.name = ""
                        changed.append(id)
                    default:
                        guard let id = truth.keys.sorted().randomElement(using: &random) else { continue }
                        truth[id] = nil
                        _ = try await server.options.store.delete(people, id: .int(id))
                    }
                }
                var upserts: [JSONValue] = []
                for id in truth.keys.sorted() where truth[id]?.name.isEmpty == true {
                    // Names sort the collection: a new name moves the person to another page.
                    let name = "n\(random.below(1000))-\(id)"
                    truth[id]?.name = name
                    upserts.append(.object(["id": .int(id), "name": .string(name),
                                            "numberOfKids": truth[id]?.kids.map { JSONValue.int($0) } ?? .null]))
                }
                if !upserts.isEmpty { try await server.load(json: .array(upserts), into: "people") }

                let pages = max(1, (truth.count + Self.pageSize - 1) / Self.pageSize)
                let maxPages = random.below(6) == 0 ? 1 + random.below(pages) : 1000
                var configuration = ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: base])
                configuration.maxPages = maxPages
                configuration.timeout = .seconds(30)
                let before = try await Self.stored(store)
                let result = try await ReplicaClient(store: store, configuration: configuration)
                    .call("/people", params: ["_sort": "name"], options: SyncOptions(onInvalid: .skip))
                let truncated = maxPages < pages
                #expect(result.isTruncated == truncated, "\(context): isTruncated")
                #expect(result.unfollowedPages == nil, "\(context)")
                var expected = before
                let sorted = truth.sorted { $0.value.name < $1.value.name }
                let fetched = truncated ? Array(sorted.prefix(maxPages * Self.pageSize)) : sorted
                // Deleted upstream: gone after a whole sync. Skipped (invalid) objects keep whatever row they had.
                if !truncated { expected = expected.filter { truth[$0.key] != nil } }
                for (id, person) in fetched where person.kids != nil { expected[id] = person }
                let stored = try await Self.stored(store)
                #expect(stored == expected, "\(context): \(result.pages) pages, \(result.unchangedPages) unchanged, maxPages \(maxPages)")
                outcomes.record(result, truncated: truncated)
            }
            for missing in outcomes.missing where !missing.contains("'failed'") { Issue.record("\(style.style) \(kind): \(missing)") }
        } teardown: {
            await opened.close()
            await server.stop()
        }
    }
}
