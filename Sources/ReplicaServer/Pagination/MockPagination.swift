/// How the mock server pages a collection (`GET /people`): the query parameters it reads and the shape
/// of its answer, each as a well-known API pages. Server-wide with ``MockServerOptions/pagination``
/// (`replica serve --pagination STYLE`), per resource with ``MockResource/pagination`` and per API route
/// with ``MockRoute/pagination`` (`--pagination people=cursor`, `--pagination /v1/customers=stripe`).
///
/// Every style keeps the collection's filters (`?color=red`), `_sort`/`_order` and the change feed
/// (`?since=`); a request without a size gets ``MockServerOptions/pageSize`` (10), one asking more than
/// ``MockServerOptions/maxPageSize`` gets that many and is told so; a bad paging value is a 400
/// `invalidPage` naming the parameter. Every style but ``gitlab`` sends `X-Total-Count`. Item arrays hold
/// the objects as the resource's serializer writes them. The keyset styles (``cursor``, ``stripe``,
/// ``gitlab``) find the given key's place by reading the whole filtered, ordered collection: right on every
/// store, and fast enough for a mock server's collections, not for millions of objects.
///
/// ```swift
/// var options = MockServerOptions()
/// options.pagination = .stripe          // GET /customers?limit=10&starting_after=cus_9
/// options.pageSize = 10
/// options.maxPageSize = 50
/// let server = try await MockServer.start(resources: resources, options: options)
/// ```
public enum MockPagination: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// RESTEasy's and json-server's, the default: `?_page=2&_limit=10` (pages from 1) or
    /// `?limit=10&offset=10`, a bare array (or the route's envelope), `X-Total-Count` and
    /// `Link: <…?_page=1&_limit=10>; rel="first", <…>; rel="prev", <…>; rel="next", <…>; rel="last"`.
    /// A request with no paging parameter gets the whole collection and no `Link`.
    case link
    /// Slack's: `?limit=10&cursor=C` (no cursor for the first page) answers
    /// `{"ok": true, "items": [...], "response_metadata": {"next_cursor": "C2"}}`, `"next_cursor": ""` on
    /// the last page. A cursor is the base64 of the last object's key (JSON): opaque and stable.
    case cursor
    /// Stripe's: `?limit=10&starting_after=ID` (ID the key of the previous page's last object) answers
    /// `{"object": "list", "url": "/v1/customers", "has_more": true, "data": [...]}`. An ID that names
    /// no object of the collection is a 400 `{"error": {"type": "invalid_request_error", "message":
    /// "No such object: 'ID'", "param": "starting_after"}}`.
    case stripe
    /// Offset and limit with a total: `?offset=20&limit=10` answers
    /// `{"items": [...], "total": 23, "offset": 20, "limit": 10}` (`limit` the size really used).
    case offset
    /// Jira's: `?startAt=20&maxResults=10` answers
    /// `{"startAt": 20, "maxResults": 10, "total": 23, "isLast": true, "values": [...]}` (`maxResults` the
    /// size really used).
    case jira
    /// Page numbers from 1: `?page=3&per_page=10` answers
    /// `{"items": [...], "page": 3, "per_page": 10, "total": 23, "total_pages": 3}`; a page past the end
    /// has `"items": []`.
    case page
    /// JSON:API's: `?page[number]=1&page[size]=10` (from 1) answers `{"data": [{"type": "people", "id":
    /// "7", "attributes": {…every other property…}}], "links": {"self": URL, "first": URL, "last": URL,
    /// "next": URL or null}, "meta": {"total": 23}}`, the URLs absolute and keeping the filters and sort.
    case jsonapi
    /// Spring Data REST's HAL: `?page=0&size=10` (from 0) answers `{"_embedded": {"people": [...]},
    /// "_links": {"self": {"href": URL}, "next": {"href": URL}, "last": {"href": URL}}, "page": {"size": 10,
    /// "totalElements": 23, "totalPages": 3, "number": 0}}`, `next` absent on the last page.
    case hal
    /// GitLab's keyset pagination: `?pagination=keyset&per_page=10&order_by=id&sort=asc&id_after=ID`
    /// answers a bare array and, while there are more, `Link: <…&id_after=LAST>; rel="next"` (no other
    /// link, no `X-Total-Count`). `order_by` names a property, `sort` is `asc` or `desc`.
    case gitlab

    public var description: String { rawValue }

    /// The query parameters this style reads for paging (never taken as property filters).
    var parameters: Set<String> {
        switch self {
        case .link: return ["_page", "_limit", "limit", "offset"]
        case .cursor: return ["limit", "cursor"]
        case .stripe: return ["limit", "starting_after"]
        case .offset: return ["offset", "limit"]
        case .jira: return ["startAt", "maxResults"]
        case .page: return ["page", "per_page"]
        case .jsonapi: return ["page[number]", "page[size]"]
        case .hal: return ["page", "size"]
        case .gitlab: return ["pagination", "per_page", "order_by", "sort", "id_after"]
        }
    }
}

/// The paging a request is answered with: the style its route, resource or server names, and the sizes.
struct MockPagingSettings: Sendable, Hashable {
    var style = MockPagination.link
    /// The page size of a request that gives none (at least 1).
    var pageSize = MockCollectionQuery.defaultPageSize
    /// The most objects one page holds, nil for no limit.
    var maxPageSize: Int?

    /// `requested` (or the default page size), at most ``maxPageSize``.
    func size(_ requested: Int?) -> Int {
        let size = requested ?? max(1, pageSize)
        guard let maxPageSize else { return size }
        return min(size, max(1, maxPageSize))
    }
}

extension MockPagination {
    /// The style that answers as a schema route's pagination reads, so that one schema file
    /// drives the client and the mock server alike; `nil` when no style answers that way (a
    /// cursor at another place, another parameter, another envelope than the style's).
    ///
    /// ```swift
    /// MockPagination(mirroring: .stripe, envelope: "data")   // .stripe
    /// MockPagination(mirroring: .jsonAPI, envelope: "data")  // .jsonapi
    /// ```
    ///
    /// - Parameters:
    ///   - rule: The route's (or the schema's) pagination.
    ///   - envelope: The route's envelope: each style answers its own (`data`, `items`, `values`, …).
    public init?(mirroring rule: PaginationRule, envelope: String?) {
        let envelope = envelope ?? ""
        switch rule {
        case .linkHeader where envelope.isEmpty:
            self = .link
        case .afterLastKey("starting_after", let hasMore) where hasMore.description == "/has_more" && envelope == "data":
            self = .stripe
        case .cursor("cursor", .pointer(let pointer), nil) where pointer.description == "/response_metadata/next_cursor" && envelope == "items":
            self = .cursor
        case .offset("offset", "limit"?, _, let total, nil) where (total == nil || total?.description == "/total") && envelope == "items":
            self = .offset
        case .offset("startAt", "maxResults"?, _, let total, let isLast)
            where (total == nil || total?.description == "/total") && (isLast == nil || isLast?.description == "/isLast")
                && envelope == "values":
            self = .jira
        case .page("page", 1, let size, _, let total, let pageCount)
            where (size == nil || size == "per_page") && (total == nil || total?.description == "/total")
                && (pageCount == nil || pageCount?.description == "/total_pages") && envelope == "items":
            self = .page
        case .nextURL(let pointer) where pointer.description == "/links/next" && envelope == "data":
            self = .jsonapi
        case .nextURL(let pointer) where pointer.description == "/_links/next/href" && envelope.hasPrefix("_embedded."):
            self = .hal
        default:
            return nil
        }
    }
}
