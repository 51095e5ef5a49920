import CoreMetrics
import Foundation

/// A live, sectioned, sorted result set over one entity (RSAPI's RSDataFetcher, Core Data's
/// NSFetchedResultsController, for Linux): an immutable ``snapshot``, and for each commit that
/// changes it, a ``ResultDiff`` a list view can apply.
///
/// It watches its store's change sets (any ``ReplicaStore``: ``SQLiteReplica`` or `PostgresReplica`).
/// A change set not touching the entity costs nothing;
/// one that does is evaluated from the changed keys when it can (see
/// ``LiveResultCore/evaluate(_:renamed:)`` for when the query is re-run instead). All state is owned by one
/// serial queue. Updates arrive as an async sequence (``updates()``) or through a delegate on the
/// queue you pick (``setDelegate(_:queue:)``). Once `store.sync` has returned, ``snapshot``
/// reflects its commit. ``close()`` (or releasing the set) unregisters it from the store.
///
/// ```swift
/// let posts = try LiveResultSet(engine: engine, query: LiveQuery(
///     "Post", where: .equal("userID", .integer(3)), sort: [.descending("createdAt")], sectionKey: "published"))
/// let updates = posts.updates()
/// Task { for await update in updates { print(update.diff) } }
/// try await engine.sync(.get, "/users/3/posts", body: data)
/// ```
public final class LiveResultSet: Sendable {
    /// The store whose commits are watched: an ``SQLiteReplica`` or a `PostgresReplica`.
    public let store: any ReplicaStore
    let core: LiveResultCore
    let token: ObserverToken

    /// Opens a live result set on a store that reads synchronously (an SQLite replica) and loads
    /// its first snapshot before it returns; ``init(store:query:)`` is the same for any store.
    ///
    /// - Parameters:
    ///   - store: The store whose commits keep it live.
    ///   - source: Where its rows are read, synchronously.
    ///   - query: What to show.
    ///   - metricsFactory: Where its commit-to-diff latency goes.
    ///   - observe: Registers the set's callback for `query`'s entity, delivered on the queue given.
    package init(store: any ReplicaStore, source: any LiveRowSource, query: LiveQuery, metricsFactory: any MetricsFactory,
                 observe: (DispatchQueue, @escaping @Sendable (ChangeSet) -> Void) -> ObserverToken) throws {
        let plan = try QueryPlan(query: query, source: source)
        let core = LiveResultCore(source: source, plan: plan,
                                  queue: DispatchQueue(label: "Replica.LiveResultSet.\(query.entity)"))
        core.diffLatency = Self.diffLatency(of: query, factory: metricsFactory)
        self.store = store
        self.core = core
        // Registering before the first read, on the core's queue: a commit racing with the read is
        // delivered after it and re-read (evaluating a change set twice is harmless).
        self.token = try core.queue.sync {
            let token = observe(core.queue) { [weak core] changes in
                core?.receive(changes)
            }
            do {
                try core.load()
            } catch {
                store.removeObserver(token)
                throw error
            }
            return token
        }
        core.queue.sync { core.owner = self }
    }

