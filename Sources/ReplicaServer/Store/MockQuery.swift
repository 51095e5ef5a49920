/// What a collection request asks for: equality filters, sort keys and a page.
///
/// ```swift
/// var query = MockQuery()
/// query.filters = [("color", "red")]
/// query.sort = [MockQuery.SortKey(property: "name", descending: true)]
/// query.limit = 20
/// ```
public struct MockQuery: Sendable, Hashable {
    /// One sort key.
    public struct SortKey: Sendable, Hashable {
        /// The property to sort on.
        public var property: String
        /// Descending instead of ascending.
        public var descending: Bool

        /// Creates a sort key.
        ///
        /// ```swift
        /// MockQuery.SortKey(property: "name", descending: true)
        /// ```
        /// - Parameters:
        ///   - property: the property name.
        ///   - descending: descending order.
        public init(property: String, descending: Bool = false) {
            self.property = property
            self.descending = descending
        }
    }

    /// One equality filter: property == value (`null` matches null).
    public struct Filter: Sendable, Hashable {
        /// The property name.
        public var property: String
        /// The value, typed as the property.
        public var value: JSONValue

        /// Creates a filter.
        ///
        /// ```swift
        /// MockQuery.Filter(property: "color", value: "red")
        /// ```
        /// - Parameters:
        ///   - property: the property name.
        ///   - value: the value to match.
        public init(property: String, value: JSONValue) {
            self.property = property
            self.value = value
        }
    }

    /// Every filter must match.
    public var filters: [Filter]
    /// Sort keys, first one first; ties (and no keys) are ordered by primary key.
    public var sort: [SortKey]
    /// At most this many objects; nil for all.
    public var limit: Int?
    /// Skip this many objects first.
    public var offset: Int

    /// Creates a query.
    ///
    /// ```swift
    /// let page = MockQuery(limit: 10, offset: 20)
    /// ```
    /// - Parameters:
    ///   - filters: equality filters.
    ///   - sort: sort keys.
    ///   - limit: page size, nil for all.
    ///   - offset: objects to skip.
    public init(filters: [Filter] = [], sort: [SortKey] = [], limit: Int? = nil, offset: Int = 0) {
        self.filters = filters
        self.sort = sort
        self.limit = limit
        self.offset = offset
    }
}

/// One page of a collection and the number of objects matching the filters.
///
/// ```swift
/// let page = try await store.objects(people, query: MockQuery(limit: 10))
/// print(page.objects.count, "of", page.total)
/// ```
public struct MockPage: Sendable, Hashable {
    /// The objects of the page, every property present.
    public var objects: [JSONObject]
    /// How many objects match the filters, on every page.
    public var total: Int

    /// Creates a page.
    ///
    /// ```swift
    /// MockPage(objects: [], total: 0)
    /// ```
    /// - Parameters:
    ///   - objects: the page's objects.
    ///   - total: the number of matching objects.
    public init(objects: [JSONObject], total: Int) {
        self.objects = objects
        self.total = total
    }
}
