/// A collection request's query string read as filters, sort and page, and the `Link` header for it.
///
/// Reserved parameters: `_sort` (comma-separated properties, `-name` for descending), `_order`
/// (`asc`/`desc`, comma-separated to match `_sort`), `since` (a change-feed cursor, see
/// ``MockCRUD/changes(_:since:filters:)``) and the paging parameters of the request's style
/// (``MockPagination/parameters``): for ``MockPagination/link``, read here, `_page` (from 1) with `_limit`
/// (default ``MockServerOptions/pageSize``), or `limit` with `offset`; the other styles' are read by
/// ``MockStylePaging``. Every other parameter naming a property is an equality filter; unknown ones
/// are ignored (and left out of links). At most ``maximumFilters`` filters and ``maximumSortKeys`` sort keys.
struct MockCollectionQuery {
    enum Paging {
        case none
        case pages(page: Int, limit: Int)
        case offsets(limit: Int, offset: Int)
    }

    /// The parameters every style reserves.
    static let common: Set<String> = ["_sort", "_order", "since"]
    static let defaultPageSize = 10

    var query = MockQuery()
    var paging = Paging.none
    /// The parameters not taken as filters: ``common`` and the style's.
    let reserved: Set<String>

    init(_ request: MockRequest) throws {
        let resource = request.resource
        let settings = request.paging
        reserved = Self.common.union(settings.style.parameters)
        for item in request.queryItems where !reserved.contains(item.name) {
            guard let property = resource.property(named: item.name) else { continue }
            guard let value = property.type.parseQueryValue(item.value) else {
                throw MockHTTPError.badRequest("filter \(item.name)=\(item.value): \(property.name) \(property.type.requirement)",
                                               code: "invalidFilter")
            }
            query.filters.append(MockQuery.Filter(property: property.name, value: value))
            guard query.filters.count <= Self.maximumFilters else {
                throw MockHTTPError.badRequest("too many filters: at most \(Self.maximumFilters) property filters in one request",
                                               code: "tooManyFilters")
            }
        }
        if let sort = request.query("_sort"), !sort.isEmpty {
            let orders = (request.query("_order") ?? "").split(separator: ",").map { $0.lowercased() }
            let fields = sort.split(separator: ",")
            guard fields.count <= Self.maximumSortKeys else {
                throw MockHTTPError.badRequest("_sort: too many sort keys: at most \(Self.maximumSortKeys), not \(fields.count)",
                                               code: "tooManySortKeys")
            }
            for (index, field) in fields.enumerated() {
                var name = String(field)
                var descending = false
                if name.hasPrefix("-") { descending = true; name.removeFirst() }
                guard resource.property(named: name) != nil else {
                    throw MockHTTPError.badRequest("_sort: \(resource.name) has no property '\(name)'", code: "invalidSort")
                }
                let order = index < orders.count ? orders[index] : (orders.count == 1 ? orders[0] : "")
                switch order {
                case "desc": descending = true
                case "asc", "": break
                default: throw MockHTTPError.badRequest("_order must be asc or desc, not '\(order)'", code: "invalidSort")
                }
                query.sort.append(MockQuery.SortKey(property: name, descending: descending))
            }
        }
        guard settings.style == .link else { return }
        if let pageText = request.query("_page") {
            let page = try Self.number("_page", pageText, minimum: 1)
            let limit = settings.size(try request.query("_limit").map { try Self.number("_limit", $0, minimum: 1) })
            paging = .pages(page: page, limit: limit)
            query.limit = limit
            let (offset, overflow) = (page - 1).multipliedReportingOverflow(by: limit)
            query.offset = overflow ? Int.max / 2 : offset
        } else if request.query("limit") != nil || request.query("offset") != nil || request.query("_limit") != nil {
            // `limit` wins over `_limit`; the error names the parameter the request gave.
            let limitName = request.query("limit") != nil ? "limit" : "_limit"
            let limit = try request.query(limitName).map { settings.size(try Self.number(limitName, $0, minimum: 1)) }
            let offset = try request.query("offset").map { try Self.number("offset", $0, minimum: 0) } ?? 0
            query.limit = limit
            query.offset = offset
            if let limit { paging = .offsets(limit: limit, offset: offset) }
        }
    }

    /// The most property filters one request may give, on every store (SQLite's expression depth would
    /// refuse about a thousand): more are a 400 `tooManyFilters` naming the limit.
    static let maximumFilters = 256
    /// The most `_sort` keys one request may give, on every store (SQLite refuses 2,000 `ORDER BY` terms):
    /// more are a 400 `tooManySortKeys` naming the limit.
    static let maximumSortKeys = 64

    /// The largest `_page`, `_limit`, `limit` or `offset` taken.
    static let maximumNumber = 1_000_000_000

    /// The integer value of query parameter `name`, from `minimum` to ``maximumNumber``.
    ///
    /// - Throws: `MockHTTPError` 400 `invalidPage` naming the parameter, the range and the value
    ///   (`_limit must be an integer from 1 to 1000000000, not '-1'`).
    static func number(_ name: String, _ text: String, minimum: Int) throws -> Int {
        guard let value = Int(text), value >= minimum, value <= maximumNumber else {
            throw MockHTTPError.badRequest("\(name) must be an integer from \(minimum) to \(maximumNumber), not '\(text)'",
                                           code: "invalidPage")
        }
        return value
    }

    /// `<…?_page=1&_limit=20>; rel="first", …` or nil when the request is not paged.
    func linkHeader(total: Int, request: MockRequest) -> String? {
        var links: [(String, [(String, String)])] = []
        switch paging {
        case .none:
            return nil
        case .pages(let page, let limit):
            let last = max(1, (total + limit - 1) / limit)
            func params(_ page: Int) -> [(String, String)] { [("_page", String(page)), ("_limit", String(limit))] }
            links.append(("first", params(1)))
            if page > 1 { links.append(("prev", params(min(page - 1, last)))) }
            if page < last { links.append(("next", params(page + 1))) }
            links.append(("last", params(last)))
        case .offsets(let limit, let offset):
            let lastOffset = total == 0 ? 0 : ((total - 1) / limit) * limit
            func params(_ offset: Int) -> [(String, String)] { [("limit", String(limit)), ("offset", String(offset))] }
            links.append(("first", params(0)))
            if offset > 0 { links.append(("prev", params(max(0, min(offset - limit, lastOffset))))) }
            if offset + limit < total { links.append(("next", params(offset + limit))) }
            links.append(("last", params(lastOffset)))
        }
        return links.map { rel, params in "<\(url(request, params))>; rel=\"\(rel)\"" }.joined(separator: ", ")
    }

    /// The absolute URL of this collection with `params` after the parameters the server understood
    /// (property filters, `_sort`, `_order`): unknown parameters are not repeated into links, so that
    /// they stay bounded by the filters the server took.
    func url(_ request: MockRequest, _ params: [(String, String)]) -> String {
        let kept = request.queryItems.filter { item in
            item.name == "_sort" || item.name == "_order"
                || (!reserved.contains(item.name) && request.resource.property(named: item.name) != nil)
        }
        let path = request.segments.map { PercentEncoding.encode($0, allowed: .unreserved) }.joined(separator: "/")
        let items = kept.map { ($0.name, $0.value) } + params
        let query = items.map { PercentEncoding.encode($0.0, allowed: .unreserved) + "=" + PercentEncoding.encode($0.1, allowed: .unreserved) }.joined(separator: "&")
        return "\(request.baseURL)/\(path)?\(query)"
    }
}
