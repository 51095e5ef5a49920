extension MockCRUD {
    /// One page of a collection in a style other than ``MockPagination/link``, and where it sits.
    private struct StylePage {
        /// The page's objects as the store holds them.
        var objects: [JSONObject]
        /// How many objects match the filters.
        var total: Int
        /// How many objects of the collection come before the page.
        var offset: Int

        var hasMore: Bool { offset + objects.count < total }
    }

    /// The index answered in the request's paging style (``MockPagination``; not ``MockPagination/link``,
    /// which ``index(_:)`` answers itself), with `X-Total-Count` (but for ``MockPagination/gitlab``) and the
    /// change feed's `X-Cursor`.
    ///
    /// - Parameters:
    ///   - request: the routed index request.
    ///   - collection: its filters, sort and reserved parameters, the path's filters added.
    ///   - feedCursor: the change feed's cursor, taken before the store was read.
    /// - Returns: 200 with the page; for ``MockPagination/stripe``, 400 with Stripe's error for a
    ///   `starting_after` that names no object of the collection.
    /// - Throws: `MockHTTPError` 400 `invalidPage` naming a bad paging parameter.
    static func styledIndex(_ request: MockRequest, collection: MockCollectionQuery, feedCursor: String?) async throws -> MockResponse {
        var query = collection.query
        let paging = try MockStylePaging(request, query: &query)
        let page: StylePage
        do {
            page = try await read(request, query: query, paging: paging)
        } catch let missing as MissingKey where paging.style == .stripe {
            return MockResponse(status: 400, body: .object(["error": .object([
                "type": "invalid_request_error",
                "message": .string("No such object: '\(missing.text)'"),
                "param": .string(missing.parameter),
            ])]))
        } catch let missing as MissingKey {
            throw MockHTTPError.badRequest("\(missing.parameter): no \(request.resource.name) '\(missing.text)' in this collection",
                                           code: "invalidPage")
        }
        let resource = request.resource
        let items = serializedItems(page.objects, request)
        let lastKey = page.objects.last.flatMap(resource.primaryKey.key(of:))
        // Page counts: 0 for an empty collection.
        let totalPages = (page.total + paging.size - 1) / paging.size
        var headers: [(name: String, value: String)] = []
        if paging.style != .gitlab { headers.append((name: "X-Total-Count", value: String(page.total))) }
        if let feedCursor { headers.append((name: "X-Cursor", value: feedCursor)) }
        let body: JSONValue
        switch paging.style {
        case .link:
            body = items
        case .cursor:
            let next = page.hasMore ? lastKey.map(MockStylePaging.cursor(after:)) ?? "" : ""
            body = .object(["ok": true, "items": items, "response_metadata": .object(["next_cursor": .string(next)])])
        case .stripe:
            body = .object(["object": "list", "url": .string(request.path), "has_more": .bool(page.hasMore), "data": items])
        case .offset:
            body = .object(["items": items, "total": .int(Int64(page.total)), "offset": .int(Int64(page.offset)),
                            "limit": .int(Int64(paging.size))])
        case .jira:
            body = .object(["startAt": .int(Int64(page.offset)), "maxResults": .int(Int64(paging.size)),
                            "total": .int(Int64(page.total)), "isLast": .bool(!page.hasMore), "values": items])
        case .page:
            body = .object(["items": items, "page": .int(Int64(paging.number)), "per_page": .int(Int64(paging.size)),
                            "total": .int(Int64(page.total)), "total_pages": .int(Int64(totalPages))])
        case .jsonapi:
            func link(_ number: Int) -> JSONValue {
                .string(collection.url(request, [("page[number]", String(number)), ("page[size]", String(paging.size))]))
            }
            let data = page.objects.map { object -> JSONValue in
                // A resource a JSON:API serializer answers: its types and relationships.
                if let jsonAPI = request.serializer as? JSONAPISerializer { return jsonAPI.resource(resource.wire(object)) }
                var attributes = resource.wire(object)
                for part in resource.primaryKey.parts { attributes[part.name] = nil }
                let id = resource.primaryKey.key(of: object).map { MockStylePaging.text(of: $0, in: resource) } ?? ""
                return .object(["type": .string(resource.name.lowercased()), "id": .string(id), "attributes": .object(attributes)])
            }
            body = .object([
                "data": .array(data),
                "links": .object(["self": link(paging.number), "first": link(1), "last": link(max(1, totalPages)),
                                  "next": page.hasMore ? link(paging.number + 1) : .null]),
                "meta": .object(["total": .int(Int64(page.total))]),
            ])
        case .hal:
            func link(_ number: Int) -> JSONValue {
                .object(["href": .string(collection.url(request, [("page", String(number)), ("size", String(paging.size))]))])
            }
            var links: JSONObject = ["self": link(paging.number)]
            if page.hasMore { links["next"] = link(paging.number + 1) }
            links["last"] = link(max(0, totalPages - 1))
            body = .object([
                "_embedded": .object([resource.name: items]),
                "_links": .object(links),
                "page": .object(["size": .int(Int64(paging.size)), "totalElements": .int(Int64(page.total)),
                                 "totalPages": .int(Int64(totalPages)), "number": .int(Int64(paging.number))]),
            ])
        case .gitlab:
            body = items
            if page.hasMore, let lastKey {
                let next = collection.url(request, [
                    ("pagination", "keyset"), ("per_page", String(paging.size)), ("order_by", paging.orderBy),
                    ("sort", paging.sortOrder), ("id_after", MockStylePaging.text(of: lastKey, in: resource)),
                ])
                headers.append((name: "Link", value: "<\(next)>; rel=\"next\""))
            }
        }
        return MockResponse(status: 200, headers: headers, body: body)
    }

    /// A keyset start naming no object of the collection.
    private struct MissingKey: Error {
        var parameter: String
        var text: String
    }

    /// The page `paging` asks for. A keyset page (after a key) reads the whole ordered collection to find
    /// the key's place: a mock server's collections are small enough, and every store answers alike.
    private static func read(_ request: MockRequest, query: MockQuery, paging: MockStylePaging) async throws -> StylePage {
        func objects(_ query: MockQuery) async throws -> MockPage {
            if let parent = request.parent {
                return try await request.store.children(request.resource, of: parent.parent, id: parent.id, query: query)
            }
            return try await request.store.objects(request.resource, query: query)
        }
        var query = query
        switch paging.start {
        case .offset(let offset):
            query.limit = paging.size
            query.offset = offset
            let page = try await objects(query)
            return StylePage(objects: page.objects, total: page.total, offset: offset)
        case .unknown(let parameter, let text):
            throw MissingKey(parameter: parameter, text: text)
        case .after(let key, let parameter, let text):
            query.limit = nil
            query.offset = 0
            let all = try await objects(query)
            let primaryKey = request.resource.primaryKey
            guard let index = all.objects.firstIndex(where: { object in
                primaryKey.key(of: object).map { MockValueOrder.compare($0, key) == 0 } ?? false
            }) else { throw MissingKey(parameter: parameter, text: text) }
            let start = index + 1
            let end = min(all.objects.count, start + paging.size)
            return StylePage(objects: Array(all.objects[start..<end]), total: all.total, offset: start)
        }
    }

    /// The page's objects as the resource's serializer writes a collection, when that is an array; one by
    /// one as it writes an object otherwise (a serializer that wraps a collection, `{"people": [...]}`).
    private static func serializedItems(_ objects: [JSONObject], _ request: MockRequest) -> JSONValue {
        let wire = objects.map(request.resource.wire)
        let collection = request.serializer.serialize(collection: wire, of: request.resource)
        if case .array = collection { return collection }
        return .array(wire.map { request.serializer.serialize(object: $0, of: request.resource) })
    }
}
