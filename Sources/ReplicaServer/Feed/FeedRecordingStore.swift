/// A mock server's store as its requests see it: every write goes to the server's store, then
/// into its change feed (``MockChangeFeed``), so that `?since=` answers and `/events` list it,
/// whichever controller made it.
struct FeedRecordingStore: MockStore {
    let base: any MockStore
    let feed: MockChangeFeed

    func addResource(_ resource: MockResource) async throws { try await base.addResource(resource) }
    func dropResource(_ resource: MockResource) async throws {
        try await base.dropResource(resource)
        feed.reset(resource.name)
    }
    func count(_ resource: MockResource, query: MockQuery) async throws -> Int { try await base.count(resource, query: query) }
    func object(_ resource: MockResource, id: JSONValue) async throws -> JSONObject? { try await base.object(resource, id: id) }
    func objects(_ resource: MockResource, query: MockQuery) async throws -> MockPage { try await base.objects(resource, query: query) }
    func children(_ resource: MockResource, of parent: MockParent, id parentID: JSONValue, query: MockQuery) async throws -> MockPage {
        try await base.children(resource, of: parent, id: parentID, query: query)
    }

    func create(_ resource: MockResource, values: JSONObject) async throws -> JSONObject {
        let object = try await base.create(resource, values: values)
        if let key = resource.primaryKey.key(of: object) { feed.record(resource.name, key: key, paths: Self.paths(resource, key, object)) }
        return object
    }

    func modify(_ resource: MockResource, id: JSONValue, values: JSONObject) async throws -> JSONObject? {
        let object = try await base.modify(resource, id: id, values: values)
        if let object {
            let key = resource.primaryKey.key(of: object) ?? id
            feed.record(resource.name, key: key, paths: Self.paths(resource, key, object))
        }
        return object
    }

    func delete(_ resource: MockResource, id: JSONValue) async throws -> Bool {
        // The object as it was, so that a scoped `?since=` answer can tell whose tombstone it is.
        let old = try await base.object(resource, id: id)
        let deleted = try await base.delete(resource, id: id)
        if deleted { feed.record(resource.name, key: id, deletedObject: old ?? [:], paths: Self.paths(resource, id, old ?? [:])) }
        return deleted
    }

    func upsert(_ resource: MockResource, objects: [JSONObject]) async throws -> Int {
        let stored = try await base.upsert(resource, objects: objects)
        let keys = objects.compactMap { resource.primaryKey.key(of: $0) }
        if keys.count == objects.count && keys.count <= feed.window {
            for (key, object) in zip(keys, objects) { feed.record(resource.name, key: key, paths: Self.paths(resource, key, object)) }
        } else if stored > 0 {
            // A bulk load larger than the window (or of objects the store keys): no cursor can span it.
            feed.reset(resource.name)
        }
        return stored
    }

    /// The paths a write of `object` changes: `/cars`, `/cars/10` and `/people/1/cars`.
    static func paths(_ resource: MockResource, _ key: JSONValue, _ object: JSONObject) -> [String] {
        let collection = "/" + PercentEncoding.encode(resource.name, allowed: .unreserved)
        var paths = [collection, collection + "/" + resource.primaryKey.path(of: key)]
        for parent in resource.parents {
            guard let value = object[parent.key], !value.isNull else { continue }
            let text = value.stringValue ?? value.serialized()
            paths.append("/" + PercentEncoding.encode(parent.resource, allowed: .unreserved) + "/"
                + PercentEncoding.encode(text, allowed: .unreserved) + collection)
        }
        return paths
    }
}

/// Pages are rendered by the store recorded for (the recorder adds nothing to reads).
extension FeedRecordingStore: MockPageSource {
    func renderPage(_ resource: MockResource, query: MockQuery, parent: (parent: MockParent, id: JSONValue)?,
                    with renderer: MockPageRenderer) async throws -> MockRenderedPage {
        try await renderer.page(from: base, query: query, parent: parent)
    }
}
