import Foundation
import Replica
import ReplicaOpenAPI
import ReplicaTestSupport
import Testing

/// `schema infer --openapi` recognises a list operation's pagination from its query parameters
/// and its response's envelope, in the shapes public APIs' documents give them: Stripe's
/// `starting_after` and `has_more`, Slack's `cursor` and `response_metadata.next_cursor`,
/// Notion's `start_cursor`, JSON:API's `links.next`, Jira's `startAt`/`maxResults` with
/// `total` and `isLast`, `offset`/`limit` with a `total`, and `page`/`per_page` with `total_pages`.
@Suite("OpenAPI import: pagination")
struct OpenAPIPaginationTests {
    /// A list operation at `path` with `parameters` (query) answering `envelope` (YAML properties) around `key`.
    static func operation(_ path: String, _ parameters: [String], key: String, envelope: String) -> String {
        let list = parameters.map { "        - {name: '\($0)', in: query, schema: {type: string}}" }.joined(separator: "\n")
        return """
          \(path):
            get:
              parameters:
        \(list)
              responses:
                '200':
                  description: a page
                  content:
                    application/json:
                      schema:
                        type: object
                        properties:
                          \(key): {type: array, items: {$ref: '#/components/schemas/Item'}}
        \(envelope)
        """
    }

    static let document = """
        openapi: 3.1.0
        info: {title: Lists, version: "1.0"}
        paths:
        \(operation("/v1/customers", ["limit", "starting_after", "ending_before"], key: "data", envelope: """
                          object: {type: string, enum: [list]}
                          has_more: {type: boolean}
                          url: {type: string}
        """))
        \(operation("/api/users.list", ["cursor", "limit"], key: "members", envelope: """
                          ok: {type: boolean}
                          response_metadata: {type: object, properties: {next_cursor: {type: string}}}
        """))
        \(operation("/v1/users", ["start_cursor", "page_size"], key: "results", envelope: """
                          next_cursor: {type: [string, 'null']}
                          has_more: {type: boolean}
        """))
        \(operation("/articles", ["page[number]", "page[size]"], key: "data", envelope: """
                          links: {type: object, properties: {self: {type: string}, next: {type: [string, 'null']}}}
        """))
        \(operation("/rest/api/3/project/search", ["startAt", "maxResults"], key: "values", envelope: """
                          startAt: {type: integer}
                          maxResults: {type: integer}
                          total: {type: integer}
                          isLast: {type: boolean}
        """))
        \(operation("/things", ["offset", "limit"], key: "items", envelope: """
                          total: {type: integer}
        """))
        \(operation("/widgets", ["page", "per_page"], key: "items", envelope: """
                          total_pages: {type: integer}
        """))
        \(operation("/plain", [], key: "items", envelope: """
                          count: {type: integer}
        """))
        components:
          schemas:
            Item:
              type: object
              required: [id]
              properties:
                id: {type: string}
                name: {type: string}
        """

    @Test("each list operation's route carries the pagination its parameters and envelope show; a plain list none")
    func recognised() throws {
        let imported = try OpenAPISchemaImport.schema(from: Data(Self.document.utf8), source: "lists.yaml", name: "lists")
        var found: [String: PaginationRule?] = [:]
        for route in imported.schema.routes where route.method == .get { found[route.path] = route.pagination }
        let expected: [String: PaginationRule?] = [
            "/v1/customers": PaginationRule.stripe,
            "/api/users.list": PaginationRule.slack,
            "/v1/users": PaginationRule.notion,
            "/articles": PaginationRule.jsonAPI,
            "/rest/api/3/project/search": PaginationRule.offset(parameter: "startAt", limitParameter: "maxResults", limit: nil,
                                                  total: .pointer(JSONPointer("/total") ?? .root), isLast: JSONPointer("/isLast")),
            "/things": PaginationRule.offset(parameter: "offset", limitParameter: "limit", limit: nil, total: .pointer(JSONPointer("/total") ?? .root)),
            "/widgets": PaginationRule.page(parameter: "page", startingAt: 1, sizeParameter: "per_page", size: nil, total: nil,
                              pageCount: .pointer(JSONPointer("/total_pages") ?? .root)),
            "/plain": PaginationRule?.none,
        ]
        for (path, rule) in expected {
            #expect(found[path] == rule, "\(path): \(String(describing: found[path]))\n\(imported.text)")
        }
        // The schema the import writes checks clean on both stores and reads back the same.
        try imported.schema.checkOpening(in: .postgres)
        try imported.schema.checkOpening(in: .sqlite)
        #expect(try Schema(jsonValue: imported.schema.fileJSON) == imported.schema)
    }
}