    /// Opens a live result set on any store: an ``SQLiteReplica``, or a `PostgresReplica`, whose
    /// set is kept live by this process's syncs and, through `LISTEN`, every other process's.
    ///
    /// ```swift
    /// let store = try await openReplicaStore(url: "postgres://replica@db:5432/cache")
    /// let people = try await LiveResultSet(store: store, query: LiveQuery("Person", sort: [.ascending("name")]))
    /// for await update in people.updates() { print(update.snapshot.count, update.diff) }
    /// ```
    ///
    /// The observer is registered first (on PostgreSQL: listening has started), then the first
    /// snapshot is read on the set's queue, so no commit falls between them. On PostgreSQL,
    /// reading the rows of a snapshot larger than ``LiveQuery/residentRowLimit`` may query the
    /// database: do not read them on one of SwiftNIO's event-loop threads.
    ///
    /// - Parameters:
    ///   - store: The store whose commits keep it live; closing the store stops its updates.
    ///   - query: What to show; its where-clause is SQLite's, read by PostgreSQL as its
    ///     `rows(_:)` reads it.
    ///   - metricsFactory: Where its commit-to-diff latency goes (``ReplicaMetrics/liveDiffLatency``);
    ///     swift-metrics' global factory by default.
    /// - Throws: ``StoreError`` for an unknown entity or attribute, SQL the database refuses, or a
    ///   database that cannot be read; ``LiveResultError`` for an unknown section key.
    public init(store: any ReplicaStore, query: LiveQuery,
                metricsFactory: any MetricsFactory = MetricsSystem.factory) async throws {
        let source = store.backend.liveSource
        let plan = try QueryPlan(query: query, source: source)
        let core = LiveResultCore(source: source, plan: plan,
                                  queue: DispatchQueue(label: "Replica.LiveResultSet.\(query.entity)"))
        core.diffLatency = Self.diffLatency(of: query, factory: metricsFactory)
        let token = await store.addObserver(for: [query.entity], queue: core.queue) { [weak core] changes in
            core?.receive(changes)
        }
        do {
            // On the queue: change sets delivered meanwhile are evaluated after the first snapshot.
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                core.queue.async { continuation.resume(with: Result { try core.load() }) }
            }
        } catch {
            store.removeObserver(token)
            throw error
        }
        self.store = store
        self.core = core
        self.token = token
        core.queue.sync { core.owner = self }
    }

    /// Opens a live result set on the rows a route's response speaks for, on any store.
    ///
    /// ```swift
    /// let posts = try await LiveResultSet(store: store, path: "/users/3/posts", sort: [.ascending("title")])
    /// ```
    ///
    /// - Throws: ``RouteError`` when no route matches; ``LiveResultError`` for a DATA or MANY
    ///   route; ``StoreError`` for an invalid query.
    public convenience init(store: any ReplicaStore, path: String, method: HTTPMethod = .get,
                            where predicate: RowPredicate = .all, sort: [SortKey] = [], sectionKey: String? = nil,
                            sectionOffset: Int = 0, limit: Int? = nil,
                            metricsFactory: any MetricsFactory = MetricsSystem.factory) async throws {
        try await self.init(store: store, query: LiveQuery(path: path, method: method, routes: store.routes,
                                                           where: predicate, sort: sort, sectionKey: sectionKey,
                                                           sectionOffset: sectionOffset, limit: limit),
                            metricsFactory: metricsFactory)
    }

    /// The timer of ``ReplicaMetrics/liveDiffLatency`` for `query`'s entity.
    static func diffLatency(of query: LiveQuery, factory: any MetricsFactory) -> CoreMetrics.Timer {
        CoreMetrics.Timer(label: ReplicaMetrics.liveDiffLatency, dimensions: [("entity", query.entity)], factory: factory)
    }

    deinit {
        close()
    }

    /// The current snapshot.
    ///
    /// ```swift
    /// print(resultSet.snapshot.count)
    /// ```
    public var snapshot: ResultSnapshot {
        let core = self.core
        return core.queue.sync {
            // Change sets already received are evaluated first, so that a commit whose
            // `engine.sync` has returned is always reflected.
            core.processPending()
            return core.current
        }
    }

    /// The current query (changed by ``refresh(_:sort:)``).
    public var query: LiveQuery {
        core.queue.sync { core.plan.query }
    }

    /// The last error met while evaluating a change, or `nil`; the next change re-runs the query.
    public var lastError: (any Error)? {
        core.queue.sync { core.lastError }
    }

    /// `true` once ``close()`` was called.
    public var isClosed: Bool { core.closedFlag.isSet }

    /// What the set did so far, after evaluating the change sets already received.
    var statistics: LiveResultStatistics {
        let core = self.core
        return core.queue.sync {
            core.processPending()
            return core.statistics
        }
    }

    /// The updates from now on, as an async sequence starting at its ``LiveResultUpdates/initial`` snapshot.
    ///
    /// ```swift
    /// for await update in resultSet.updates() {
    ///     print(update.snapshot.count, update.diff)
    /// }
    /// ```
    ///
    /// - Returns: A sequence to iterate once; it ends when the set is closed or the task cancelled.
    public func updates() -> LiveResultUpdates {
        LiveResultUpdates(core: core)
    }

    /// Sets (or with `nil` removes) the delegate, called on `queue`, starting from the current snapshot.
    ///
    /// ```swift
    /// resultSet.setDelegate(controller, queue: .main)
    /// ```
    ///
    /// - Parameters:
    ///   - delegate: The delegate, held weakly.
    ///   - queue: Where its methods are called.
    public func setDelegate(_ delegate: (any LiveResultSetDelegate)?, queue: DispatchQueue) {
        core.queue.sync { core.setDelegate(delegate, queue: queue) }
    }

    /// Replaces the predicate (and optionally the sort) and reports the diff from the old results to
    /// the new, to consumers and as the return value (RSDataFetcher's
    /// `refreshRequestWithPredicate:andSortDescriptors:`).
    ///
    /// ```swift
    /// let diff = try await posts.refresh(.equal("published", .bool(true)), sort: [.ascending("title")])
    /// ```
    ///
    /// - Parameters:
    ///   - predicate: The new predicate; ``RowPredicate/all`` for every row.
    ///   - sort: The new sort, or `nil` to keep the current one.
    /// - Returns: The diff from the old results to the new (empty when they are the same).
    /// - Throws: ``StoreError`` or ``LiveResultError``; the old query then stays in force.
    @discardableResult
    public func refresh(_ predicate: RowPredicate, sort: [SortKey]? = nil) async throws -> ResultDiff {
        let core = self.core
        return try await withCheckedThrowingContinuation { continuation in
            core.queue.async {
                var query = core.plan.query
                query.predicate = predicate
                if let sort { query.sort = sort }
                continuation.resume(with: Result { try core.refresh(query) })
            }
        }
    }

    /// Moves the window the set shows (``LiveQuery/window``), or with `nil` shows the whole result,
    /// and reports the diff from the old window to the new, to consumers and as the return value.
    /// Reads the new window's rows; the whole result is not queried again.
    ///
    /// ```swift
    /// try await items.moveWindow(to: .rows(40 ..< 80))      // the next page
    /// ```
    ///
    /// - Parameter window: The new window, or `nil` for every row.
    /// - Returns: The diff (empty when the window shows the same rows).
    /// - Throws: ``StoreError`` when reading the rows fails; ``LiveResultError/Code/closed``.
    @discardableResult
    public func moveWindow(to window: LiveWindow?) async throws -> ResultDiff {
        let core = self.core
        return try await withCheckedThrowingContinuation { continuation in
            core.queue.async { continuation.resume(with: Result { try core.moveWindow(window) }) }
        }
    }

    /// Replaces the predicate, given as SQL text, and optionally the sort; see ``refresh(_:sort:)``.
    ///
    /// ```swift
    /// try await posts.refresh(predicate: "userID = ?", arguments: [.integer(4)], sort: nil)
    /// ```
    ///
    /// - Parameters:
    ///   - predicate: The where-clause, or `nil` for every row.
    ///   - arguments: Values for its `?` placeholders.
    ///   - sort: The new sort, or `nil` to keep the current one.
    /// - Returns: The diff from the old results to the new.
    /// - Throws: ``StoreError`` or ``LiveResultError``; the old query then stays in force.
    @discardableResult
    public func refresh(predicate: String?, arguments: [AttributeValue] = [], sort: [SortKey]? = nil) async throws
        -> ResultDiff
    {
        try await refresh(predicate.map { RowPredicate(sql: $0, arguments: arguments) } ?? .all, sort: sort)
    }

    /// Stops watching: unregisters from the engine at once (safe from inside a delegate method or
    /// an iteration), stops delegate calls in progress, and ends the async sequences.
    ///
    /// ```swift
    /// resultSet.close()
    /// ```
    public func close() {
        guard core.closedFlag.set() else { return }
        store.removeObserver(token)
        let core = self.core
        core.queue.async { core.shutdown() }
    }
}
