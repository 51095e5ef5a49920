import Foundation
import ReplicaCore

/// What a sync does when its last page says the collection goes on, but the route's pagination
/// found no page after it (``ClientConfiguration/unfollowedPages``).
///
/// A sync that deleted stale rows there would delete every row of the pages it never read: a
/// Stripe list (`"has_more": true`) synced with the default `Link` pagination deleted 5 of 8
/// customers. Either way nothing is deleted.
///
/// ```swift
/// configuration.unfollowedPages = .warn   // write the pages read, delete nothing, report it
/// ```
public enum UnfollowedPagesPolicy: String, Sendable, Hashable, CaseIterable {
    /// The sync fails with ``ClientError/Code/unfollowedPages`` and writes nothing (the default).
    case fail
    /// The pages read are written, nothing is deleted, and ``CallResult/unfollowedPages`` says why.
    case warn
}

/// A response's sign that its collection goes on past it: where it was found and what it said.
///
/// ```swift
/// let signal = MorePagesSignal.find(metadata: page, objectsRead: 3)
/// signal?.description   // "/has_more: true"
/// ```
public struct MorePagesSignal: Sendable, Hashable, CustomStringConvertible {
    /// The JSON pointer in the body (`/has_more`) or the header (`the X-Total-Count header`).
    public var location: String
    /// What it said (`true`, `"dXNlcjpVMDYxTkZUVDI="`, `230 (30 read)`).
    public var value: String

    public var description: String { "\(location): \(value)" }

    /// Body keys that say there is a next page when true (Stripe, Notion) or false (Jira's `isLast`).
    static let moreFlags = ["/has_more", "/hasMore", "/meta/has_more", "/pagination/has_more"]
    static let lastFlags = ["/isLast", "/is_last", "/last"]
    /// Body keys holding the next page's cursor or URL: non-empty means there is one (Slack,
    /// Notion, Google, JSON:API, HAL, Zendesk, Django REST framework).
    static let nextPointers = ["/response_metadata/next_cursor", "/next_cursor", "/nextCursor", "/next_page_token",
                               "/nextPageToken", "/links/next", "/_links/next", "/next_page", "/nextPage", "/next",
                               "/meta/next", "/meta/next_cursor", "/pagination/next", "/pagination/next_cursor"]
    /// Body keys holding the collection's size (GitHub search's `total_count`), and `total`, which
    /// counts only beside one of ``pagingCompanions`` (offset/limit, Jira's `startAt`/`maxResults`).
    static let totalPointers = ["/total_count", "/totalCount", "/total_results", "/totalResults", "/totalElements"]
    static let pagingCompanions = ["offset", "limit", "startAt", "maxResults", "page", "per_page", "perPage", "page_size",
                                   "pageSize", "skip", "top"]

    /// The first sign in a last page's body (its `metadata`: the response without its
    /// collections) that the collection goes on past the `objectsRead` objects read so far;
    /// `nil` when there is none. (A header total such as `X-Total-Count` counts only when a
    /// route's pagination names it: servers send it for filtered and changing collections.)
    public static func find(metadata: JSONValue?, objectsRead: Int) -> MorePagesSignal? {
        guard let metadata else { return nil }
        for pointer in moreFlags {
            if case .bool(true)? = metadata.value(at: pointer) { return MorePagesSignal(location: pointer, value: "true") }
        }
        for pointer in lastFlags {
            if case .bool(false)? = metadata.value(at: pointer) { return MorePagesSignal(location: pointer, value: "false") }
        }
        for pointer in nextPointers {
            guard let value = metadata.value(at: pointer) else { continue }
            switch value {
            case .null, .bool(false): continue
            case .string(let text) where text.isEmpty: continue
            case .object(let link) where link.isEmpty || link["href"]?.isNull == true: continue
            default: return MorePagesSignal(location: pointer, value: value.serialized())
            }
        }
        var totals = totalPointers
        if case .object(let top) = metadata, pagingCompanions.contains(where: { top[$0] != nil }) {
            totals.append("/total")
        }
        for pointer in totals {
            if let total = metadata.value(at: pointer)?.int64Value, total > objectsRead {
                return MorePagesSignal(location: pointer, value: "\(total) (\(objectsRead) read)")
            }
        }
        return nil
    }
}

