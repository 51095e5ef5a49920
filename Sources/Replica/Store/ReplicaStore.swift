import Foundation

/// What every Replica store does, whichever database holds it: sync JSON in, read rows out,
/// and tell observers exactly what each commit changed.
///
/// ``SyncEngine`` is the SQLite store (embedded, the fastest path); `PostgresReplica` in
/// `ReplicaPostgres` keeps one replica in PostgreSQL for a fleet of services. Both read JSON
/// through the same parser, routes and property maps, and keep the same semantics: an upsert
/// writes a row only where its values differ, one sync is one transaction, stale rows are
/// deleted inside the synced scope only after a complete collection, and each commit's change
/// set holds the exact keys inserted, updated and deleted.
///
/// ```swift
/// func refresh(_ store: any ReplicaStore) async throws {
///     let result = try await store.sync(.get, "/users", body: body, options: SyncOptions())
///     print(result.changes)
///     let users = try await store.rows(RowQuery("User", sort: [.ascending("name")]))
/// }
/// ```
public protocol ReplicaStore: Sendable {
    /// The schema in force.
    var schema: Schema { get }
    /// Where the store is, for messages: a file path, `:memory:`, or a URL without its password.
    var location: String { get }

    /// Imports a JSON file (or standard input with path `-`) in bounded memory, in one transaction.
    ///
    /// - Throws: ``SyncError`` naming the file; the store is then exactly as before.
    func importFile(_ path: String, into target: ImportTarget, options: SyncOptions) async throws -> SyncResult

    /// Syncs one response body through the route of `path`, in one transaction.
    ///
    /// - Throws: ``SyncError``; the store is then exactly as before.
    func sync(_ method: HTTPMethod, _ path: String, body: Data, options: SyncOptions) async throws -> SyncResult

    /// Starts a sync session of `path`: pages staged one by one (a slow page holds no lock),
    /// then committed together in one transaction, or not at all.
    ///
    /// ```swift
    /// let session = try store.session(.get, "/people", options: SyncOptions())
    /// _ = try await session.stage(body: firstPage)
    /// _ = try await session.stage(body: secondPage)
    /// let result = try await session.commit(complete: true)
    /// ```
    ///
    /// - Throws: ``SyncError`` when no route matches.
    func session(_ method: HTTPMethod, _ path: String, options: SyncOptions) throws -> SyncSession

    /// Starts a sync session writing into `target` (an entity, optionally scoped, or a route).
    ///
    /// ```swift
    /// let session = try store.session(.entity("Person"), source: "people feed", options: SyncOptions())
    /// ```
    ///
    /// - Throws: ``SyncError`` when the target is unknown.
    func session(_ target: ImportTarget, source: String, options: SyncOptions) throws -> SyncSession

    /// Deletes one row (after the API deleted its object) and publishes the change set.
    ///
    /// ```swift
    /// try await store.delete("Post", key: .integer(7))
    /// ```
    ///
    /// - Throws: ``SyncError``.
    @discardableResult
    func delete(_ entity: String, key: AttributeValue) async throws -> ChangeSet

    /// The rows a ``RowQuery`` selects (its predicate in SQL over attribute names, `?` placeholders).
    ///
    /// - Throws: ``StoreError``.
    func rows(_ query: RowQuery) async throws -> [EntityRow]

    /// The number of rows of `entity` matching a where-clause.
    ///
    /// - Throws: ``StoreError``.
    func count(_ entity: String, where predicate: String?, arguments: [AttributeValue]) async throws -> Int

    /// The committed change sets touching `entities` (all when `nil`), in commit order; a
    /// store shared by several processes includes theirs.
    func changes(for entities: Set<String>?) async -> AsyncStream<ChangeSet>

    /// Releases what the store holds open (a PostgreSQL replica's connections); the SQLite
    /// engine's database closes when it is released, so this does nothing for it.
    ///
    /// ```swift
    /// await store.close()
    /// ```
    func close() async
}

extension SyncEngine: ReplicaStore {
    /// Nothing to release: the database closes when the engine and its store are released.
    public func close() async {}

    public var schema: Schema { store.schema }
    public var location: String { store.path ?? ":memory:" }

    public func rows(_ query: RowQuery) async throws -> [EntityRow] {
        try await store.rows(query)
    }

    public func count(_ entity: String, where predicate: String?, arguments: [AttributeValue]) async throws -> Int {
        try store.count(entity, where: predicate, arguments: arguments)
    }
}
