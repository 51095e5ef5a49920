extension MockCRUD {
    /// Answers `GET /people?since=CURSOR` from the server's change feed: the objects of the
    /// collection (its filters, parent and path values applied) written after the cursor, the
    /// keys of those deleted since, and the cursor to send next, also in `X-Cursor`:
    ///
    /// ```json
    /// {"items": [{"id": 7, "name": "Ada"}], "deleted": [9], "cursor": "k3f9a2.42"}
    /// ```
    ///
    /// A composite key's tombstone is an object of its parts (`{"owner": …, "repo": …, "ref": …}`).
    ///
    /// - Parameters:
    ///   - request: the routed collection request, with ``MockRequest/changes``.
    ///   - since: the cursor.
    ///   - filters: the collection's filters.
    /// - Returns: 200 with the changes.
    /// - Throws: `MockHTTPError` 410 `cursorExpired` for a cursor the feed no longer knows (older than
    ///   its window, or from another run of the server), 404 for a missing parent.
    public static func changes(_ request: MockRequest, since: String, filters: [MockQuery.Filter]) async throws -> MockResponse {
        guard let feed = request.changes else { throw MockHTTPError.badRequest("this server keeps no change feed", code: "noFeed") }
        var filters = filters
        if let parent = request.parent {
            guard try await request.store.object(parent.resource, id: parent.id) != nil else {
                throw MockHTTPError.notFound("no \(parent.resource.name) with id \(parent.id.stringValue ?? parent.id.serialized())")
            }
            filters.insert(MockQuery.Filter(property: parent.parent.key, value: parent.id), at: 0)
        }
        let resource = request.resource
        let found: MockChangeFeed.Changes
        do {
            found = try feed.changes(of: resource.name, since: since)
        } catch {
            throw MockHTTPError(status: 410, code: "cursorExpired", message: error.description)
        }
        func matches(_ object: JSONObject) -> Bool {
            filters.allSatisfy { MockValueOrder.equal(object[$0.property] ?? .null, $0.value) }
        }
        var items: [JSONObject] = []
        var deleted: [JSONValue] = []
        for change in found.changes {
            if let object = try await request.store.object(resource, id: change.key) {
                if matches(object) { items.append(resource.wire(object)) }
            } else if matches(change.deletedObject ?? [:]) || (change.deletedObject == nil && filters.isEmpty) {
                deleted.append(tombstone(change.key, of: resource))
            }
        }
        let body: JSONValue = .object([
            "items": request.serializer.serialize(collection: items, of: resource),
            "deleted": .array(deleted),
            "cursor": .string(found.cursor),
        ])
        return MockResponse(status: 200, headers: [(name: "X-Cursor", value: found.cursor)], body: body)
    }

    /// A deleted object's key as the feed lists it: the key, or an object of a composite key's parts.
    private static func tombstone(_ key: JSONValue, of resource: MockResource) -> JSONValue {
        guard resource.primaryKey.kind == .composite, let parts = resource.primaryKey.values(of: key) else { return key }
        return .object(JSONObject(parts.map { ($0.property.name, $0.value) }))
    }
}
