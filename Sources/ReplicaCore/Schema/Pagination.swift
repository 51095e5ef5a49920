import Foundation

/// A value a response carries: a header, or a place in its body.
///
/// In a schema file it is written `header:NAME` or as a JSON pointer (`/meta/total`).
///
/// ```swift
/// ResponseValue("header:X-Total-Count")   // .header("X-Total-Count")
/// ResponseValue("/meta/total")            // .pointer(/meta/total)
/// ```
public enum ResponseValue: Sendable, Hashable, CustomStringConvertible {
    /// A response header (`header:X-Cursor` in a schema file).
    case header(String)
    /// A JSON pointer into the response body (`/meta/cursor`); a string or a number.
    case pointer(JSONPointer)

    /// The schema file's spelling: `header:X-Cursor` or `/meta/cursor`.
    public var description: String {
        switch self {
        case .header(let name): return "header:" + name
        case .pointer(let pointer): return pointer.description
        }
    }

    /// Reads `header:NAME` or a JSON pointer (`/cursor`); `nil` for anything else.
    ///
    /// ```swift
    /// ResponseValue("header:X-Cursor")   // .header("X-Cursor")
    /// ResponseValue("/meta/cursor")      // .pointer(/meta/cursor)
    /// ```
    public init?(_ text: String) {
        if text.hasPrefix("header:") {
            let name = text.dropFirst("header:".count).trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_".contains($0)) }) else { return nil }
            self = .header(name)
        } else if text.hasPrefix("/"), let pointer = JSONPointer(text) {
            self = .pointer(pointer)
        } else {
            return nil
        }
    }

    /// Where it was read, for messages: `/has_more` or `the X-Total-Count header`.
    package var place: String {
        switch self {
        case .header(let name): return "the \(name) header"
        case .pointer(let pointer): return pointer.description
        }
    }
}

/// How a route's collection goes on past its first page: the `"pagination"` of a route (or of
/// the whole schema) in a schema file, and ``Route/pagination`` in Swift. One model for both.
///
/// Each style says how the next page is asked for and how the last page is recognised. A sync
/// deletes stale rows only after a page that ended the collection the way its style says; a
/// page that says there is more which the sync did not follow (the page limit, a sign the route's
/// style does not read) deletes nothing.
///
/// | Style | Schema file | APIs |
/// |---|---|---|
/// | ``linkHeader`` | `"link"` (the default) | GitHub, GitLab (offset and keyset), `replica serve` |
/// | ``nextURL(_:)`` | `{"style": "next", "next": "/links/next"}` | JSON:API, HAL (`/_links/next/href`), Zendesk (`/next_page`) |
/// | ``cursor(parameter:cursor:hasMore:)`` | `{"style": "cursor", "parameter": "cursor", "cursor": "/response_metadata/next_cursor"}` | Slack, Notion (`start_cursor`, `/next_cursor`, `/has_more`) |
/// | ``afterLastKey(parameter:hasMore:)`` | `{"style": "after", "parameter": "starting_after", "hasMore": "/has_more"}` | Stripe |
/// | ``offset(parameter:limitParameter:limit:total:isLast:)`` | `{"style": "offset", "parameter": "startAt", "limitParameter": "maxResults", "limit": 50, "total": "/total", "isLast": "/isLast"}` | Jira, offset/limit APIs |
/// | ``page(parameter:startingAt:sizeParameter:size:total:pageCount:)`` | `{"style": "page", "parameter": "page", "sizeParameter": "per_page", "size": 100, "pageCount": "/total_pages"}` | page-numbered APIs |
///
/// ```swift
/// Route(.get, "/v1/customers", target: .entity("Customer"), stale: .delete, envelope: "data",
///       pagination: .stripe)   // .afterLastKey(parameter: "starting_after", hasMore: /has_more)
/// Route(.get, "/rest/api/3/project/search", target: .entity("Project"), envelope: "values",
///       pagination: .offset(parameter: "startAt", limitParameter: "maxResults", limit: 50,
///                           total: ResponseValue("/total"), isLast: JSONPointer("/isLast")))
/// ```
public enum PaginationRule: Sendable, Hashable {
    /// Follow `Link: <…>; rel="next"` headers; the page without one is the last.
    case linkHeader
    /// Follow the URL (absolute, or relative to the page's) at a pointer into the body: JSON:API's
    /// `/links/next`, HAL's `/_links/next/href`, Zendesk's `/next_page`. A missing, null or empty
    /// one ends the collection.
    case nextURL(JSONPointer)
    /// Send the cursor each page carries (in its body or a header) back as the query parameter
    /// `parameter`. A missing, null or empty cursor ends the collection, and so does `false` at
    /// `hasMore` (Notion's `/has_more`) when given.
    case cursor(parameter: String, cursor: ResponseValue, hasMore: JSONPointer? = nil)
    /// Send the key of the page's last object as `parameter` while the page says `true` at
    /// `hasMore` (Stripe's `starting_after` and `/has_more`). The entity needs a single-attribute key.
    case afterLastKey(parameter: String, hasMore: JSONPointer)
    /// Send the offset of the next object as `parameter` (from 0), and `limit` as
    /// `limitParameter` when given. The next offset counts the objects the server really
    /// returned (a server that caps the page size, as Jira caps `maxResults`, still pages right).
    /// The collection ends on an empty page, on `true` at `isLast`, or once `total` objects are read.
    case offset(parameter: String = "offset", limitParameter: String? = "limit", limit: Int? = nil,
                total: ResponseValue? = nil, isLast: JSONPointer? = nil)
    /// Send page numbers `startingAt`, `startingAt + 1`, … as `parameter`, and `size` as
    /// `sizeParameter` when given. The collection ends on an empty page, after `pageCount` pages,
    /// or once `total` objects are read.
    case page(parameter: String = "page", startingAt: Int = 1, sizeParameter: String? = nil, size: Int? = nil,
              total: ResponseValue? = nil, pageCount: ResponseValue? = nil)

