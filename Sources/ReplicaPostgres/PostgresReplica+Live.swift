import Foundation
import ReplicaCore

/// What keeps live result sets on a PostgreSQL replica live: its observers, which hear this
/// process's commits and, through `LISTEN`, every other process's; and its reads, on a
/// connection of their own.
extension PostgresReplica {
    /// Live result sets read on the replica's own reading connection.
    package var liveSource: any LiveRowSource { liveReader }

    /// Registers `callback` for every committed change set that touches `entities` (all when
    /// `nil`): this replica's own syncs and, through `LISTEN`, every other process's syncs into
    /// the same database. Returns once listening: a commit made after it returns is delivered.
    ///
    /// ```swift
    /// let token = await replica.addObserver(for: ["Person"], queue: .main) { changes in
    ///     print("people inserted:", changes["Person"]?.inserted.count ?? 0)
    /// }
    /// replica.removeObserver(token)
    /// ```
    ///
    /// - Returns: A token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(for entities: Set<String>? = nil, queue: DispatchQueue,
                            _ callback: @escaping @Sendable (ChangeSet) -> Void) async -> ObserverToken {
        let token = observers.add(entities: entities, queue: queue, callback)
        let observers = self.observers
        await listener.start(origin: origin, entities: schema.entities.map(\.name)) { observers.publish($0) }
        return token
    }

    /// Stops deliveries to an observer at once.
    public func removeObserver(_ token: ObserverToken) {
        observers.remove(token)
    }

    /// The committed change sets touching `entities`, from this process and every other one, as
    /// an async sequence; listening has started when it returns.
    ///
    /// ```swift
    /// for await changes in await replica.changes(for: ["Person"]) { print(changes) }
    /// ```
    public func changes(for entities: Set<String>? = nil) async -> AsyncStream<ChangeSet> {
        let (stream, continuation) = AsyncStream<ChangeSet>.makeStream(bufferingPolicy: .unbounded)
        let queue = DispatchQueue(label: "Replica.postgres.changes")
        let token = await addObserver(for: entities, queue: queue) { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in self?.removeObserver(token) }
        return stream
    }
}

extension LiveResultSet {
    /// Opens a live result set on a PostgreSQL replica (``ReplicaCore/LiveResultSet/init(store:query:)``
    /// with a `PostgresReplica`).
    ///
    /// ```swift
    /// let replica = try await PostgresReplica.open(url: "postgres://replica@db:5432/cache")
    /// let people = try await LiveResultSet(replica: replica, query: LiveQuery("Person", sort: [.ascending("name")]))
    /// ```
    ///
    /// - Throws: ``ReplicaCore/StoreError`` or ``ReplicaCore/LiveResultError``, as `init(store:query:)`.
    public convenience init(replica: PostgresReplica, query: LiveQuery) async throws {
        try await self.init(store: replica, query: query)
    }

    /// Opens a live result set on the rows a route's response speaks for, on a PostgreSQL replica.
    ///
    /// ```swift
    /// let posts = try await LiveResultSet(replica: replica, path: "/users/3/posts", sort: [.ascending("title")])
    /// ```
    ///
    /// - Throws: ``ReplicaCore/RouteError`` when no route matches; ``ReplicaCore/LiveResultError`` for a DATA
    ///   or MANY route; ``ReplicaCore/StoreError`` for an invalid query.
    public convenience init(replica: PostgresReplica, path: String, method: HTTPMethod = .get,
                            where predicate: RowPredicate = .all, sort: [SortKey] = [], sectionKey: String? = nil,
                            sectionOffset: Int = 0, limit: Int? = nil) async throws {
        try await self.init(store: replica, path: path, method: method, where: predicate, sort: sort, sectionKey: sectionKey,
                            sectionOffset: sectionOffset, limit: limit)
    }
}
