import Foundation

extension ReplicaClient {
    func execute(_ prepared: Prepared, headers: HeaderFields, options: SyncOptions,
                 uploadProgress: (@Sendable (Int64, Int64?) -> Void)? = nil) async throws -> CallResult {
        let routeName = prepared.routeName
        let isGet = prepared.method == .get
        let cacheKey = try url(for: prepared.path, query: Parameter.flatten(prepared.remaining)).absoluteString
        var extraQuery: [(String, Parameter)] = []
        let since = configuration.sinceCursors[routeName]
        let cached = isGet ? try await cache.entry(for: cacheKey) : nil
        if let since, let cursor = cached?.cursor { extraQuery.append((since.parameter, .value(.string(cursor)))) }
        var request = try await request(for: prepared, headers: headers, extraQuery: extraQuery)
        request.uploadProgress = uploadProgress
        if isGet && configuration.conditionalRequests, let cached {
            if let etag = cached.etag, request.headers["If-None-Match"] == nil { request.headers["If-None-Match"] = etag }
            if let modified = cached.lastModified, request.headers["If-Modified-Since"] == nil {
                request.headers["If-Modified-Since"] = modified
            }
        }
        let response = try await send(request)
        if response.status == 304 {
            let empty = SyncResult(changes: ChangeSet(), skipped: [], ignoredKeyCount: 0, objectCount: 0, byteCount: 0,
                                   data: nil, route: prepared.entry.route, metadata: nil, seenKeys: PrimaryKeys(), scope: nil)
            return CallResult(status: 304, headers: response.headers, sync: empty, notModified: true, pages: 1, route: routeName)
        }

        if prepared.method == .delete {
            return try await deleted(prepared, response: response)
        }
        let paginated = isGet && prepared.entry.entity != nil && !prepared.entry.isSingleObject
        let rule = configuration.pagination[routeName]
        let follows = paginated && (rule != nil || Self.nextLink(response.headers, relativeTo: request.url) != nil)
        var pageOptions = options
        if follows {
            pageOptions.stalePolicy = .keep
            pageOptions.collectKeys = true
        }
        var result = try await syncBody(response, prepared: prepared, request: request, options: pageOptions)
        var pages = 1
        if follows {
            var seen = result.seenKeys
            var last = (response, request, result)
            while pages < configuration.maxPages,
                  let next = try nextRequest(after: last.0, request: last.1, result: last.2, page: pages + 1, rule: rule,
                                             prepared: prepared) {
                let pageResponse = try await send(next)
                guard pageResponse.status != 304 else { break }
                let pageResult = try await syncBody(pageResponse, prepared: prepared, request: next, options: pageOptions)
                pages += 1
                seen.formUnion(pageResult.seenKeys)
                result.changes = Self.merge(result.changes, pageResult.changes)
                result.objectCount += pageResult.objectCount
                result.byteCount += pageResult.byteCount
                result.skipped += pageResult.skipped
                result.ignoredKeyCount += pageResult.ignoredKeyCount
                if case .page = rule, pageResult.seenKeys.isEmpty { break }
                last = (pageResponse, next, pageResult)
            }
            if (options.stalePolicy ?? prepared.entry.route.stalePolicy) == .delete, let entity = prepared.entry.entity {
                let deleted = try await engine.deleteStale(entity.name, scope: result.scope, keeping: seen)
                result.changes = Self.merge(result.changes, deleted)
            }
        }
        if isGet {
            let etag = response.headers["ETag"]
            let modified = response.headers["Last-Modified"]
            var cursor: String?
            if let since {
                switch since.source {
                case .header(let name): cursor = response.headers[name]
                case .metadata(let pointer): cursor = result.metadata?[pointer: pointer].flatMap { Parameter.value($0).text }
                }
            }
            let remember = configuration.conditionalRequests
            let newCursor = cursor
            if (remember && (etag != nil || modified != nil)) || newCursor != nil {
                try await cache.update(cacheKey) { entry in
                    if remember {
                        entry.etag = etag
                        entry.lastModified = modified
                    }
                    if let newCursor { entry.cursor = newCursor }
                }
            }
        }
        return CallResult(status: response.status, headers: response.headers, sync: result, notModified: false,
                          pages: pages, route: routeName)
    }

