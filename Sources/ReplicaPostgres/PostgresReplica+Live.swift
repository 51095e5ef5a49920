import Foundation
import Replica

extension LiveResultSet {
    /// Opens a live result set on a PostgreSQL replica: the same snapshots and diffs as on
    /// SQLite, kept live by this process's syncs and, through `LISTEN`, by every other process
    /// syncing into the same database.
    ///
    /// ```swift
    /// let replica = try await PostgresReplica.open(url: "postgres://replica@db:5432/cache")
    /// let people = try await LiveResultSet(replica: replica, query: LiveQuery("Person", sort: [.ascending("name")]))
    /// for await update in people.updates() { print(update.snapshot.count, update.diff) }
    /// ```
    ///
    /// Its reads wait on a connection of the replica's own; reading the rows of a snapshot larger
    /// than ``LiveQuery/residentRowLimit`` may query the database, so do not read them on one of
    /// SwiftNIO's event-loop threads.
    ///
    /// - Parameters:
    ///   - replica: The replica; closing it stops the set's updates.
    ///   - query: What to show; its where-clause is SQLite's, read by PostgreSQL as
    ///     ``PostgresReplica/rows(_:)`` reads it.
    /// - Throws: ``Replica/StoreError`` for an unknown entity or attribute or SQL that PostgreSQL
    ///   refuses, or when the database cannot be read; ``Replica/LiveResultError`` for an unknown
    ///   section key.
    public convenience init(replica: PostgresReplica, query: LiveQuery) async throws {
        try await self.init(store: replica, source: replica.liveSource, query: query,
                            register: { queue, receive in await replica.addObserver(for: [query.entity], queue: queue, receive) },
                            unregister: { replica.removeObserver($0) })
    }

    /// Opens a live result set on the rows a route's response speaks for, on a PostgreSQL replica.
    ///
    /// ```swift
    /// let posts = try await LiveResultSet(replica: replica, path: "/users/3/posts", sort: [.ascending("title")])
    /// ```
    ///
    /// - Throws: ``Replica/RouteError`` when no route matches; ``Replica/LiveResultError`` for a DATA
    ///   or MANY route; ``Replica/StoreError`` for an invalid query.
    public convenience init(replica: PostgresReplica, path: String, method: HTTPMethod = .get,
                            where predicate: RowPredicate = .all, sort: [SortKey] = [], sectionKey: String? = nil,
                            sectionOffset: Int = 0, limit: Int? = nil) async throws {
        try await self.init(replica: replica, query: LiveQuery(path: path, method: method, routes: replica.routes,
                                                               where: predicate, sort: sort, sectionKey: sectionKey,
                                                               sectionOffset: sectionOffset, limit: limit))
    }
}

extension LiveResultSet {
    /// Opens a live result set on a store opened by URL (``openReplicaStore(url:schema:transforms:)``):
    /// an SQLite ``Replica/SyncEngine`` or a ``PostgresReplica``.
    ///
    /// ```swift
    /// let store = try await openReplicaStore(url: "postgres://replica@db:5432/cache")
    /// let people = try await LiveResultSet(store: store, query: LiveQuery("Person", sort: [.ascending("name")]))
    /// ```
    ///
    /// - Throws: ``Replica/StoreError`` for an invalid query, or for a store of another kind;
    ///   ``Replica/LiveResultError`` for an unknown section key.
    public convenience init(store: any ReplicaStore, query: LiveQuery) async throws {
        if let replica = store as? PostgresReplica {
            try await self.init(replica: replica, query: query)
        } else if let engine = store as? SyncEngine {
            try self.init(engine: engine, query: query)
        } else {
            throw StoreError(.unsupportedStore, "live result sets read a SyncEngine or a PostgresReplica, not \(type(of: store))",
                             path: store.location)
        }
    }
}
