import Foundation

/// The page a collection request asks for in a style other than ``MockPagination/link`` (which
/// ``MockCollectionQuery`` reads): where it starts and how many objects it holds.
///
/// ```swift
/// var query = collection.query
/// let paging = try MockStylePaging(request, query: &query)   // ?startAt=20&maxResults=10 → offset 20, size 10
/// ```
struct MockStylePaging {
    /// Where the page starts.
    enum Start {
        /// After this many objects of the collection.
        case offset(Int)
        /// After the object with this key (keyset styles), given as `text` in `parameter`.
        case after(JSONValue, parameter: String, text: String)
        /// After the object with a key of this text that no object can have (a `starting_after=abc` of an
        /// integer key): answered as a key no object has.
        case unknown(parameter: String, text: String)
    }

    let style: MockPagination
    /// The page's size: the request's (or the default), at most the server's maximum.
    let size: Int
    let start: Start
    /// The page number as the request gives it (``MockPagination/page`` and ``MockPagination/jsonapi`` from 1,
    /// ``MockPagination/hal`` from 0); 0 for other styles.
    let number: Int
    /// ``MockPagination/gitlab``'s `order_by` and `sort`, as its next link repeats them.
    let orderBy: String
    let sortOrder: String

    /// Reads the style's parameters of `request`; ``MockPagination/gitlab``'s `order_by` and `sort` order
    /// `query` when it has no `_sort`.
    ///
    /// - Throws: `MockHTTPError` 400 `invalidPage` naming the parameter for a bad value (a number out of range,
    ///   a cursor this server did not give, an `order_by` naming no property, a `sort` other than asc or desc).
    init(_ request: MockRequest, query: inout MockQuery) throws {
        let settings = request.paging
        style = settings.style
        func integer(_ name: String, minimum: Int) throws -> Int? {
            try request.query(name).map { try MockCollectionQuery.number(name, $0, minimum: minimum) }
        }
        /// The offset of page `page` (from `first`), kept from overflowing.
        func offset(page: Int, first: Int, size: Int) -> Int {
            let (offset, overflow) = (page - first).multipliedReportingOverflow(by: size)
            return overflow ? Int.max / 2 : offset
        }
        var page = 0
        var orderBy = ""
        var sortOrder = "asc"
        switch style {
        case .link:
            size = settings.size(nil)
            start = .offset(0)
        case .cursor:
            size = settings.size(try integer("limit", minimum: 1))
            if let text = request.query("cursor"), !text.isEmpty {
                guard let data = Data(base64Encoded: text), let key = try? JSONValue(parsing: Array(data)),
                      request.resource.primaryKey.values(of: key) != nil else {
                    throw MockHTTPError.badRequest("cursor: '\(text)' is not a cursor this server gave (a next_cursor)", code: "invalidPage")
                }
                start = .after(key, parameter: "cursor", text: text)
            } else {
                start = .offset(0)
            }
        case .stripe:
            size = settings.size(try integer("limit", minimum: 1))
            start = Self.after(request.query("starting_after"), parameter: "starting_after", resource: request.resource)
        case .offset:
            size = settings.size(try integer("limit", minimum: 1))
            start = .offset(try integer("offset", minimum: 0) ?? 0)
        case .jira:
            size = settings.size(try integer("maxResults", minimum: 1))
            start = .offset(try integer("startAt", minimum: 0) ?? 0)
        case .page:
            size = settings.size(try integer("per_page", minimum: 1))
            page = try integer("page", minimum: 1) ?? 1
            start = .offset(offset(page: page, first: 1, size: size))
        case .jsonapi:
            size = settings.size(try integer("page[size]", minimum: 1))
            page = try integer("page[number]", minimum: 1) ?? 1
            start = .offset(offset(page: page, first: 1, size: size))
        case .hal:
            size = settings.size(try integer("size", minimum: 1))
            page = try integer("page", minimum: 0) ?? 0
            start = .offset(offset(page: page, first: 0, size: size))
        case .gitlab:
            if let mode = request.query("pagination"), mode != "keyset" {
                throw MockHTTPError.badRequest("pagination must be keyset, not '\(mode)'", code: "invalidPage")
            }
            size = settings.size(try integer("per_page", minimum: 1))
            let resource = request.resource
            orderBy = request.query("order_by") ?? resource.primaryKey.parts.first?.name ?? "id"
            guard resource.property(named: orderBy) != nil else {
                throw MockHTTPError.badRequest("order_by: \(resource.name) has no property '\(orderBy)'", code: "invalidPage")
            }
            sortOrder = request.query("sort") ?? "asc"
            guard sortOrder == "asc" || sortOrder == "desc" else {
                throw MockHTTPError.badRequest("sort must be asc or desc, not '\(sortOrder)'", code: "invalidPage")
            }
            if query.sort.isEmpty, request.query("order_by") != nil || sortOrder == "desc" {
                query.sort = [MockQuery.SortKey(property: orderBy, descending: sortOrder == "desc")]
            }
            start = Self.after(request.query("id_after"), parameter: "id_after", resource: resource)
        }
        number = page
        self.orderBy = orderBy
        self.sortOrder = sortOrder
    }

    /// The start after a key given as text, from the first object when there is none.
    private static func after(_ text: String?, parameter: String, resource: MockResource) -> Start {
        guard let text, !text.isEmpty else { return .offset(0) }
        guard let key = key(text, of: resource) else { return .unknown(parameter: parameter, text: text) }
        return .after(key, parameter: parameter, text: text)
    }

    /// A key as a `starting_after` or `id_after` value gives it: `7`, `cus_9`, or a composite key's parts
    /// as its path gives them (`octocat/Hello-World/refs%2Fheads%2Fmain`); nil when it cannot be one.
    static func key(_ text: String, of resource: MockResource) -> JSONValue? {
        let key = resource.primaryKey
        guard key.kind == .composite else { return key.parse(text) }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == key.parts.count else { return nil }
        var values: [JSONValue] = []
        for (part, property) in zip(parts, key.parts) {
            guard let decoded = PercentEncoding.decodeString(part), let value = MockPrimaryKey.parse(decoded, as: property) else { return nil }
            values.append(value)
        }
        return .array(values)
    }

    /// A key as text, as ``key(_:of:)`` reads it back (and JSON:API's `id`).
    static func text(of key: JSONValue, in resource: MockResource) -> String {
        guard resource.primaryKey.kind == .composite else { return key.stringValue ?? key.serialized() }
        return resource.primaryKey.path(of: key)
    }

    /// ``MockPagination/cursor``'s cursor after the object with `key`: the base64 of the key's JSON.
    static func cursor(after key: JSONValue) -> String {
        Data(key.serializedBytes()).base64EncodedString()
    }
}