extension JSONValue {
    /// The value at a pointer written as text (`/has_more`).
    fileprivate func value(at pointer: String) -> JSONValue? {
        JSONPointer(pointer).flatMap { self[pointer: $0] }
    }
}

/// What one traversal has read so far, for the pagination styles that count objects.
struct PageProgress {
    /// Objects the pages held (their keys, counted per page).
    var objectsRead = 0
    /// The distinct keys read, kept when the rule names a total: a collection that shifted under
    /// offset pages shows as fewer distinct objects than its total.
    var distinct: Set<AttributeValue>?
    /// The total the last page gave, under the rule's `total`.
    var total: (value: Int64, place: String)?
    /// The page count the last page gave, under a page rule's `pageCount`.
    var pageCount: Int64?

    init(rule: PaginationRule) {
        if rule.total != nil { distinct = [] }
    }

    mutating func read(_ keys: PrimaryKeys) {
        objectsRead += keys.count
        if distinct != nil { distinct?.formUnion(keys) }
    }

    /// The sign that the pages read fall short of the total the last one gave.
    var shortfall: MorePagesSignal? {
        guard let total, let distinct, Int64(distinct.count) < total.value else { return nil }
        return MorePagesSignal(location: total.place, value: "\(total.value) (\(distinct.count) read)")
    }
}

extension ReplicaClient {
    /// The rule a call pages by: the configuration's for the route, the route's own, the schema's, else `Link` headers.
    func paginationRule(for prepared: Prepared) -> (rule: PaginationRule, declared: Bool) {
        if let rule = configuration.pagination[prepared.routeName] ?? prepared.entry.route.pagination ?? store.schema.pagination {
            return (rule, true)
        }
        return (.linkHeader, false)
    }

    /// Query parameters the first page of a collection sends for its rule: the page size
    /// (`limit`, `per_page`), unless the call gives it.
    static func firstPageQuery(for rule: PaginationRule, given: [String: Parameter]) -> [(String, Parameter)] {
        switch rule {
        case .offset(_, let limitParameter?, let limit?, _, _) where given[limitParameter] == nil:
            return [(limitParameter, .value(.int(Int64(limit))))]
        case .page(_, _, let sizeParameter?, let size?, _, _) where given[sizeParameter] == nil:
            return [(sizeParameter, .value(.int(Int64(size))))]
        default:
            return []
        }
    }

