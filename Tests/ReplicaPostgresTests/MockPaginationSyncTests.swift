import Foundation
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

/// Every pagination style `replica serve` answers, synced by the real HTTP client with the
/// matching schema pagination into SQLite and PostgreSQL: all pages read (asked for ahead where
/// their number is known), the stale row deleted, a person deleted upstream deleted here, and a
/// sync cut by the page limit deleting nothing.
@Suite("The mock server's pagination styles synced by the client on both stores", .serialized)
struct MockPaginationSyncTests {
    struct Style: Sendable, CustomTestStringConvertible {
        var style: MockPagination
        var envelope: String?
        var pagination: String?
        var parameters: [String: String] = [:]
        var stringKeys = false
        var nameKey = "name"
        var testDescription: String { style.rawValue }
    }

    static let styles: [Style] = [
        Style(style: .link, parameters: ["_page": "1", "_limit": "10"]),
        Style(style: .cursor, envelope: "items", pagination: #"{"style": "cursor", "cursor": "/response_metadata/next_cursor"}"#),
        Style(style: .stripe, envelope: "data", pagination: #"{"style": "after"}"#),
        Style(style: .offset, envelope: "items", pagination: #"{"style": "offset", "limit": 10, "total": "/total"}"#),
        Style(style: .jira, envelope: "values",
              pagination: #"{"style": "offset", "parameter": "startAt", "limitParameter": "maxResults", "limit": 10, "total": "/total", "isLast": "/isLast"}"#),
        Style(style: .page, envelope: "items",
              pagination: #"{"style": "page", "sizeParameter": "per_page", "size": 10, "total": "/total", "pageCount": "/total_pages"}"#),
        Style(style: .jsonapi, envelope: "data", pagination: #"{"style": "next", "next": "/links/next"}"#, stringKeys: true,
              nameKey: "attributes.name"),
        Style(style: .hal, envelope: "_embedded.people", pagination: #"{"style": "next", "next": "/_links/next/href"}"#),
        Style(style: .gitlab, pagination: #""link""#, parameters: ["pagination": "keyset", "per_page": "10", "order_by": "id", "sort": "asc"]),
    ]

    static let serverSchema = #"""
        {"name": "people", "entities": {"Person": {"table": "people", "attributes": {"id": "integer", "name": "string"}}},
         "routes": [{"path": "/people", "target": "Person"}]}
        """#

    static func clientSchema(_ style: Style) throws -> Schema {
        let envelope = style.envelope.map { #", "envelope": "\#($0)""# } ?? ""
        let pagination = style.pagination.map { #", "pagination": \#($0)"# } ?? ""
        let name = style.nameKey == "name" ? #""string""# : #"{"type": "string", "jsonKey": "\#(style.nameKey)"}"#
        return try Schema(json: Data(#"""
            {"name": "people", "unmappedKeys": "ignore",
             "entities": {"Person": {"table": "people", "attributes": {"id": "\#(style.stringKeys ? "string" : "integer")", "name": \#(name)}}},
             "routes": [{"path": "/people", "target": "Person", "stale": "delete"\#(envelope)\#(pagination)}]}
            """#.utf8))
    }

    static func names(_ store: any ReplicaStore) async throws -> [String] {
        try await store.rows(RowQuery("Person")).compactMap { row -> String? in if case .string(let name)? = row["name"] { return name }; return nil }.sorted()
    }

    @Test("all 23 people in three pages, the stale row and an upstream deletion deleted; the page limit deletes nothing",
          arguments: styles, StoreKind.allCases)
    func sync(style: Style, kind: StoreKind) async throws {
        var options = MockServerOptions()
        options.pagination = style.style
        options.pageSize = 10
        options.seeds = [.json(.array((1...23).map { ["id": .int(Int64($0)), "name": .string(String(format: "p%02d", $0))] }), into: "people")]
        let resources = MockResource.resources(for: try Schema(json: Data(Self.serverSchema.utf8)))
        let people = try #require(resources.first)
        let server = try await MockServer.start(resources: resources, options: options)
        let opened = try await TestStore.make(kind, schema: try Self.clientSchema(style))
        try await withTeardown {
            let stale = style.stringKeys ? #""99""# : "99"
            let session = try opened.store.session(.entity("Person"), source: "seed")
            let object = style.nameKey == "name" ? #"{"id": \#(stale), "name": "stale"}"# : #"{"id": \#(stale), "attributes": {"name": "stale"}}"#
            _ = try await session.stage(body: Data("[\(object)]".utf8), source: "seed")
            _ = try await session.commit(complete: false)
            let base = try #require(URL(string: server.baseURL))
            func client(maxPages: Int? = nil) -> ReplicaClient {
                var configuration = ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: base])
                configuration.timeout = .seconds(60)
                if let maxPages { configuration.maxPages = maxPages }
                return ReplicaClient(store: opened.store, configuration: configuration)
            }
            let parameters = style.parameters.mapValues { Parameter.value(.string($0)) }
            let all = (1...23).map { String(format: "p%02d", $0) }

            let truncated = try await client(maxPages: 1).call("/people", params: parameters)
            #expect(truncated.isTruncated)
            #expect(try await Self.names(opened.store) == Array(all.prefix(10)) + ["stale"])

            let full = try await client().call("/people", params: parameters)
            #expect(full.pages == 3, "\(style.style)")
            #expect(!full.isTruncated)
            #expect(full.unfollowedPages == nil)
            #expect(try await Self.names(opened.store) == all)

            _ = try await server.options.store.delete(people, id: .int(5))
            let again = try await client().call("/people", params: parameters)
            #expect(again.changes["Person"]?.deleted.count == 1, "\(style.style)")
            #expect(try await Self.names(opened.store) == all.filter { $0 != "p05" })
        } teardown: {
            await opened.close()
            await server.stop()
        }
    }

    /// Stripe's customers, Jira's projects, Slack-like cursor items and HAL people in one schema file.
    static let mirrored = #"""
        {"name": "mirrored", "unmappedKeys": "ignore", "entities": {
          "Customer": {"table": "customers", "attributes": {"id": "integer", "name": "string"}},
          "Project": {"table": "projects", "attributes": {"id": "integer", "name": "string"}},
          "Item": {"table": "items", "attributes": {"id": "integer", "name": "string"}},
          "Person": {"table": "people", "attributes": {"id": "integer", "name": "string"}}},
         "routes": [
          {"path": "/v1/customers", "target": "Customer", "stale": "delete", "envelope": "data", "pagination": {"style": "after"}},
          {"path": "/rest/api/3/project/search", "target": "Project", "stale": "delete", "envelope": "values",
           "pagination": {"style": "offset", "parameter": "startAt", "limitParameter": "maxResults", "total": "/total", "isLast": "/isLast"}},
          {"path": "/api/items", "target": "Item", "stale": "delete", "envelope": "items",
           "pagination": {"style": "cursor", "cursor": "/response_metadata/next_cursor"}},
          {"path": "/people", "target": "Person", "stale": "delete", "envelope": "_embedded.people",
           "pagination": {"style": "next", "next": "/_links/next/href"}}]}
        """#

    @Test("one schema file drives both: the mock server answers each route in the style its pagination reads, the client reads every page",
          arguments: StoreKind.allCases)
    func mirrored(kind: StoreKind) async throws {
        let schema = try Schema(json: Data(Self.mirrored.utf8))
        #expect(MockRoute.routes(for: schema).filter { $0.method == "GET" }.map { $0.pagination?.rawValue ?? "-" }
                == ["stripe", "jira", "cursor", "hal"])
        var options = MockServerOptions()
        options.pageSize = 4
        options.seeds = ["customers", "projects", "items", "people"].map { (table: String) -> MockSeed in
            let objects: [JSONValue] = (1...10).map { (number: Int) -> JSONValue in
                ["id": .int(Int64(number)), "name": .string(table + " " + String(number))]
            }
            return .json(.array(objects), into: table)
        }
        let server = try await MockServer.start(schema: schema, options: options)
        let opened = try await TestStore.make(kind, schema: schema)
        try await withTeardown {
            let base = try #require(URL(string: server.baseURL))
            let client = ReplicaClient(store: opened.store, configuration: ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: base]))
            for (path, entity) in [("/v1/customers", "Customer"), ("/rest/api/3/project/search", "Project"), ("/api/items", "Item"),
                                   ("/people", "Person")] {
                let result = try await client.call(path)
                #expect(result.pages == 3, "\(path)")
                #expect(!result.isTruncated, "\(path)")
                #expect(try await opened.store.rows(RowQuery(entity)).count == 10, "\(path)")
            }
        } teardown: {
            await opened.close()
            await server.stop()
        }
    }
}
