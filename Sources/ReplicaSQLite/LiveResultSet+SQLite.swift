import CoreMetrics
import Foundation
import Metrics
import ReplicaCore

/// Live result sets opened synchronously on an SQLite replica.
extension LiveResultSet {
    /// Opens a live result set on an SQLite replica and loads its first snapshot, synchronously
    /// (``init(store:query:)`` is the same for any store).
    ///
    /// ```swift
    /// let users = try LiveResultSet(engine: engine, query: LiveQuery("User", sort: [.ascending("name")]))
    /// ```
    ///
    /// - Parameters:
    ///   - engine: The engine whose commits keep it live.
    ///   - query: What to show.
    ///   - metricsFactory: Where its commit-to-diff latency goes (``ReplicaMetrics/liveDiffLatency``);
    ///     swift-metrics' global factory by default.
    /// - Throws: ``StoreError`` for an unknown entity or attribute or SQL that SQLite refuses;
    ///   ``LiveResultError/Code/invalidQuery`` for an unknown section key.
    public convenience init(engine: SQLiteReplica, query: LiveQuery, metricsFactory: any MetricsFactory = MetricsSystem.factory) throws {
        try self.init(store: engine, source: engine.store, query: query, metricsFactory: metricsFactory) { queue, callback in
            engine.addObserver(for: [query.entity], queue: queue, callback)
        }
    }

    /// Opens a live result set on the rows a route's response speaks for.
    ///
    /// ```swift
    /// let posts = try LiveResultSet(engine: engine, path: "/users/3/posts", sort: [.ascending("title")])
    /// ```
    ///
    /// - Parameters:
    ///   - engine: The engine; its route table resolves `path`.
    ///   - path: The request path, e.g. `/users/3/posts`.
    ///   - method: The request method.
    ///   - predicate: An extra condition, and-ed with the scope's.
    ///   - sort: The order.
    ///   - sectionKey: The attribute grouping rows into sections.
    ///   - sectionOffset: The shift of every reported section index.
    ///   - limit: The most rows to show.
    ///   - metricsFactory: Where its commit-to-diff latency goes; the global factory by default.
    /// - Throws: ``RouteError`` when no route matches; ``LiveResultError`` for a DATA or MANY
    ///   route; ``StoreError`` for an invalid query.
    public convenience init(engine: SQLiteReplica, path: String, method: HTTPMethod = .get,
                            where predicate: RowPredicate = .all, sort: [SortKey] = [], sectionKey: String? = nil,
                            sectionOffset: Int = 0, limit: Int? = nil,
                            metricsFactory: any MetricsFactory = MetricsSystem.factory) throws {
        try self.init(engine: engine, query: LiveQuery(path: path, method: method, routes: engine.routes,
                                                       where: predicate, sort: sort, sectionKey: sectionKey,
                                                       sectionOffset: sectionOffset, limit: limit),
                      metricsFactory: metricsFactory)
    }
}
