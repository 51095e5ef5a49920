import Foundation
import ReplicaCore

extension ReplicaClient {
    /// Runs one call as one sync session: every page of a collection is staged, then all of
    /// them commit together with their validators, or nothing does.
    ///
    /// Each page URL has its own validators. A page answering 304 vouches for the keys it held
    /// when it last answered 200, and the traversal goes on to the next page its 304 links to
    /// (or its record names; a recorded last page stays the last when it was shorter than the
    /// page before it, and a full one whose 304 cannot tell is asked again without validators,
    /// see ``nextURL(afterUnchanged:request:recorded:keys:previousPageKeyCount:rule:)``).
    /// The call is "not modified" only when every page was and the
    /// traversal ended where it did before. Stale rows are deleted only after a complete
    /// traversal (the last page reached, every page answered) of a full (not incremental) sync.
    ///
    /// With a `capture`, each page's body is also copied as it streams by (for a delegate that
    /// hears the JSON of every call). `telemetry` spans each page and the commit, and counts pages
    /// (``ReplicaClient/execute(_:headers:options:uploadProgress:capture:)`` runs it under the call's span).
    func executeSession(_ prepared: Prepared, headers: HeaderFields, options: SyncOptions,
                        uploadProgress: (@Sendable (Int64, Int64?) -> Void)?, capture: BodyCapture?,
                        telemetry: CallTelemetry) async throws -> CallResult {
        guard prepared.method == .get, let incremental = prepared.entry.route.incremental else {
            return try await traverse(prepared, headers: headers, options: options, uploadProgress: uploadProgress,
                                      capture: capture, telemetry: telemetry, since: nil)
        }
        let firstKey = try url(for: prepared.path, query: Parameter.flatten(prepared.remaining)).absoluteString
        let entry = try await store.backend.clientCacheEntry(for: firstKey)
        guard let cursor = entry?.cursor else {
            return try await traverse(prepared, headers: headers, options: options, capture: capture, telemetry: telemetry,
                                      since: Since(incremental: incremental, cursor: nil))
        }
        do {
            return try await traverse(prepared, headers: headers, options: options, capture: capture, telemetry: telemetry,
                                      since: Since(incremental: incremental, cursor: cursor))
        } catch let error as ClientError where error.status.map(incremental.expiredStatuses.contains) == true {
            // The server no longer knows the cursor: sync in full (stale rows go as the route says).
            var result = try await traverse(prepared, headers: headers, options: options, capture: capture, telemetry: telemetry,
                                            since: Since(incremental: incremental, cursor: nil, resync: true))
            result.mode = .resync
            return result
        }
    }

    /// A route's incremental declaration and the cursor a call sends (`nil`: a full sync that records one).
    struct Since {
        var incremental: IncrementalSync
        var cursor: String?
        /// A full sync after an expired cursor: it sends no validators, so that its pages answer
        /// with a fresh cursor rather than 304.
        var resync = false
    }

