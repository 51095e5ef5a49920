/// Where a mock server keeps its objects: one protocol over three stores, so that users can plug in
/// their own.
///
/// - ``MemoryMockStore`` (the default): in memory, in this module (`ReplicaServer`).
/// - ``SQLiteMockStore``: an SQLite file (GRDB), in this module too (`replica serve --store sqlite:PATH`).
/// - `PostgresMockStore`: a PostgreSQL database shared by several servers, in the `ReplicaServerPostgres`
///   module and product, so that `ReplicaServer` links no PostgreSQL (`replica serve --store postgres://…`).
///
/// Objects are `JSONObject`s keyed by property name; stores receive values already harvested and
/// type-checked by the resource, and return objects with every property present (missing ones null).
/// A property with a dotted name (`address.city`) is one flat member (and column) here; the server
/// reads and writes it nested on the wire (`{"address": {"city": …}}`).
///
/// ```swift
/// let store: any MockStore = try SQLiteMockStore(path: "/tmp/mock.sqlite")
/// try await store.addResource(people)
/// let john = try await store.create(people, values: ["name": "john"])
/// ```
public protocol MockStore: Sendable {
    /// Prepares storage for a resource (creates its table, adds missing columns); keeps existing objects.
    ///
    /// ```swift
    /// try await store.addResource(people)
    /// ```
    /// - Parameters:
    ///   - resource: the resource.
    /// - Throws: `MockServerError` `.storeFailed`.
    func addResource(_ resource: MockResource) async throws

    /// Drops a resource and all its objects.
    ///
    /// ```swift
    /// try await store.dropResource(people)
    /// ```
    /// - Parameters:
    ///   - resource: the resource.
    /// - Throws: `MockServerError` `.storeFailed`.
    func dropResource(_ resource: MockResource) async throws

    /// How many objects match the query's filters.
    ///
    /// ```swift
    /// let reds = try await store.count(cars, query: MockQuery(filters: [.init(property: "color", value: "red")]))
    /// ```
    /// - Parameters:
    ///   - resource: the resource.
    ///   - query: the filters (sort and page are ignored).
    /// - Returns: the count.
    /// - Throws: `MockServerError` `.storeFailed`.
    func count(_ resource: MockResource, query: MockQuery) async throws -> Int

    /// The object with primary key `id`, or nil.
    ///
    /// A key is a value of the resource's key property, or for a ``MockPrimaryKey/composite(_:)`` key
    /// an array of its parts' values in order (``MockPrimaryKey/key(of:)`` gives it,
    /// ``MockPrimaryKey/values(of:)`` takes it apart); stores compare every part.
    ///
    /// ```swift
    /// let john = try await store.object(people, id: 1)
    /// ```
    /// - Parameters:
    ///   - resource: the resource.
    ///   - id: the primary key (integer or string, as the resource's key; an array of the parts for a composite key).
    /// - Returns: the object, or nil.
    /// - Throws: `MockServerError` `.storeFailed`.
    func object(_ resource: MockResource, id: JSONValue) async throws -> JSONObject?

    /// A filtered, sorted page of objects and the total matching the filters.
    ///
    /// ```swift
    /// let page = try await store.objects(people, query: MockQuery(limit: 20))
    /// ```
    /// - Parameters:
    ///   - resource: the resource.
    ///   - query: filters, sort and page.
    /// - Returns: the page.
    /// - Throws: `MockServerError` `.storeFailed`.
    func objects(_ resource: MockResource, query: MockQuery) async throws -> MockPage

    /// The objects whose parent key equals `parentID`, filtered, sorted and paged by `query`.
    ///
    /// ```swift
    /// let johnsCars = try await store.children(cars, of: MockParent("people"), id: 1, query: MockQuery())
    /// ```
    /// - Parameters:
    ///   - resource: the child resource.
    ///   - parent: the parent relation.
    ///   - parentID: the parent's primary key.
    ///   - query: more filters, sort and page.
    /// - Returns: the page.
    /// - Throws: `MockServerError` `.storeFailed`.
    func children(_ resource: MockResource, of parent: MockParent, id parentID: JSONValue, query: MockQuery) async throws -> MockPage

    /// Inserts an object; assigns its key when `values` has none (``MockResource/assigningKey(to:)``:
    /// a composite key is never assigned, it must be whole).
    ///
    /// ```swift
    /// let john = try await store.create(people, values: ["name": "john"]) // id 1
    /// ```
    /// - Parameters:
    ///   - resource: the resource.
    ///   - values: harvested values.
    /// - Returns: the stored object, every property present.
    /// - Throws: `MockHTTPError` 409 when the key exists, 422 for a composite key lacking a part;
    ///   `MockServerError` `.storeFailed`.
    func create(_ resource: MockResource, values: JSONObject) async throws -> JSONObject

    /// Merges `values` into the object with key `id`.
    ///
    /// ```swift
    /// let jeff = try await store.modify(people, id: 1, values: ["name": "jeff"])
    /// ```
    /// - Parameters:
    ///   - resource: the resource.
    ///   - id: the primary key.
    ///   - values: harvested values (the key is ignored).
    /// - Returns: the updated object, or nil when there is none with that key.
    /// - Throws: `MockServerError` `.storeFailed`.
    func modify(_ resource: MockResource, id: JSONValue, values: JSONObject) async throws -> JSONObject?

    /// Deletes the object with key `id`.
    ///
    /// ```swift
    /// let existed = try await store.delete(people, id: 1)
    /// ```
    /// - Parameters:
    ///   - resource: the resource.
    ///   - id: the primary key.
    /// - Returns: whether an object was deleted.
    /// - Throws: `MockServerError` `.storeFailed`.
    func delete(_ resource: MockResource, id: JSONValue) async throws -> Bool

    /// Inserts or merges many objects (data loading), keyed by primary key when they have one.
    ///
    /// ```swift
    /// let stored = try await store.upsert(people, objects: [["id": 5, "name": "ann"]])
    /// ```
    /// - Parameters:
    ///   - resource: the resource.
    ///   - objects: harvested values.
    /// - Returns: how many objects were stored.
    /// - Throws: `MockServerError` `.storeFailed`.
    func upsert(_ resource: MockResource, objects: [JSONObject]) async throws -> Int
}

extension MockStore {
    /// Children as a filter on the parent key; stores may do better.
    public func children(_ resource: MockResource, of parent: MockParent, id parentID: JSONValue, query: MockQuery) async throws -> MockPage {
        var query = query
        query.filters.insert(MockQuery.Filter(property: parent.key, value: parentID), at: 0)
        return try await objects(resource, query: query)
    }

    /// Counts through `objects` with an empty page; stores may do better.
    public func count(_ resource: MockResource, query: MockQuery) async throws -> Int {
        var query = query
        query.limit = 0
        return try await objects(resource, query: query).total
    }

    /// One `modify` or `create` per object; stores may do it in one transaction.
    public func upsert(_ resource: MockResource, objects: [JSONObject]) async throws -> Int {
        for values in objects {
            if let id = resource.primaryKey.key(of: values),
               try await modify(resource, id: id, values: values) != nil {
                continue
            }
            _ = try await create(resource, values: values)
        }
        return objects.count
    }
}