    /// Stripe's lists: `?starting_after=<last id>` while `"has_more": true` (envelope `data`).
    public static let stripe = PaginationRule.afterLastKey(parameter: "starting_after", hasMore: JSONPointer(validating: "/has_more"))
    /// Slack's Web API: `?cursor=` from `response_metadata.next_cursor`, `""` on the last page.
    public static let slack = PaginationRule.cursor(parameter: "cursor", cursor: .pointer(JSONPointer(validating: "/response_metadata/next_cursor")))
    /// Notion's lists: `start_cursor` from `next_cursor` while `has_more` (envelope `results`).
    public static let notion = PaginationRule.cursor(parameter: "start_cursor", cursor: .pointer(JSONPointer(validating: "/next_cursor")),
                                                     hasMore: JSONPointer(validating: "/has_more"))
    /// JSON:API: the URL at `links.next` (envelope `data`).
    public static let jsonAPI = PaginationRule.nextURL(JSONPointer(validating: "/links/next"))
    /// HAL: the URL at `_links.next.href` (envelope `_embedded.<name>`).
    public static let hal = PaginationRule.nextURL(JSONPointer(validating: "/_links/next/href"))
    /// Jira's REST API: `startAt`/`maxResults` with `total` and `isLast` (envelope `values` or `issues`).
    public static let jira = PaginationRule.offset(parameter: "startAt", limitParameter: "maxResults", limit: 50,
                                                   total: .pointer(JSONPointer(validating: "/total")),
                                                   isLast: JSONPointer(validating: "/isLast"))

    /// The style's name in a schema file: `link`, `next`, `cursor`, `after`, `offset` or `page`.
    public var style: String {
        switch self {
        case .linkHeader: return "link"
        case .nextURL: return "next"
        case .cursor: return "cursor"
        case .afterLastKey: return "after"
        case .offset: return "offset"
        case .page: return "page"
        }
    }

    /// Whether a page's objects must be counted across the traversal to know where it ends (a total).
    package var total: ResponseValue? {
        switch self {
        case .offset(_, _, _, let total, _), .page(_, _, _, _, let total, _): return total
        default: return nil
        }
    }

