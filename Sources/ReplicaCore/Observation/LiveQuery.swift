/// What a ``LiveResultSet`` shows: an entity's rows matching a predicate, sorted, optionally
/// grouped into sections and limited (a fetch request with a section key path).
///
/// Order is total: the ``sort`` keys, then the primary key ascending (unless the sort already
/// names it). With a ``sectionKey``, sections follow the sort: the section key must be the
/// first sort key; when it is not, `sectionKey` ascending is prepended automatically (and any
/// later sort key on the same attribute dropped) — see ``effectiveSort``. Sections are the runs
/// of rows with equal section-key values, so they come in the order of that first key.
///
/// ```swift
/// let query = LiveQuery("Post", where: .equal("userID", .integer(3)) && .equal("published", .bool(true)),
///                       sort: [.descending("createdAt")], sectionKey: nil, limit: 50)
/// ```
public struct LiveQuery: Sendable, Hashable {
    /// The entity whose rows are shown.
    public var entity: String
    /// The rows to show.
    public var predicate: RowPredicate
    /// The order; the primary key breaks ties.
    public var sort: [SortKey]
    /// The attribute whose values group rows into sections, or `nil` for one section.
    public var sectionKey: String?
    /// RSDataFetcher's section offset: the view's first sections belong to something else, so every
    /// reported section index (snapshots' index paths and diffs) is shifted by this number.
    public var sectionOffset: Int
    /// The most rows to show (the first ones in order), or `nil` for all.
    public var limit: Int?
    /// The most rows one diff lists: a change of more rows (inserted, deleted, moved and updated
    /// rows and sections together) is delivered as a reset (``ResultDiff/isReset``), which says
    /// "reload from the new snapshot", as a table view's `reloadData`. `nil` lists every change,
    /// however many. Default ``defaultResetThreshold``.
    ///
    /// ```swift
    /// var query = LiveQuery("Item", sort: [.ascending("name")])
    /// query.resetThreshold = 500        // a list view animates at most 500 changes
    /// ```
    public var resetThreshold: Int? = LiveQuery.defaultResetThreshold

    /// The default ``resetThreshold``: 10,000 changes.
    ///
    /// ```swift
    /// query.resetThreshold = LiveQuery.defaultResetThreshold / 10
    /// ```
    public static let defaultResetThreshold = 10_000
    /// The part of the result the snapshots and diffs cover, or `nil` for all of it. With a
    /// ``limit`` too, the window moves within the first `limit` rows. A window's snapshots hold
    /// their rows; ``ResultSnapshot/windowStart`` and ``ResultSnapshot/totalCount`` place it in
    /// the whole result. Move it with ``LiveResultSet/moveWindow(to:)``.
    ///
    /// ```swift
    /// var query = LiveQuery("Item", sort: [.ascending("name")])
    /// query.window = .rows(0 ..< 40)
    /// ```
    public var window: LiveWindow?
    /// The most rows a snapshot holds the values of: a larger result keeps only each row's key and
    /// sort values, and reads rows from the store when they are accessed (see ``ResultSnapshot``).
    /// Default 10,000.
    ///
    /// ```swift
    /// var query = LiveQuery("Item", sort: [.ascending("name")])
    /// query.residentRowLimit = 0          // never hold row values: every snapshot reads on access
    /// ```
    public var residentRowLimit: Int = 10_000 {
        didSet { residentRowLimit = max(0, residentRowLimit) }
    }
    /// The rows a large snapshot reads per query when a row it does not hold is accessed (Core
    /// Data's `fetchBatchSize`). Default 256.
    ///
    /// ```swift
    /// query.rowBatchSize = 64             // a terminal view shows about 50 rows at a time
    /// ```
    public var rowBatchSize: Int = 256 {
        didSet { rowBatchSize = max(1, rowBatchSize) }
    }

    /// Creates a query.
    ///
    /// ```swift
    /// let query = LiveQuery("Post", where: .equal("userID", .integer(3)), sort: [.ascending("title")])
    /// ```
    ///
    /// - Parameters:
    ///   - entity: The entity name.
    ///   - predicate: The rows to show; ``RowPredicate/all`` by default.
    ///   - sort: The order.
    ///   - sectionKey: The attribute grouping rows into sections.
    ///   - sectionOffset: The shift applied to every reported section index.
    ///   - limit: The most rows to show.
    public init(_ entity: String, where predicate: RowPredicate = .all, sort: [SortKey] = [],
                sectionKey: String? = nil, sectionOffset: Int = 0, limit: Int? = nil) {
        self.entity = entity
        self.predicate = predicate
        self.sort = sort
        self.sectionKey = sectionKey
        self.sectionOffset = max(0, sectionOffset)
        self.limit = limit.map { max(0, $0) }
    }