    /// One traversal of a call's pages into one session (see ``executeSession(_:headers:options:uploadProgress:capture:telemetry:)``).
    /// With a cursor, every page is an incremental answer: its objects are upserted, its
    /// tombstones deleted, no validators are sent or kept, and the cursor the answer gives
    /// (the last page's) replaces the recorded one. Without one, a route that syncs
    /// incrementally records the cursor its first page gives.
    func traverse(_ prepared: Prepared, headers: HeaderFields, options: SyncOptions,
                  uploadProgress: (@Sendable (Int64, Int64?) -> Void)? = nil, capture: BodyCapture? = nil,
                  telemetry: CallTelemetry, since: Since?) async throws -> CallResult {
        let routeName = prepared.routeName
        let isGet = prepared.method == .get
        let firstKey = try url(for: prepared.path, query: Parameter.flatten(prepared.remaining)).absoluteString
        let firstEntry = isGet ? try await store.backend.clientCacheEntry(for: firstKey) : nil
        var extraQuery: [(String, Parameter)] = []
        let delta = since?.cursor != nil
        if let since, let cursor = since.cursor { extraQuery.append((since.incremental.parameter, .value(.string(cursor)))) }
        let isCollection = isGet && prepared.entry.entity != nil && !prepared.entry.isSingleObject
        let (rule, declaredRule) = paginationRule(for: prepared)
        if isCollection { extraQuery += Self.firstPageQuery(for: rule, given: prepared.remaining) }
        var request = try await request(for: prepared, headers: headers, extraQuery: extraQuery)
        request.uploadProgress = uploadProgress
        if prepared.method == .delete {
            let page = telemetry.page(1, request: request)
            defer { page.end() }
            return try await deleted(prepared, response: try await page.exchange { try await send(request) })
        }
        let routePath = prepared.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? prepared.path
        let session = try deltaSession(prepared, path: routePath, options: options, items: delta ? since?.incremental.items : nil)
        defer { session.discard() }
        // The cursor the next sync sends: a full sync's first one (changes made during its
        // traversal come again), an incremental answer's last one.
        var nextCursor: String?

        var records: [ClientCache.Record] = []
        // Each page's record key and its number: a link or cursor that leads back names both pages.
        var visited: [String: Int] = [firstKey: 1]
        var key = firstKey
        var entry = firstEntry
        var current = request
        var first: ClientResponse?
        var pages = 0
        var unchanged = 0
        var complete = false
        var revalidate = true
        // How many keys the page before this one held (its own, or those recorded for its 304).
        var previousPageKeyCount: Int?
        // A 304 page whose next page is no longer the recorded one: the collection grew or shrank.
        var reshaped = false
        // The keys unchanged pages held: what a call whose every page answered 304 lists.
        var vouched = PrimaryKeys()
        // Validators are sent for a page with a recorded copy, unless the call syncs incrementally or anew.
        let sendsValidators = isGet && !delta && since?.resync != true && configuration.conditionalRequests
        // What the pages held, and the last page's sign that the collection goes on past what was read.
        var progress = PageProgress(rule: rule)
        var unfollowed: MorePagesSignal?
        // Pages requested before the traversal reaches them, in order: the next one while this one is
        // parsed and written, and where the pages to come are known already (a page count, a total,
        // a `Link` rel="last"), more of them, up to `concurrentPages` ahead. They commit
        // in order all the same; one the traversal does not reach is cancelled.
        var ahead: [PrefetchedPage] = []
        defer { for page in ahead { page.discard() } }
        // The pages last known to come, in order (offsets or page numbers up to a total): when one of
        // them arrives, the one after those in flight is asked for before it is parsed.
        var planned: [URL] = []
        /// Asks for `upcoming` (the pages after the current one, in order) ahead, keeping those asked already.
        func schedule(_ upcoming: [URL]) {
            planned = upcoming
            let limit = configuration.prefetchPages ? max(0, min(configuration.concurrentPages, configuration.maxPages - pages)) : 0
            var index = 0
            for url in upcoming.prefix(limit) {
                let upcomingKey = cacheKey(for: url, dropping: since?.incremental.parameter)
                guard current.mayFollow(to: url), visited[upcomingKey] == nil else { break }
                if index < ahead.count {
                    if ahead[index].key == upcomingKey {
                        index += 1
                        continue
                    }
                    for page in ahead[index...] { page.discard() }
                    ahead.removeSubrange(index...)
                }
                var upcomingRequest = request.moved(to: url)
                upcomingRequest.headers["If-None-Match"] = nil
                upcomingRequest.headers["If-Modified-Since"] = nil
                ahead.append(prefetch(upcomingRequest, key: upcomingKey, sendsValidators: sendsValidators, isCollection: isCollection,
                                      telemetry: telemetry.page(pages + 1 + index, request: upcomingRequest)))
                index += 1
            }
        }
        while true {
            let ready: PrefetchedPage? = ahead.first?.key == key ? ahead.removeFirst() : nil
            if revalidate && sendsValidators && ready == nil {
                Self.addValidators(of: entry, to: &current, isCollection: isCollection)
            }
            let traced = ready?.traced ?? telemetry.page(pages + 1, request: current)
            defer { traced.end() }
            let response: ClientResponse
            if let ready {
                let answered = try await withTaskCancellationHandler {
                    try await ready.task.value
                } onCancel: {
                    ready.task.cancel()
                }
                (entry, current, response) = (answered.entry, answered.request, answered.response)
            } else {
                response = try await traced.exchange { try await send(current) }
            }
            var next: URL?
            if response.status == 304 {
                guard let entry, !isCollection || entry.hasKeys else {
                    throw ClientError(.invalidResponse, "HTTP 304 Not Modified for a page with no recorded copy",
                                      status: 304, headers: response.headers,
                                      request: "\(current.method) \(current.url.absoluteString)")
                }
                if isCollection {
                    let recordedKeys = entry.keys ?? PrimaryKeys()
                    let known = nextURL(afterUnchanged: response, request: current, recorded: entry, keys: recordedKeys,
                                        previousPageKeyCount: previousPageKeyCount, rule: rule)
                    // A 304 even without validators: the server vouches for it as it stands.
                    guard let found = known ?? (revalidate ? nil : .some(nil)) else {
                        // Recorded as a full last page, and the 304 does not say whether it still is (the
                        // collection may have grown past it): ask again without validators.
                        current.headers["If-None-Match"] = nil
                        current.headers["If-Modified-Since"] = nil
                        revalidate = false
                        continue
                    }
                    next = found
                    if found?.absoluteString != entry.next {
                        reshaped = true
                        var updated = entry
                        updated.next = found?.absoluteString
                        records.append((key, updated))
                    }
                    session.vouch(for: recordedKeys)
                    vouched.formUnion(recordedKeys)
                    previousPageKeyCount = recordedKeys.count
                    progress.read(recordedKeys)
                    unfollowed = nil
                }
                pages += 1
                unchanged += 1
                if first == nil { first = response }
            } else {
                pages += 1
                if first == nil || first?.status == 304 { first = response }
                capture?.beginPage()
                // A next page the headers name already (and those after it that `rel="last"` tells): ask
                // for them now, so that they arrive while this one is written.
                if isCollection, rule == .linkHeader, let nextURL = Self.nextLink(response.headers, relativeTo: current.url) {
                    schedule(Self.upcomingLinkPages(next: nextURL, current: current.url, headers: response.headers))
                } else if isCollection, rule != .linkHeader,
                          let position = planned.firstIndex(where: { cacheKey(for: $0, dropping: since?.incremental.parameter) == key }) {
                    // A page known to come arrived: keep as many in flight while it is parsed.
                    schedule(Array(planned[(position + 1)...]))
                }
                let page = try await traced.parse {
                    try await stage(response, into: session, prepared: prepared, request: current, capture: capture)
                }
                if isCollection {
                    next = try nextURL(after: response, request: current, page: page, number: pages, rule: rule,
                                       entity: prepared.entry.entity?.name, progress: &progress)
                    previousPageKeyCount = page.keys.count
                    // The traversal ends here: unless the page itself says it goes on (a full sync's last page;
                    // an incremental answer is not the collection).
                    unfollowed = next == nil && !delta && rule == .linkHeader
                        ? MorePagesSignal.find(metadata: page.metadata, objectsRead: progress.objectsRead) : nil
                    // Offsets or page numbers whose end the page told: the pages after the next one are known too.
                    if let next, rule != .linkHeader {
                        schedule(Self.upcomingPages(next: next, rule: rule, pageCount: page.keys.count, progress: progress))
                    }
                }
                if let since {
                    try session.delete(try tombstones(in: page, declared: since.incremental, prepared: prepared,
                                                      request: current))
                    if let cursor = Self.cursor(in: response, page: page, declared: since.incremental), delta || nextCursor == nil {
                        nextCursor = cursor
                    }
                }
                // An incremental answer is not the collection: its pages keep no validators or keys.
                if isGet && !delta {
                    var record = ClientCache.Entry(cursor: nil, next: next?.absoluteString, keys: isCollection ? page.keys : nil)
                    record.paged = isCollection && (rule != .linkHeader || pages > 1 || !response.headers.values("Link").isEmpty)
                    if configuration.conditionalRequests {
                        record.etag = response.headers["ETag"]
                        record.lastModified = response.headers["Last-Modified"]
                    }
                    if record.hasValidators || entry != nil || since != nil { records.append((key, record)) }
                }
            }
            guard let nextURL = next else {
                complete = true
                break
            }
            if pages >= configuration.maxPages { break }
            key = cacheKey(for: nextURL, dropping: since?.incremental.parameter)
            if let earlier = visited[key] {
                throw ClientError(.invalidResponse, "page \(pages) leads back to page \(earlier), \(nextURL.absoluteString), "
                                  + "fetched already (pagination: \(rule.summary))",
                                  request: "\(current.method) \(current.url.absoluteString)")
            }
            visited[key] = pages + 1
            // Another origin only when allowed, and then without the headers configured for this one.
            guard current.mayFollow(to: nextURL) else { throw current.crossOriginError(to: nextURL, what: "the next page link") }
            revalidate = true
            current = request.moved(to: nextURL)
            current.headers["If-None-Match"] = nil
            current.headers["If-Modified-Since"] = nil
            if ahead.first?.key != key {
                // Not the page asked for ahead (or none was): ask for this one, and none of the others.
                for page in ahead { page.discard() }
                ahead = []
                entry = try await store.backend.clientCacheEntry(for: key)
            }
        }
        // A declared total above the distinct objects read: the collection shifted under its pages.
        if complete, !delta, unfollowed == nil { unfollowed = progress.shortfall }
        if complete, let unfollowed {
            let message = "the last page read says the collection goes on (\(unfollowed)), but the route's pagination ("
                + rule.summary + (declaredRule ? "" : ", the default") + ") found no page after it"
            switch configuration.unfollowedPages {
            case .fail:
                throw ClientError(.unfollowedPages, message + "; nothing was written: declare the route's pagination, or "
                                  + "write the pages without deleting (unfollowedPages = .warn, --unfollowed-pages warn)",
                                  request: "\(current.method) \(current.url.absoluteString)")
            case .warn:
                complete = false
            }
        }
        let firstResponse = first ?? ClientResponse(status: 304)
        let mode: SyncMode = delta ? .incremental : .full
        if unchanged == pages && !reshaped {
            let empty = SyncResult(changes: ChangeSet(), skipped: [], ignoredKeyCount: 0, objectCount: 0, byteCount: 0,
                                   data: nil, route: prepared.entry.route, metadata: nil, seenKeys: vouched, scope: nil)
            return CallResult(status: 304, headers: firstResponse.headers, sync: empty, notModified: true, pages: pages,
                              unchangedPages: unchanged, isTruncated: !complete, route: routeName, mode: mode)
        }
        if since != nil {
            // The first page's record carries the cursor: an answer without one keeps the one sent.
            let cursor = nextCursor ?? since?.cursor
            if let index = records.firstIndex(where: { $0.key == firstKey }) {
                records[index].entry.cursor = cursor
            } else {
                // An incremental answer (no page record of its own): only the stored record's cursor changes.
                var record = firstEntry ?? ClientCache.Entry(cursor: nil, next: nil, keys: nil)
                record.cursor = cursor
                record.onlyCursor = true
                records.append((firstKey, record))
            }
        }
        let result = try await telemetry.merge { try await session.commit(complete: complete && !delta, records: records) }
        var called = CallResult(status: firstResponse.status, headers: firstResponse.headers, sync: result, notModified: false,
                                pages: pages, unchangedPages: unchanged, isTruncated: !complete, route: routeName, mode: mode)
        called.unfollowedPages = complete ? nil : unfollowed
        return called
    }