    /// The URL of the page after `page` (the `number`-th), or `nil` when it was the last.
    ///
    /// - Throws: ``ClientError`` `.invalidResponse` when the page says there is more but not
    ///   where (`has_more` true on an empty Stripe page, a next URL that is no URL, a total that is no number).
    func nextURL(after response: ClientResponse, request: ClientRequest, page: StagedPage, number: Int,
                 rule: PaginationRule, entity: String?, progress: inout PageProgress) throws -> URL? {
        let what = "\(request.method) \(request.url.absoluteString)"
        let metadata = page.metadata
        func invalid(_ message: String) -> ClientError {
            ClientError(.invalidResponse, message + " (pagination: \(rule.summary))", status: response.status,
                        headers: response.headers, request: what)
        }
        func value(_ source: ResponseValue) -> JSONValue? {
            switch source {
            case .header(let name): return response.headers[name].map { .string($0) }
            case .pointer(let pointer): return metadata?[pointer: pointer]
            }
        }
        func flag(_ pointer: JSONPointer) throws -> Bool? {
            guard let found = metadata?[pointer: pointer], !found.isNull else { return nil }
            guard case .bool(let bool) = found else { throw invalid("\(pointer) is \(found.serialized()), not true or false") }
            return bool
        }
        func count(_ source: ResponseValue, _ what: String) throws -> Int64? {
            guard let found = value(source), !found.isNull else { return nil }
            if let number = found.int64Value, number >= 0 { return number }
            if case .string(let text) = found, let number = Int64(text.trimmingCharacters(in: .whitespaces)), number >= 0 {
                return number
            }
            throw invalid("the \(what) at \(source.place) is \(found.serialized()), not a count")
        }
        func readTotal(_ source: ResponseValue?) throws {
            guard let source, let total = try count(source, "total") else { return }
            progress.total = (total, source.place)
        }
        func currentNumber(_ parameter: String) -> Int? {
            URLComponents(url: request.url, resolvingAgainstBaseURL: true)?.queryItems?
                .last { $0.name == parameter }?.value.flatMap { Int($0) }
        }
        progress.read(page.keys)
        switch rule {
        case .linkHeader:
            return Self.nextLink(response.headers, relativeTo: request.url)
        case .nextURL(let pointer):
            guard var found = metadata?[pointer: pointer] else { return nil }
            // HAL's `_links.next` is an object: its `href` is the URL.
            if case .object(let link) = found, let href = link["href"] { found = href }
            switch found {
            case .null: return nil
            case .string(let text) where text.isEmpty: return nil
            case .string(let text):
                guard let url = URL(string: text, relativeTo: request.url)?.absoluteURL, url.scheme == "http" || url.scheme == "https"
                else { throw invalid("the next page's URL at \(pointer) is \(found.serialized()), not an http(s) URL") }
                return url
            default:
                throw invalid("the next page's URL at \(pointer) is \(found.serialized()), not a string")
            }
        case .cursor(let parameter, let cursor, let hasMore):
            if let hasMore, try flag(hasMore) == false { return nil }
            guard let found = value(cursor), !found.isNull else {
                if let hasMore, try flag(hasMore) == true {
                    throw invalid("\(hasMore) is true but there is no cursor at \(cursor.place)")
                }
                return nil
            }
            guard let text = Parameter.value(found).text, !text.isEmpty else { return nil }
            if case .array = found { throw invalid("the cursor at \(cursor.place) is an array") }
            if case .object = found { throw invalid("the cursor at \(cursor.place) is an object") }
            return try Self.setting(parameter, to: text, in: request.url)
        case .afterLastKey(let parameter, let hasMore):
            guard let more = try flag(hasMore) else {
                throw invalid("the page has no \(hasMore) saying whether the list goes on")
            }
            guard more else { return nil }
            guard let last = Self.lastKey(of: page, entity: entity)
            else { throw invalid("\(hasMore) is true on a page with no objects: there is no last key to send as ?\(parameter)=") }
            return try Self.setting(parameter, to: last.description, in: request.url)
        case .offset(let parameter, _, _, let total, let isLast):
            try readTotal(total)
            let count = page.keys.count
            if count == 0 { return nil }
            if let isLast, try flag(isLast) == true { return nil }
            let next = (currentNumber(parameter) ?? 0) + count
            if let total = progress.total, Int64(next) >= total.value { return nil }
            return try Self.setting(parameter, to: String(next), in: request.url)
        case .page(let parameter, let start, _, _, let total, let pageCount):
            try readTotal(total)
            if page.keys.isEmpty { return nil }
            let current = currentNumber(parameter) ?? start
            if let pageCount, let pages = try count(pageCount, "page count") {
                progress.pageCount = pages
                if Int64(current - start + 1) >= pages { return nil }
            }
            if let total = progress.total, Int64(progress.objectsRead) >= total.value { return nil }
            return try Self.setting(parameter, to: String(current + 1), in: request.url)
        }
    }

    /// The key of the last object of a page's collection, skipped (invalid) ones included:
    /// `page.keys` lists the stored objects' keys in order, then the skipped ones', whose place
    /// their pointers give (`/data/3`). A last object that was skipped without a key leaves the
    /// last stored one (the next page then starts one object early: read twice, lost never).
    static func lastKey(of page: StagedPage, entity: String?) -> AttributeValue? {
        let skipped = page.skipped.compactMap { object -> (index: Int, depth: Int, key: AttributeValue?)? in
            guard object.entity == entity, case .index(let index)? = object.pointer.components.last else { return nil }
            return (index, object.pointer.components.count, object.key)
        }
        let depth = skipped.map(\.depth).min()
        let topLevel = skipped.filter { $0.depth == depth }
        let skippedKeys = Set(topLevel.compactMap(\.key))
        let stored = page.keys.strings.map(AttributeValue.string).filter { !skippedKeys.contains($0) }
            + page.keys.integers.map(AttributeValue.integer).filter { !skippedKeys.contains($0) }
        if let last = topLevel.max(by: { $0.index < $1.index }), last.index == stored.count + topLevel.count - 1, let key = last.key {
            return key
        }
        return stored.last ?? topLevel.max(by: { $0.index < $1.index })?.key
    }