    /// Creates a query from SQL text over attribute names.
    ///
    /// ```swift
    /// let query = LiveQuery("User", where: "name LIKE ?", arguments: [.string("A%")], sort: [.ascending("name")])
    /// ```
    ///
    /// - Parameters:
    ///   - entity: The entity name.
    ///   - sql: The where-clause.
    ///   - arguments: Values for its `?` placeholders.
    ///   - sort: The order.
    ///   - sectionKey: The attribute grouping rows into sections.
    ///   - sectionOffset: The shift applied to every reported section index.
    ///   - limit: The most rows to show.
    public init(_ entity: String, where sql: String, arguments: [AttributeValue] = [], sort: [SortKey] = [],
                sectionKey: String? = nil, sectionOffset: Int = 0, limit: Int? = nil) {
        self.init(entity, where: RowPredicate(sql: sql, arguments: arguments), sort: sort,
                  sectionKey: sectionKey, sectionOffset: sectionOffset, limit: limit)
    }

    /// A query on the rows a route's response speaks for: `/users/3/posts` → posts whose `userID` is 3.
    ///
    /// ```swift
    /// let query = try LiveQuery(path: "/users/3/posts", routes: engine.routes, sort: [.descending("createdAt")])
    /// ```
    ///
    /// - Parameters:
    ///   - path: The request path.
    ///   - method: The request method.
    ///   - routes: The route table resolving it.
    ///   - predicate: An extra condition, and-ed with the scope's.
    ///   - sort: The order.
    ///   - sectionKey: The attribute grouping rows into sections.
    ///   - sectionOffset: The shift applied to every reported section index.
    ///   - limit: The most rows to show.
    /// - Throws: ``RouteError`` when no route matches; ``LiveResultError/Code/invalidQuery`` when the
    ///   route does not target one entity (DATA and MANY routes).
    public init(path: String, method: HTTPMethod = .get, routes: RouteTable, where predicate: RowPredicate = .all,
                sort: [SortKey] = [], sectionKey: String? = nil, sectionOffset: Int = 0, limit: Int? = nil) throws {
        let resolution = try routes.resolve(method, path)
        guard case .entity = resolution.route.target, !resolution.scope.entity.isEmpty else {
            throw LiveResultError(.invalidQuery, "route \(resolution.route.method) \(resolution.route.path) "
                                  + "targets \(resolution.route.target), not one entity; it cannot be observed")
        }
        self.init(scope: resolution.scope, where: predicate, sort: sort, sectionKey: sectionKey,
                  sectionOffset: sectionOffset, limit: limit)
    }

    /// A query on the rows of a route scope.
    ///
    /// ```swift
    /// let scope = try engine.routes.resolve(.get, "/users/3/posts").scope
    /// let query = LiveQuery(scope: scope, sort: [.ascending("title")])
    /// ```
    ///
    /// - Parameters:
    ///   - scope: The scope; each condition becomes an equality.
    ///   - predicate: An extra condition, and-ed with the scope's.
    ///   - sort: The order.
    ///   - sectionKey: The attribute grouping rows into sections.
    ///   - sectionOffset: The shift applied to every reported section index.
    ///   - limit: The most rows to show.
    public init(scope: RouteScope, where predicate: RowPredicate = .all, sort: [SortKey] = [],
                sectionKey: String? = nil, sectionOffset: Int = 0, limit: Int? = nil) {
        let scoped = scope.conditions.reduce(RowPredicate.all) { $0 && .equal($1.attribute, $1.value) }
        self.init(scope.entity, where: scoped && predicate, sort: sort, sectionKey: sectionKey,
                  sectionOffset: sectionOffset, limit: limit)
    }

    /// The sort actually used: ``sort`` with the section key first (prepended ascending when it is
    /// not already the first key; later keys on the section attribute are dropped). The primary key
    /// is appended by the store when absent.
    public var effectiveSort: [SortKey] {
        guard let sectionKey else { return sort }
        if let first = sort.first, first.attribute == sectionKey { return sort }
        return [.ascending(sectionKey)] + sort.filter { $0.attribute != sectionKey }
    }

    /// The store query for the whole result.
    var rowQuery: RowQuery {
        RowQuery(entity, where: predicate.isAll ? nil : predicate.sql, arguments: predicate.arguments,
                 sort: effectiveSort, limit: limit)
    }
}
