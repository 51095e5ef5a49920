import Foundation
import GRDB
import ReplicaCore

/// The SQLite replica: a ``Store`` (one SQLite file, or memory) kept by the sync engine. Bytes
/// in, one committed transaction and an exact change set out.
///
/// All writes go through GRDB's single writer (a serial background queue). Each response is
/// one transaction: any error — malformed JSON at byte N, an invalid object under the `fail`
/// policy, a constraint violation, cancellation — rolls it back whole. Parsing runs on its
/// own thread, overlapping with the writes. After commit, the change set is published to
/// change observers on their own queues.
///
/// It is one of the two ``ReplicaStore``s (the other is `PostgresReplica`): syncing, sessions
/// and deletions are the protocol's, written once for both.
///
/// ```swift
/// let store = try Store(path: "blog.sqlite", schema: schema)
/// let replica = try SQLiteReplica(store: store)
/// let result = try await replica.sync(.get, "/users/3/posts", body: responseData)
/// print(result.changes["Post"]?.inserted.count ?? 0)
/// ```
public final class SQLiteReplica: Sendable {
    /// The store written to.
    public let store: Store
    /// The schema's routes.
    public let routes: RouteTable
    /// The property maps of every entity.
    public let mapping: SchemaMapping
    let planner: RowPlanner
    /// Resolving targets and parsing responses: what every store's writer shares.
    package let frontEnd: SyncFrontEnd
    let observers = ChangeObservers()
    let sequence = SequenceCounter()

    /// Creates a replica writing into `store`.
    ///
    /// ```swift
    /// let replica = try SQLiteReplica(store: Store(path: "blog.sqlite", schema: schema))
    /// ```
    ///
    /// - Parameters:
    ///   - store: The store; its schema gives the entities and routes.
    ///   - transforms: Custom transforms named by the schema's attributes.
    /// - Throws: ``RouteError`` or ``MappingError`` when the schema's routes or maps cannot be built.
    public init(store: Store, transforms: TransformRegistry = TransformRegistry()) throws {
        self.store = store
        self.frontEnd = try SyncFrontEnd(schema: store.schema, transforms: transforms)
        self.routes = frontEnd.routes
        self.mapping = frontEnd.mapping
        self.planner = frontEnd.planner
    }

    /// Opens (creating if needed) the replica in the SQLite file at `path`, checking the schema
    /// with `transforms` first (``Schema/checkOpening(in:transforms:)``): a schema that could not
    /// sync is refused before any file or table is created and before it is recorded.
    ///
    /// ```swift
    /// let replica = try SQLiteReplica(path: "blog.sqlite", schema: schema, transforms: transforms)
    /// ```
    ///
    /// - Parameters:
    ///   - path: The SQLite file.
    ///   - schema: The schema; `nil` uses the one recorded in the file.
    ///   - options: The busy timeout, and whether to open for reading only.
    ///   - transforms: Custom transforms named by the schema's attributes.
    /// - Throws: ``StoreError`` (`invalidSchema` naming the entity or attribute, and those of
    ///   ``Store/init(path:schema:options:)``), ``RouteError`` or ``MappingError``.
    public convenience init(path: String, schema: Schema? = nil, options: StoreOptions = StoreOptions(),
                            transforms: TransformRegistry = TransformRegistry()) throws {
        do {
            try schema?.checkOpening(in: .sqlite, transforms: transforms)
        } catch {
            throw StoreError(.invalidSchema, "the schema cannot open a store: \(error)", path: path)
        }
        try self.init(store: Store(path: path, schema: schema, options: options), transforms: transforms)
    }
}

/// The SQLite replica's name before PostgreSQL joined it.
@available(*, deprecated, renamed: "SQLiteReplica")
public typealias SyncEngine = SQLiteReplica

extension SQLiteReplica: ReplicaStore {
    public var schema: Schema { store.schema }
    public var location: String { store.path ?? ":memory:" }
    public var _internals: ReplicaStoreInternals { ReplicaStoreInternals(self) }

    /// The entity named `name`, or a ``StoreError`` naming the database file.
    public func requireEntity(_ name: String) throws -> Entity {
        try store.requireEntity(name)
    }

    public func rows(_ query: RowQuery) async throws -> [EntityRow] {
        try await store.rows(query)
    }

    public func count(_ entity: String, where predicate: String? = nil, arguments: [AttributeValue] = []) async throws -> Int {
        try store.count(entity, where: predicate, arguments: arguments)
    }

    /// Waits for the write-ahead log checkpoint the last commits scheduled; the database itself closes
    /// when the replica and its store are released.
    public func close() async {
        await store.checkpointer?.settle()
    }
}