    /// The rule in words, for messages: `Link: rel="next" headers`, `the cursor at
    /// /response_metadata/next_cursor sent as ?cursor=`.
    public var summary: String {
        switch self {
        case .linkHeader:
            return "Link: rel=\"next\" headers"
        case .nextURL(let pointer):
            return "the next page's URL at \(pointer)"
        case .cursor(let parameter, let cursor, let hasMore):
            return "the cursor at \(cursor.place) sent as ?\(parameter)=" + (hasMore.map { " while \($0) is true" } ?? "")
        case .afterLastKey(let parameter, let hasMore):
            return "the last object's key sent as ?\(parameter)= while \(hasMore) is true"
        case .offset(let parameter, _, _, let total, let isLast):
            var ends = ["an empty page"]
            if let isLast { ends.append("\(isLast) true") }
            if let total { ends.append("the total at \(total.place)") }
            return "offsets in ?\(parameter)= until " + ends.joined(separator: " or ")
        case .page(let parameter, let start, _, _, let total, let pageCount):
            var ends = ["an empty page"]
            if let pageCount { ends.append("the page count at \(pageCount.place)") }
            if let total { ends.append("the total at \(total.place)") }
            return "page numbers in ?\(parameter)= from \(start) until " + ends.joined(separator: " or ")
        }
    }
}

extension JSONPointer {
    /// A pointer from a literal known to be valid (the library's own constants).
    init(validating text: StaticString) {
        guard let pointer = JSONPointer("\(text)") else { preconditionFailure("invalid JSON pointer literal \(text)") }
        self = pointer
    }
}

extension PaginationRule {
    /// The rule in the schema-file format (its route's `"pagination"`): `"link"`, or an object
    /// with its `"style"`.
    ///
    /// ```swift
    /// PaginationRule.stripe.schemaFileJSON.serialized()   // {"style":"after","parameter":"starting_after","hasMore":"/has_more"}
    /// ```
    public var schemaFileJSON: JSONValue { fileJSON }

    /// The rule in the schema-file format: `"link"`, or an object with its `"style"`.
    var fileJSON: JSONValue {
        var object = JSONObject()
        object["style"] = .string(style)
        switch self {
        case .linkHeader:
            return .string("link")
        case .nextURL(let pointer):
            object["next"] = .string(pointer.description)
        case .cursor(let parameter, let cursor, let hasMore):
            object["parameter"] = .string(parameter)
            object["cursor"] = .string(cursor.description)
            if let hasMore { object["hasMore"] = .string(hasMore.description) }
        case .afterLastKey(let parameter, let hasMore):
            object["parameter"] = .string(parameter)
            object["hasMore"] = .string(hasMore.description)
        case .offset(let parameter, let limitParameter, let limit, let total, let isLast):
            object["parameter"] = .string(parameter)
            object["limitParameter"] = limitParameter.map { .string($0) } ?? .null
            if let limit { object["limit"] = .int(Int64(limit)) }
            if let total { object["total"] = .string(total.description) }
            if let isLast { object["isLast"] = .string(isLast.description) }
        case .page(let parameter, let start, let sizeParameter, let size, let total, let pageCount):
            object["parameter"] = .string(parameter)
            object["startAt"] = .int(Int64(start))
            if let sizeParameter { object["sizeParameter"] = .string(sizeParameter) }
            if let size { object["size"] = .int(Int64(size)) }
            if let total { object["total"] = .string(total.description) }
            if let pageCount { object["pageCount"] = .string(pageCount.description) }
        }
        return .object(object)
    }
}