    /// A page requested before the traversal reached it: its request (with its validators), the
    /// record they came from, and the exchange under way.
    struct PrefetchedPage {
        var key: String
        /// The page's span, under which its request went.
        var traced: PageTelemetry
        var task: Task<(entry: ClientCache.Entry?, request: ClientRequest, response: ClientResponse), any Error>

        /// Cancels the exchange and ends the page's span: the traversal did not reach the page.
        func discard() {
            task.cancel()
            traced.end()
        }
    }

    /// Starts the exchange of `request`, the page recorded under `key`, under the page's span
    /// `telemetry`: its record is read, its validators added, and the request sent.
    func prefetch(_ request: ClientRequest, key: String, sendsValidators: Bool, isCollection: Bool,
                  telemetry: PageTelemetry) -> PrefetchedPage {
        PrefetchedPage(key: key, traced: telemetry, task: Task {
            let entry = try await store.backend.clientCacheEntry(for: key)
            var request = request
            if sendsValidators { Self.addValidators(of: entry, to: &request, isCollection: isCollection) }
            let sent = request
            return (entry, request, try await telemetry.exchange { try await send(sent) })
        })
    }

    /// Adds the validators of a page's record (when it has them, and for a collection page, the
    /// keys its 304 would vouch for) to `request`, unless the call set its own.
    static func addValidators(of entry: ClientCache.Entry?, to request: inout ClientRequest, isCollection: Bool) {
        guard let entry, entry.hasValidators, !isCollection || entry.hasKeys else { return }
        if let etag = entry.etag, request.headers["If-None-Match"] == nil { request.headers["If-None-Match"] = etag }
        if let modified = entry.lastModified, request.headers["If-Modified-Since"] == nil {
            request.headers["If-Modified-Since"] = modified
        }
    }