    /// After a successful DELETE of one object, deletes its row locally (the body, if any, is ignored:
    /// syncing it would bring the deleted object back).
    func deleted(_ prepared: Prepared, response: ClientResponse) async throws -> CallResult {
        _ = try? await response.body.collect(upTo: 1 << 20)
        var changes = ChangeSet()
        let routePath = prepared.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? prepared.path
        if prepared.entry.isSingleObject, let entity = prepared.entry.entity,
           let resolution = try? engine.routes.resolve(prepared.syncMethod, routePath),
           let key = resolution.scope.value(of: entity.primaryKey) {
            changes = try await engine.delete(entity.name, key: key)
        }
        let result = SyncResult(changes: changes, skipped: [], ignoredKeyCount: 0, objectCount: 0, byteCount: 0, data: nil,
                                route: prepared.entry.route, metadata: nil, seenKeys: PrimaryKeys(), scope: nil)
        return CallResult(status: response.status, headers: response.headers, sync: result, notModified: false, pages: 1,
                          route: prepared.routeName)
    }

    /// Syncs one response body through the prepared route.
    func syncBody(_ response: ClientResponse, prepared: Prepared, request: ClientRequest, options: SyncOptions) async throws -> SyncResult {
        let what = "\(request.method) \(request.url.absoluteString)"
        let empty = SyncResult(changes: ChangeSet(), skipped: [], ignoredKeyCount: 0, objectCount: 0, byteCount: 0,
                               data: nil, route: prepared.entry.route, metadata: nil, seenKeys: PrimaryKeys(), scope: nil)
        if response.status == 204 { return empty }
        let routePath = prepared.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? prepared.path
        do {
            return try await engine.sync(prepared.syncMethod, routePath, chunks: response.body, options: options)
        } catch let error as SyncError where error.code == .malformedJSON {
            // An empty body fails to parse at byte 0: say so plainly; DELETE needs no body.
            guard let parse = error.underlying as? JSONParseError, parse.code == .unexpectedEnd, parse.byteOffset == 0 else {
                throw error
            }
            if prepared.method == .delete { return empty }
            throw ClientError(.emptyBody, "HTTP \(response.status) with an empty body; route \(prepared.routeName) needs one",
                              status: response.status, headers: response.headers, request: what)
        }
    }

    func nextRequest(after response: ClientResponse, request: ClientRequest, result: SyncResult, page: Int,
                     rule: PaginationRule?, prepared: Prepared) throws -> ClientRequest? {
        var next = request
        next.headers["If-None-Match"] = nil
        next.headers["If-Modified-Since"] = nil
        switch rule {
        case nil, .linkHeader?:
            guard let url = Self.nextLink(response.headers, relativeTo: request.url) else { return nil }
            next.url = url
        case .page(let parameter, let start)?:
            next.url = try Self.setting(parameter, to: String(start + page - 1), in: request.url)
        case .cursor(let parameter, let pointer)?:
            guard let cursor = result.metadata?[pointer: pointer], !cursor.isNull,
                  let text = Parameter.value(cursor).text, !text.isEmpty else { return nil }
            next.url = try Self.setting(parameter, to: text, in: request.url)
        }
        return next
    }

    /// The `rel="next"` target of a `Link` header, resolved against `base`.
    static func nextLink(_ headers: HeaderFields, relativeTo base: URL) -> URL? {
        for header in headers.values("Link") {
            for link in header.split(separator: ",") {
                let parts = link.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                guard let target = parts.first, target.hasPrefix("<"), target.hasSuffix(">") else { continue }
                let isNext = parts.dropFirst().contains { part in
                    let lower = part.lowercased().replacingOccurrences(of: " ", with: "")
                    return lower == "rel=\"next\"" || lower == "rel=next"
                }
                if isNext { return URL(string: String(target.dropFirst().dropLast()), relativeTo: base)?.absoluteURL }
            }
        }
        return nil
    }

    static func setting(_ parameter: String, to value: String, in url: URL) throws -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            throw ClientError(.invalidRequest, "invalid URL \(url)")
        }
        var items = (components.queryItems ?? []).filter { $0.name != parameter }
        items.append(URLQueryItem(name: parameter, value: value))
        components.queryItems = items
        guard let result = components.url else { throw ClientError(.invalidRequest, "invalid URL \(url)") }
        return result
    }

    /// The changes of two transactions as one (later sequence number).
    static func merge(_ a: ChangeSet, _ b: ChangeSet) -> ChangeSet {
        var result = ChangeSet(sequence: max(a.sequence, b.sequence), entities: a.entities)
        for (name, changes) in b.entities {
            var merged = result.entities[name] ?? EntityChanges()
            merged.inserted.formUnion(changes.inserted)
            merged.updated.formUnion(changes.updated)
            merged.deleted.formUnion(changes.deleted)
            merged.inserted.normalize(excluding: changes.deleted)
            merged.updated.normalize(excluding: merged.inserted)
            merged.isUnknown = merged.isUnknown || changes.isUnknown
            result.entities[name] = merged
        }
        return result
    }
}
