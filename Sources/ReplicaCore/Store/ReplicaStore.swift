import Foundation

/// What every Replica store does, whichever database holds it: sync JSON in, read rows out,
/// and tell observers exactly what each commit changed.
///
/// Callers (the HTTP client, sync sessions, live result sets, the `replica` tool) hold an
/// `any ReplicaStore` and never need to know which database it is. The set of conforming types
/// is closed, as GRDB's `DatabaseWriter` is: ``SQLiteReplica`` (embedded, the fastest path) and
/// `PostgresReplica` in `ReplicaPostgres` (one replica shared by a fleet of services). A type
/// outside Replica cannot conform, because ``_internals`` has no public initializer.
///
/// Both stores read JSON through the same parser, routes and property maps, write through the
/// same driver (one transaction per sync, stale rows deleted inside the synced scope only after
/// a complete collection), and publish the exact keys each commit inserted, updated and deleted.
///
/// What every store offers beyond these requirements is written once, in extensions:
/// ``importFile(_:into:options:)``, ``sync(_:_:body:options:)``, ``importChunks(_:into:source:options:)``,
/// ``session(_:_:options:)``, ``delete(_:key:)``, ``deleteStale(_:scope:keeping:)`` and
/// ``validateFile(_:into:options:)``; `LiveResultSet(store:query:)` and
/// `ReplicaClient(store:configuration:)` take any store.
///
/// ```swift
/// func refresh(_ store: any ReplicaStore, body: Data) async throws {
///     let result = try await store.sync(.get, "/users", body: body)
///     print(result.changes)
///     let users = try await store.rows(RowQuery("User", sort: [.ascending("name")]))
/// }
/// ```
public protocol ReplicaStore: Sendable {
    /// The schema in force.
    var schema: Schema { get }
    /// Where the store is, for messages: a file path, `:memory:`, or a URL without its password.
    var location: String { get }
    /// The schema's routes.
    var routes: RouteTable { get }
    /// The property maps of every entity.
    var mapping: SchemaMapping { get }

    /// The entity named `name`.
    ///
    /// - Throws: ``StoreError`` `.unknownEntity`, listing the schema's entities.
    func requireEntity(_ name: String) throws -> Entity

    /// The rows a ``RowQuery`` selects (its predicate in SQL over attribute names, `?` placeholders),
    /// in the same order on every store.
    ///
    /// - Throws: ``StoreError``.
    func rows(_ query: RowQuery) async throws -> [EntityRow]

    /// The number of rows of `entity` matching a where-clause.
    ///
    /// - Throws: ``StoreError``.
    func count(_ entity: String, where predicate: String?, arguments: [AttributeValue]) async throws -> Int

    /// Registers `callback` for every committed change set touching `entities` (all when `nil`),
    /// delivered on `queue` in commit order. Returns once a commit made after it is delivered
    /// (on PostgreSQL: once listening); a store shared by several processes delivers theirs too.
    ///
    /// ```swift
    /// let token = await store.addObserver(for: ["Post"], queue: .main) { changes in print(changes) }
    /// store.removeObserver(token)
    /// ```
    ///
    /// - Returns: A token for ``removeObserver(_:)``.
    @discardableResult
    func addObserver(for entities: Set<String>?, queue: DispatchQueue,
                     _ callback: @escaping @Sendable (ChangeSet) -> Void) async -> ObserverToken

    /// Stops deliveries to an observer at once; safe from inside its own callback.
    func removeObserver(_ token: ObserverToken)

    /// The committed change sets touching `entities` (all when `nil`), in commit order; a
    /// store shared by several processes includes theirs.
    func changes(for entities: Set<String>?) async -> AsyncStream<ChangeSet>