    /// The session of one traversal; an incremental answer's objects are read at `items` when
    /// the route declares where.
    func deltaSession(_ prepared: Prepared, path: String, options: SyncOptions, items: JSONPointer?) throws -> SyncSession {
        guard let items else { return try store.session(prepared.syncMethod, path, options: options) }
        var plan = try store.backend.frontEnd.resolve(.route(prepared.syncMethod, path), options: options)
        let itemsPattern = JSONPathPattern(items.components.map { component in
            switch component {
            case .key(let key): return .key(key)
            case .index(let index): return .key(String(index))
            }
        })
        switch plan.shape {
        case .entity(let index, _):
            plan.shape = .entity(index, patterns: [itemsPattern])
        case .typed(var typed):
            typed.collection = itemsPattern
            plan.shape = .typed(typed)
        case .many, .data:
            break
        }
        return SyncSession(store: store, plan: plan, options: options, source: "\(prepared.syncMethod) \(path)")
    }

    /// The cursor a response carries where the route says, as text.
    static func cursor(in response: ClientResponse, page: StagedPage, declared: IncrementalSync) -> String? {
        switch declared.cursor {
        case .header(let name):
            return response.headers[name].flatMap { $0.isEmpty ? nil : $0 }
        case .pointer(let pointer):
            guard let value = page.metadata?[pointer: pointer], !value.isNull else { return nil }
            return Parameter.value(value).text
        }
    }