    /// The page after an unchanged (304) page: `.some(nil)` when it is the last, `nil` when the
    /// 304 cannot tell (recorded as a full last page, and no `Link` header now to say otherwise).
    ///
    /// Servers often send a 304 without the `Link` header (RFC 9110 does not require it). The
    /// page after it is then the one recorded when it last answered 200. A page recorded as the
    /// last one of several is still the last when it held fewer keys than the page before it:
    /// it was not full, so an object added after it would have changed it, and it did not
    /// change. A full last page (or a lone page sent with links, whose size nothing tells) can
    /// stay the same while the collection grows past it: that one the 304 cannot settle. Under
    /// the body's styles (a cursor, a next URL, offsets, page numbers) the page after an
    /// unchanged page is the one its body named when it last answered 200.
    ///
    /// - Parameters:
    ///   - keys: The keys recorded for the unchanged page.
    ///   - previousPageKeyCount: How many keys the page before it held in this traversal; `nil`
    ///     for the first page.
    func nextURL(afterUnchanged response: ClientResponse, request: ClientRequest, recorded: ClientCache.Entry,
                 keys: PrimaryKeys, previousPageKeyCount: Int?, rule: PaginationRule) -> URL?? {
        switch rule {
        case .linkHeader:
            // A 304 with links (rel="first", "last", "next") says where the collection goes on now.
            if !response.headers.values("Link").isEmpty { return .some(Self.nextLink(response.headers, relativeTo: request.url)) }
            if let next = recorded.next { return .some(URL(string: next)) }
            // A lone response is the whole collection: its 304 says it all.
            guard recorded.paged else { return .some(nil) }
            // The last page of several, shorter than the page before it: still the last.
            if let previous = previousPageKeyCount, keys.count < previous { return .some(nil) }
            return nil
        case .nextURL, .cursor, .afterLastKey, .offset, .page:
            return .some(recorded.next.flatMap { URL(string: $0) })
        }
    }

    /// The pages after the current one that a `Link` header tells: its `rel="next"`, and when it
    /// names `rel="last"` too and the two differ in one integer query parameter (`_page=2`,
    /// `_page=10`; `offset=300`, `offset=2700`), every page between them, stepping as the
    /// current page's URL steps to the next (from 1 for a page number the first URL leaves out,
    /// from 0 for an offset).
    ///
    /// ```swift
    /// // Link: <…/people?_page=2&_limit=300>; rel="next", <…/people?_page=10&_limit=300>; rel="last"
    /// ReplicaClient.upcomingLinkPages(next: next, current: current, headers: headers).count   // 9
    /// ```
    static func upcomingLinkPages(next: URL, current: URL, headers: HeaderFields) -> [URL] {
        guard let last = link("last", in: headers, relativeTo: current), last != next,
              let nextItems = URLComponents(url: next, resolvingAgainstBaseURL: true)?.queryItems,
              let lastItems = URLComponents(url: last, resolvingAgainstBaseURL: true)?.queryItems,
              nextItems.count == lastItems.count else { return [next] }
        let currentItems = URLComponents(url: current, resolvingAgainstBaseURL: true)?.queryItems ?? []
        var stepping: (name: String, from: Int, to: Int, step: Int)?
        for (mine, theirs) in zip(nextItems, lastItems) {
            guard mine.name == theirs.name else { return [next] }
            guard mine.value != theirs.value else { continue }
            guard stepping == nil, let from = mine.value.flatMap({ Int($0) }), let to = theirs.value.flatMap({ Int($0) }), to > from
            else { return [next] }
            let now = currentItems.last { $0.name == mine.name }?.value.flatMap { Int($0) } ?? (from == 2 ? 1 : 0)
            guard from > now else { return [next] }
            stepping = (mine.name, from, to, from - now)
        }
        guard let stepping else { return [next] }
        var pages = [next]
        var value = stepping.from + stepping.step
        while value <= stepping.to, pages.count < 10_000 {
            guard let url = try? setting(stepping.name, to: String(value), in: next) else { break }
            pages.append(url)
            value += stepping.step
        }
        return pages
    }