extension SchemaFileReader {
    /// A `"pagination"` (of a route or the schema): `"link"`, or `{"style": …}` with the style's members.
    func pagination(from value: JSONValue, at pointer: JSONPointer) throws -> PaginationRule {
        let styles = "link, next, cursor, after, offset or page"
        if case .string(let name) = value {
            guard name == "link" else {
                throw fail(.invalidValue, "unknown pagination '\(name)': a string names only \"link\"; the other styles "
                           + "(\(styles)) are objects such as {\"style\": \"cursor\", \"parameter\": \"cursor\", "
                           + "\"cursor\": \"/next_cursor\"}", at: pointer)
            }
            return .linkHeader
        }
        guard case .object(let members) = value else {
            throw fail(.invalidValue, "expected the pagination as \"link\" or an object with a \"style\", found \(value.typeName)",
                       at: pointer)
        }
        let style = try requiredString(members, "style", at: pointer)
        let allowed: Set<String>
        switch style {
        case "link": allowed = ["style"]
        case "next": allowed = ["style", "next"]
        case "cursor": allowed = ["style", "parameter", "cursor", "hasMore"]
        case "after": allowed = ["style", "parameter", "hasMore"]
        case "offset": allowed = ["style", "parameter", "limitParameter", "limit", "total", "isLast"]
        case "page": allowed = ["style", "parameter", "startAt", "sizeParameter", "size", "total", "pageCount"]
        default:
            throw fail(.invalidValue, "unknown pagination style '\(style)' (expected \(styles))", at: pointer / "style")
        }
        let object = try self.object(value, at: pointer, allowed: allowed)
        func parameter(_ key: String, default fallback: String?) throws -> String? {
            guard let raw = object[key] else { return fallback }
            if raw.isNull { return nil }
            guard case .string(let name) = raw, !name.isEmpty else {
                throw fail(.invalidValue, "expected a query parameter name, found \(raw.serialized())", at: pointer / key)
            }
            return name
        }
        func jsonPointer(_ key: String) throws -> JSONPointer? {
            guard let text = try string(object[key], at: pointer / key) else { return nil }
            guard text.hasPrefix("/"), let parsed = JSONPointer(text) else {
                throw fail(.invalidValue, "expected a JSON pointer into the response ('/\(key)'), found '\(text)'", at: pointer / key)
            }
            return parsed
        }
        func requiredPointer(_ key: String) throws -> JSONPointer {
            guard let found = try jsonPointer(key) else { throw fail(.missingKey, "missing required key '\(key)'", at: pointer) }
            return found
        }
        func responseValue(_ key: String) throws -> ResponseValue? {
            guard let text = try string(object[key], at: pointer / key) else { return nil }
            guard let parsed = ResponseValue(text) else {
                throw fail(.invalidValue, "expected 'header:NAME' or a JSON pointer ('/\(key)'), found '\(text)'", at: pointer / key)
            }
            return parsed
        }
        func count(_ key: String, minimum: Int) throws -> Int? {
            guard let raw = object[key], !raw.isNull else { return nil }
            guard let number = raw.int64Value, number >= minimum, number <= 1_000_000_000, let int = Int(exactly: number) else {
                throw fail(.invalidValue, "expected an integer from \(minimum) to 1000000000, found \(raw.serialized())", at: pointer / key)
            }
            return int
        }
        switch style {
        case "link":
            return .linkHeader
        case "next":
            return .nextURL(try requiredPointer("next"))
        case "cursor":
            guard let cursor = try responseValue("cursor") else { throw fail(.missingKey, "missing required key 'cursor'", at: pointer) }
            return .cursor(parameter: try parameter("parameter", default: "cursor") ?? "cursor", cursor: cursor,
                           hasMore: try jsonPointer("hasMore"))
        case "after":
            return .afterLastKey(parameter: try parameter("parameter", default: "starting_after") ?? "starting_after",
                                 hasMore: try jsonPointer("hasMore") ?? JSONPointer(validating: "/has_more"))
        case "offset":
            return .offset(parameter: try parameter("parameter", default: "offset") ?? "offset",
                           limitParameter: try parameter("limitParameter", default: "limit"), limit: try count("limit", minimum: 1),
                           total: try responseValue("total"), isLast: try jsonPointer("isLast"))
        default:
            return .page(parameter: try parameter("parameter", default: "page") ?? "page",
                         startingAt: try count("startAt", minimum: 0) ?? 1, sizeParameter: try parameter("sizeParameter", default: nil),
                         size: try count("size", minimum: 1), total: try responseValue("total"),
                         pageCount: try responseValue("pageCount"))
        }
    }
}