    /// The keys an answer lists as deleted at the route's `deleted` pointer: bare keys, or
    /// objects holding a key (a composite key's parts, filled from the route's scope).
    ///
    /// - Throws: ``ClientError`` `.invalidResponse` naming the pointer when the list is not an
    ///   array, or an item is no key of the route's entity.
    func tombstones(in page: StagedPage, declared: IncrementalSync, prepared: Prepared, request: ClientRequest) throws -> PrimaryKeys {
        guard let pointer = declared.deleted, let entity = prepared.entry.entity,
              let list = page.metadata?[pointer: pointer], !list.isNull else { return PrimaryKeys() }
        let what = "\(request.method) \(request.url.absoluteString)"
        guard case .array(let items) = list else {
            throw ClientError(.invalidResponse, "the deleted keys at \(pointer) are \(list.typeName), not an array", request: what)
        }
        let map = try store.mapping.requireMap(entity.name)
        let scope = try? store.routes.resolve(prepared.syncMethod,
                                              prepared.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? prepared.path).scope
        var keys = PrimaryKeys()
        for (offset, item) in items.enumerated() {
            let at = pointer / offset
            if case .object = item {
                guard let key = map.primaryKey(ofInvalid: item, scope: scope) else {
                    throw ClientError(.invalidResponse, "the deleted object at \(at) holds no \(entity.name) key "
                                      + "(\(entity.primaryKeyNames.joined(separator: ", ")))", request: what)
                }
                keys.append(key)
            } else if !entity.hasCompositeKey {
                do {
                    keys.append(try map.convertKey(item, at: at))
                } catch let error as MappingError {
                    throw ClientError(.invalidResponse, "the deleted key at \(at): \(error.message)", request: what)
                }
            } else {
                throw ClientError(.invalidResponse, "the deleted key at \(at) is \(item.typeName); \(entity.name) has a composite key "
                                  + "(\(entity.primaryKeyNames.joined(separator: ", "))): list objects holding its parts", request: what)
            }
        }
        return keys
    }