    /// Makes commits by other processes visible to observers: an SQLite replica polls its file
    /// every `interval` and reports a commit it did not make as unknown changes of every entity;
    /// a PostgreSQL replica hears them through `LISTEN` already, and its monitor does nothing.
    ///
    /// ```swift
    /// let monitor = store.detectExternalChanges(every: .milliseconds(250))
    /// defer { monitor.stop() }
    /// ```
    func detectExternalChanges(every interval: Duration) -> ExternalChangeMonitor

    /// Releases what the store holds open (a PostgreSQL replica's connections); an SQLite
    /// replica's database closes when it is released, so for it this only waits for the WAL
    /// checkpoint its last commits scheduled.
    ///
    /// ```swift
    /// await store.close()
    /// ```
    func close() async

    /// Replica's machinery for this store: its front end, its write transaction, its live reads.
    /// Not for use outside Replica; only Replica's own stores can supply one.
    var _internals: ReplicaStoreInternals { get }
}

/// What a store supplies to the code all stores share (write driver, sessions, client, live
/// result sets). Opaque outside Replica: it has no public initializer, which keeps the set of
/// ``ReplicaStore`` types closed.
public struct ReplicaStoreInternals: Sendable {
    package let backend: any StoreBackend

    package init(_ backend: any StoreBackend) {
        self.backend = backend
    }
}

extension ReplicaStore {
    /// The store's shared machinery.
    package var backend: any StoreBackend { _internals.backend }
}

/// What a store implements for the code every store shares: its parser front end, one write
/// transaction, its live reads, and its errors in the user's terms. ``SQLiteReplica`` and
/// `PostgresReplica` conform, each in files named alike (`+Sync`, `+Session`, `+Live`).
package protocol StoreBackend: Sendable {
    /// The routes, property maps and parser every write goes through.
    var frontEnd: SyncFrontEnd { get }

    /// Where live result sets read rows.
    var liveSource: any LiveRowSource { get }

    /// Whether writing a body as it streams in holds the store's write lock (SQLite's single
    /// writer does; PostgreSQL copies into the connection's own temporary tables, which lock
    /// nothing). When it does, a body that pauses is staged and merged afterwards instead.
    var stagingHoldsWriteLock: Bool { get }

    /// Whether the store reads while its write transaction is open (SQLite in WAL mode,
    /// PostgreSQL): only then does a ``SyncSession`` keep one open across its pages, since the
    /// traversal reads the client's records between them. An in-memory SQLite store reads and
    /// writes on one queue: its sessions stage.
    var readsBesideWrites: Bool { get }

    /// Carries out `job` in one transaction (writes its rows, deletes what it says, writes its
    /// records), then publishes the change set to observers (and announces it, where other
    /// processes listen). Nothing is written when it throws.
    ///
    /// - Throws: ``SyncError``, or the database's own error (mapped by the driver through ``describe(_:)``).
    func perform(_ job: WriteJob) async throws -> WriteOutcome

    /// One line for an error of this store's database, naming where it is.
    func describe(_ error: any Error) -> String

    /// What the HTTP client recorded for a request URL (validators, cursor, a page's keys).
    ///
    /// - Throws: ``SyncError`` `.database` naming the store.
    func clientCacheEntry(for url: String) async throws -> ClientCache.Entry?

    /// Reads the outbox outside a write: the rows of `sql` (with `?` placeholders), each column
    /// read as `types` says; none when the store has no outbox yet.
    ///
    /// - Throws: ``SyncError`` `.database` naming the store.
    func readOutbox(_ sql: String, _ arguments: [AttributeValue], types: [AttributeType]) async throws -> [[AttributeValue]]

    /// Runs `body` while this process alone, of those sharing the store, sends its outbox; `nil`
    /// without running it when another one is sending. The hold dies with the process (a
    /// PostgreSQL session's advisory lock, an SQLite file's `flock`), so a killed sender never
    /// blocks the next one.
    ///
    /// - Throws: What `body` threw, or ``SyncError`` `.database` when the hold cannot be taken.
    func sendingOutbox<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T?

}
