import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// A route's `"pagination"` (and the schema's) in a schema file: each style reads to the Swift
/// ``PaginationRule`` it names, writes back the same, validates against `schema.schema.json`,
/// and a bad one is refused naming where and why, by the loader and the JSON Schema alike.
@Suite("Pagination in schema files")
struct PaginationSchemaTests {
    static func schema(route pagination: String?, top: String? = nil, key: String = #""id": "string""#,
                       method: String = "GET") -> String {
        let routePagination = pagination.map { #", "pagination": \#($0)"# } ?? ""
        let topPagination = top.map { #""pagination": \#($0), "# } ?? ""
        return #"""
            {"name": "api", \#(topPagination)"entities": {"Item": {"table": "items", "primaryKey": \#(key == #""id": "string""# ? #""id""# : #"["owner", "id"]"#),
              "attributes": {\#(key), "name": "string"}}},
             "routes": [{"method": "\#(method)", "path": "/items", "target": "Item", "stale": "delete"\#(routePagination)}]}
            """#
    }

    static func pointer(_ text: String) -> JSONPointer {
        JSONPointer(text) ?? .root
    }

    static let styles: [(String, PaginationRule)] = [
        (#""link""#, .linkHeader),
        (#"{"style": "link"}"#, .linkHeader),
        (#"{"style": "next", "next": "/links/next"}"#, .jsonAPI),
        (#"{"style": "next", "next": "/_links/next/href"}"#, .hal),
        (#"{"style": "cursor", "cursor": "/response_metadata/next_cursor"}"#, .slack),
        (#"{"style": "cursor", "parameter": "start_cursor", "cursor": "/next_cursor", "hasMore": "/has_more"}"#, .notion),
        (#"{"style": "cursor", "parameter": "page_token", "cursor": "header:X-Next-Page-Token"}"#,
         .cursor(parameter: "page_token", cursor: .header("X-Next-Page-Token"))),
        (#"{"style": "after"}"#, .stripe),
        (#"{"style": "after", "parameter": "starting_after", "hasMore": "/has_more"}"#, .stripe),
        (#"{"style": "offset", "parameter": "startAt", "limitParameter": "maxResults", "limit": 50, "total": "/total", "isLast": "/isLast"}"#,
         .jira),
        (#"{"style": "offset", "limitParameter": null, "total": "header:X-Total-Count"}"#,
         .offset(parameter: "offset", limitParameter: nil, limit: nil, total: .header("X-Total-Count"))),
        (#"{"style": "page", "sizeParameter": "per_page", "size": 100, "pageCount": "/total_pages"}"#,
         .page(sizeParameter: "per_page", size: 100, pageCount: .pointer(pointer("/total_pages")))),
        (#"{"style": "page", "parameter": "page", "startAt": 0, "sizeParameter": "size", "size": 20, "total": "/page/totalElements"}"#,
         .page(startingAt: 0, sizeParameter: "size", size: 20, total: .pointer(pointer("/page/totalElements")))),
    ]

    @Test("each style reads to its rule, writes back the same and validates against schema.schema.json")
    func styles() throws {
        let validator = MiniJSONSchemaValidator(root: try JSONValue(parsing: try Data(contentsOf: TestSupport.schemaFile("schema.schema.json"))))
        for (text, rule) in Self.styles {
            let file = Self.schema(route: text, top: text)
            let schema = try Schema(json: Data(file.utf8))
            #expect(schema.routes.first?.pagination == rule, "\(text)")
            #expect(schema.pagination == rule, "\(text)")
            #expect(try Schema(jsonValue: schema.fileJSON) == schema, "\(text)")
            #expect(validator.validate(try JSONValue(parsing: file)) == [], "\(text)")
        }
        // Without one, a route has none and Link headers are followed.
        #expect(try Schema(json: Data(Self.schema(route: nil).utf8)).routes.first?.pagination == nil)
    }

    @Test("a bad pagination is refused naming where and why; the JSON Schema refuses it too")
    func refused() throws {
        let validator = MiniJSONSchemaValidator(root: try JSONValue(parsing: try Data(contentsOf: TestSupport.schemaFile("schema.schema.json"))))
        let bad: [(String, String, String)] = [
            (Self.schema(route: #""cursor""#), "/routes/0/pagination",
             #"unknown pagination 'cursor': a string names only "link"; the other styles (link, next, cursor, after, offset or page) "#
             + #"are objects such as {"style": "cursor", "parameter": "cursor", "cursor": "/next_cursor"}"#),
            (Self.schema(route: #"{"style": "keyset"}"#), "/routes/0/pagination/style",
             "unknown pagination style 'keyset' (expected link, next, cursor, after, offset or page)"),
            (Self.schema(route: #"{"style": "next"}"#), "/routes/0/pagination", "missing required key 'next'"),
            (Self.schema(route: #"{"style": "next", "next": "links.next"}"#), "/routes/0/pagination/next",
             "expected a JSON pointer into the response ('/next'), found 'links.next'"),
            (Self.schema(route: #"{"style": "cursor", "parameter": "cursor"}"#), "/routes/0/pagination", "missing required key 'cursor'"),
            (Self.schema(route: #"{"style": "cursor", "cursor": "X-Cursor"}"#), "/routes/0/pagination/cursor",
             "expected 'header:NAME' or a JSON pointer ('/cursor'), found 'X-Cursor'"),
            (Self.schema(route: #"{"style": "offset", "limit": 0}"#), "/routes/0/pagination/limit",
             "expected an integer from 1 to 1000000000, found 0"),
            (Self.schema(route: #"{"style": "page", "parameter": ""}"#), "/routes/0/pagination/parameter",
             #"expected a query parameter name, found """#),
            (Self.schema(route: #"{"style": "after", "next": "/next"}"#), "/routes/0/pagination/next", "unknown key 'next' (expected one of: hasMore, parameter, style)"),
            (Self.schema(route: nil, top: #"{"style": "page", "size": "10"}"#), "/pagination/size",
             #"expected an integer from 1 to 1000000000, found "10""#),
        ]
        for (file, at, message) in bad {
            #expect(!validator.validate(try JSONValue(parsing: file)).isEmpty, "\(file)")
            let error = #expect(throws: SchemaError.self, "\(file)") { try Schema(json: Data(file.utf8), file: "api.json") }
            #expect(error?.pointer?.description == at, "\(error.map { "\($0)" } ?? "")")
            #expect(error?.message.hasPrefix(message) == true, "\(error.map { "\($0)" } ?? "")")
        }
    }

    @Test("pagination needs a GET route of a collection, and the after style a single-attribute key")
    func routeChecks() throws {
        let post = #expect(throws: SchemaError.self) {
            try Schema(json: Data(Self.schema(route: #""link""#, method: "POST").utf8))
        }
        #expect(post?.message == "route POST /items pages, which needs a GET route of an entity's collection (not POST Item)")
        #expect(post?.pointer?.description == "/routes/0/pagination")
        let composite = #expect(throws: SchemaError.self) {
            try Schema(json: Data(Self.schema(route: #"{"style": "after"}"#, key: #""owner": "string", "id": "string""#).utf8))
        }
        #expect(composite?.message == "route GET /items sends the last object's key as ?starting_after=, but Item has a composite "
                + "key (owner, id): use another pagination style")
        // The same schema in Swift.
        let built = try Schema(name: "api", entities: [Entity("Item", primaryKey: "id") { Attribute("id", .string) }],
                               routes: [Route(.get, "/items", target: .entity("Item"), pagination: .stripe)], pagination: .jsonAPI)
        #expect(built.routes.first?.pagination == .stripe)
        #expect(built.pagination == .jsonAPI)
    }

    @Test("each rule says in words how it pages, for messages")
    func summaries() {
        #expect(PaginationRule.linkHeader.summary == #"Link: rel="next" headers"#)
        #expect(PaginationRule.stripe.summary == "the last object's key sent as ?starting_after= while /has_more is true")
        #expect(PaginationRule.slack.summary == "the cursor at /response_metadata/next_cursor sent as ?cursor=")
        #expect(PaginationRule.notion.summary == "the cursor at /next_cursor sent as ?start_cursor= while /has_more is true")
        #expect(PaginationRule.hal.summary == "the next page's URL at /_links/next/href")
        #expect(PaginationRule.jira.summary == "offsets in ?startAt= until an empty page or /isLast true or the total at /total")
        #expect(PaginationRule.page(sizeParameter: "per_page", size: 3, total: .header("X-Total-Count")).summary
                == "page numbers in ?page= from 1 until an empty page or the total at the X-Total-Count header")
    }
}