    /// The key a page's record is stored under: its URL without the since-cursor parameter,
    /// so that incremental syncs find the same records.
    func cacheKey(for url: URL, dropping parameter: String?) -> String {
        guard let parameter, var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
              let items = components.queryItems, items.contains(where: { $0.name == parameter }) else { return url.absoluteString }
        let kept = items.filter { $0.name != parameter }
        components.queryItems = kept.isEmpty ? nil : kept
        return components.url?.absoluteString ?? url.absoluteString
    }

    /// After a successful DELETE of one object, deletes its row locally (the body, if any, is ignored:
    /// syncing it would bring the deleted object back).
    func deleted(_ prepared: Prepared, response: ClientResponse) async throws -> CallResult {
        _ = try? await response.body.collect(upTo: 1 << 20)
        var changes = ChangeSet()
        let routePath = prepared.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? prepared.path
        if prepared.entry.isSingleObject, let entity = prepared.entry.entity,
           let resolution = try? store.routes.resolve(prepared.syncMethod, routePath),
           let key = resolution.scope.primaryKey(of: entity) {
            changes = try await store.delete(entity.name, key: key)
        }
        let result = SyncResult(changes: changes, skipped: [], ignoredKeyCount: 0, objectCount: 0, byteCount: 0, data: nil,
                                route: prepared.entry.route, metadata: nil, seenKeys: PrimaryKeys(), scope: nil)
        return CallResult(status: response.status, headers: response.headers, sync: result, notModified: false, pages: 1,
                          unchangedPages: 0, isTruncated: false, route: prepared.routeName)
    }

    /// Parses and stages one response body of the session.
    func stage(_ response: ClientResponse, into session: SyncSession, prepared: Prepared,
               request: ClientRequest, capture: BodyCapture? = nil) async throws -> StagedPage {
        let what = "\(request.method) \(request.url.absoluteString)"
        if response.status == 204 {
            return StagedPage(keys: PrimaryKeys(), metadata: nil, data: nil, objectCount: 0, skipped: [],
                              ignoredKeyCount: 0, byteCount: 0)
        }
        let body = capture.map { ResponseBody(CapturedBody(body: response.body, capture: $0)) } ?? response.body
        let checked = JSONCheckedBody(body: body, status: response.status, headers: response.headers, request: what)
        do {
            return try await session.stage(chunks: checked, source: what)
        } catch let error as SyncError where error.code == .malformedJSON {
            // An empty body fails to parse at byte 0: say so plainly.
            guard let parse = error.underlying as? JSONParseError, parse.code == .unexpectedEnd, parse.byteOffset == 0 else {
                throw error
            }
            throw ClientError(.emptyBody, "HTTP \(response.status) with an empty body; route \(prepared.routeName) needs one",
                              status: response.status, headers: response.headers, request: what)
        }
    }
}