    /// The pages from `next` on that offsets or page numbers make known: with a total or a page
    /// count, each one to the end, counting `pageCount` objects a page (what the page before
    /// returned); otherwise only `next`.
    static func upcomingPages(next: URL, rule: PaginationRule, pageCount: Int, progress: PageProgress) -> [URL] {
        guard pageCount > 0 else { return [next] }
        func value(_ parameter: String) -> Int? {
            URLComponents(url: next, resolvingAgainstBaseURL: true)?.queryItems?.last { $0.name == parameter }?.value.flatMap { Int($0) }
        }
        var pages = [next]
        switch rule {
        case .offset(let parameter, _, _, _, _):
            guard let total = progress.total?.value, let first = value(parameter) else { return pages }
            var offset = first + pageCount
            while Int64(offset) < total, pages.count < 10_000 {
                guard let url = try? setting(parameter, to: String(offset), in: next) else { break }
                pages.append(url)
                offset += pageCount
            }
        case .page(let parameter, let start, _, _, _, _):
            guard let first = value(parameter) else { return pages }
            let lastNumber: Int
            if let count = progress.pageCount {
                lastNumber = start + Int(min(count, 10_000)) - 1
            } else if let total = progress.total?.value {
                lastNumber = start + Int(min((total + Int64(pageCount) - 1) / Int64(pageCount), 10_000)) - 1
            } else {
                return pages
            }
            var number = first + 1
            while number <= lastNumber {
                guard let url = try? setting(parameter, to: String(number), in: next) else { break }
                pages.append(url)
                number += 1
            }
        default:
            break
        }
        return pages
    }

    /// The `rel="next"` target of a `Link` header, resolved against `base`.
    static func nextLink(_ headers: HeaderFields, relativeTo base: URL) -> URL? {
        link("next", in: headers, relativeTo: base)
    }

    /// The target of a `Link` header's relation `relation` (`next`, `last`), resolved against `base`.
    static func link(_ relation: String, in headers: HeaderFields, relativeTo base: URL) -> URL? {
        for header in headers.values("Link") {
            for link in header.split(separator: ",") {
                let parts = link.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                guard let target = parts.first, target.hasPrefix("<"), target.hasSuffix(">") else { continue }
                let matches = parts.dropFirst().contains { part in
                    let lower = part.lowercased().replacingOccurrences(of: " ", with: "")
                    return lower == "rel=\"\(relation)\"" || lower == "rel=\(relation)"
                }
                if matches { return URL(string: String(target.dropFirst().dropLast()), relativeTo: base)?.absoluteURL }
            }
        }
        return nil
    }

    /// `url` with the query parameter `parameter` set to `value` (replacing any it had).
    static func setting(_ parameter: String, to value: String, in url: URL) throws -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            throw ClientError(.invalidRequest, "invalid URL \(url)")
        }
        // Encoded here, unreserved characters alone left as they are: a cursor's `+`, `/` or `=`
        // reaches the server as it was given (a bare `+` would read as a space).
        let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        guard let name = parameter.addingPercentEncoding(withAllowedCharacters: unreserved),
              let encoded = value.addingPercentEncoding(withAllowedCharacters: unreserved) else {
            throw ClientError(.invalidRequest, "cannot encode ?\(parameter)=\(value) in \(url)")
        }
        // In its place when the URL has it (so that the URL a server links to is the one asked for), else last.
        var items = components.percentEncodedQueryItems ?? []
        if let index = items.firstIndex(where: { $0.name.removingPercentEncoding == parameter }) {
            items[index] = URLQueryItem(name: name, value: encoded)
            items.removeAll { $0.name.removingPercentEncoding == parameter && $0.value != encoded }
        } else {
            items.append(URLQueryItem(name: name, value: encoded))
        }
        components.percentEncodedQueryItems = items
        guard let result = components.url else { throw ClientError(.invalidRequest, "invalid URL \(url)") }
        return result
    }
}