extension PaginationRule {
    /// The pagination an envelope's members (beside its collection) show, as public APIs shape
    /// them; `nil` when they show none (`Link` headers, or a single page).
    ///
    /// JSON:API's `links.next`, HAL's `_links`, Zendesk's `next_page`, Django REST framework's
    /// `next` beside `previous` or `count`: a next URL. Slack's `response_metadata.next_cursor`,
    /// Notion's `next_cursor` (with `has_more`), Google's `nextPageToken`: a cursor. Stripe's
    /// `has_more` alone: the last object's key as `starting_after`. Jira's `startAt` and
    /// `maxResults`, `offset` and `limit`: offsets. `page` with `total_pages` or a page size: page numbers.
    ///
    /// ```swift
    /// PaginationRule.inferred(fromEnvelope: ["object": "list", "has_more": true, "url": "/v1/customers"])   // .stripe
    /// ```
    public static func inferred(fromEnvelope members: JSONObject) -> PaginationRule? {
        func has(_ key: String) -> Bool { members[key] != nil }
        func pointer(_ text: String) -> JSONPointer { JSONPointer(text) ?? .root }
        func isURLOrNull(_ key: String) -> Bool {
            switch members[key] {
            case .string?, .null?: return true
            default: return false
            }
        }
        func integer(_ key: String) -> Int? { members[key]?.int64Value.flatMap { Int(exactly: $0) } }
        if case .object(let links)? = members["links"], links["next"] != nil { return .nextURL(pointer("/links/next")) }
        if case .object = members["_links"] { return .nextURL(pointer("/_links/next/href")) }
        if isURLOrNull("next_page") { return .nextURL(pointer("/next_page")) }
        if isURLOrNull("next"), has("previous") || has("count") { return .nextURL(pointer("/next")) }
        if case .object(let metadata)? = members["response_metadata"], metadata["next_cursor"] != nil {
            return .cursor(parameter: "cursor", cursor: .pointer(pointer("/response_metadata/next_cursor")))
        }
        if has("next_cursor") {
            let hasMore = has("has_more") ? pointer("/has_more") : nil
            // Notion lists (`"object": "list"`) take it back as `start_cursor`.
            let parameter = members["object"] == .string("list") ? "start_cursor" : "cursor"
            return .cursor(parameter: parameter, cursor: .pointer(pointer("/next_cursor")), hasMore: hasMore)
        }
        if has("nextPageToken") { return .cursor(parameter: "pageToken", cursor: .pointer(pointer("/nextPageToken"))) }
        if has("next_page_token") { return .cursor(parameter: "page_token", cursor: .pointer(pointer("/next_page_token"))) }
        if case .bool? = members["has_more"] { return .stripe }
        let total: ResponseValue? = has("total") ? .pointer(pointer("/total"))
            : has("total_count") ? .pointer(pointer("/total_count")) : nil
        if has("startAt"), has("maxResults") {
            return .offset(parameter: "startAt", limitParameter: "maxResults", limit: integer("maxResults"), total: total,
                           isLast: has("isLast") ? pointer("/isLast") : nil)
        }
        if has("offset"), has("limit") {
            return .offset(parameter: "offset", limitParameter: "limit", limit: integer("limit"), total: total)
        }
        if integer("page") != nil {
            let sizeKey = ["per_page", "page_size", "pageSize", "perPage"].first(where: has)
            let countKey = ["total_pages", "totalPages", "page_count", "pageCount"].first(where: has)
            guard sizeKey != nil || countKey != nil else { return nil }
            return .page(parameter: "page", startingAt: 1, sizeParameter: sizeKey, size: sizeKey.flatMap(integer), total: total,
                         pageCount: countKey.map { .pointer(pointer("/" + $0)) })
        }
        return nil
    }
}
