/// What to do with an object that cannot be mapped (a value of the wrong type, a null in a non-null attribute).
public enum InvalidObjectPolicy: String, Sendable, Hashable, CaseIterable {
    /// Fail the whole response: the transaction rolls back and the store is unchanged.
    case fail
    /// Skip the object, list it in the result, and store the others.
    case skip
}

/// What to do when one response nests the same child under two parents of a one-to-many
/// relationship (a to-many with `inverse`): a child has one parent, so one of them loses it.
///
/// ```swift
/// var options = SyncOptions()
/// options.sharedChildren = .lastParentWins   // keep going; result.ignoredKeys lists them
/// ```
public enum SharedChildPolicy: String, Sendable, Hashable, CaseIterable {
    /// Fail the response, naming the child and both parents' pointers: nothing is written. A
    /// child shared by many parents is a many-to-many relationship (`through` a join table).
    case fail
    /// Store the child under the last parent that nests it, and count it in
    /// ``SyncResult/ignoredKeys`` as a ``IgnoredKey/Kind/sharedChild`` (`replica` warns).
    case lastParentWins
}

/// How far a long import has come.
public struct SyncProgress: Sendable, Hashable {
    /// Bytes of JSON read so far.
    public var bytesRead: Int64
    /// The total size when known (files), else `nil`.
    public var totalBytes: Int64?
    /// Objects mapped and written so far.
    public var objectsWritten: Int
}

/// Options of one sync or import.
///
/// ```swift
/// var options = SyncOptions()
/// options.onInvalid = .skip
/// options.stalePolicy = .delete
/// options.progress = { print($0.objectsWritten) }
/// ```
public struct SyncOptions: Sendable {
    /// Overrides the route's stale policy; `nil` uses the route's (imports by entity default to `keep`).
    public var stalePolicy: StalePolicy?
    /// What to do with objects that cannot be mapped.
    public var onInvalid: InvalidObjectPolicy
    /// Called on a background thread as the import advances (about every `progressInterval` objects).
    public var progress: (@Sendable (SyncProgress) -> Void)?
    /// How many objects pass between progress reports.
    public var progressInterval: Int
    /// The size of the chunks files are read in.
    public var chunkSize: Int
    /// Limits for the JSON parser.
    public var limits: JSONLimits
    /// Collect the keys of the response's own objects in ``SyncResult/seenKeys`` (pagination
    /// uses them to delete stale rows once the last page arrived).
    public var collectKeys: Bool
    /// Makes every key that is not stored an error that rolls the sync back (`replica import
    /// --strict`): a key matching no attribute or relationship, a MANY collection matching no
    /// entity, a key given twice in one object. Off by default: they are counted in
    /// ``SyncResult/ignoredKeys`` (and the last of a repeated key wins).
    public var strictKeys: Bool
    /// Bytes of staged rows a ``SyncSession`` keeps in memory before it spills them to an
    /// unlinked scratch file in the temporary directory (4 MiB by default).
    public var stagingMemory: Int
    /// How long, in seconds, a body that streams in (``SQLiteReplica/sync(_:_:chunks:options:)``,
    /// ``SQLiteReplica/importChunks(_:into:source:options:)``), or a ``SyncSession``'s pages (a paged
    /// HTTP call), may hold the store's writer while it waits for more rows or the next page (0.1 s
    /// by default).
    ///
    /// Such a sync writes rows as they arrive, in one transaction, as fast as a file import,
    /// for as long as the body keeps coming. When the body pauses for longer than this, the sync
    /// rolls back what it wrote, lets go of the writer (other syncs commit, readers read) and
    /// stages the rest outside the database as a ``SyncSession`` does (reading again the bytes
    /// it had, which it keeps in memory up to ``stagingMemory`` and beyond that in an unlinked
    /// scratch file); it commits in one short transaction once the body has ended. `0` stages
    /// from the start; `.infinity` never lets go of the writer while the body lasts.
    ///
    /// ```swift
    /// let slowFeed = SyncOptions(streamingPatience: 0)   // never hold the writer for this body
    /// ```
    public var streamingPatience: Double
    /// How long, in seconds, this sync's transaction waits for another process's write lock
    /// before it fails with ``SyncError/Code-swift.struct/busy``, writing nothing; `nil` (the
    /// default) uses the store's (``StoreOptions/busyTimeout``, 30 s unless opened otherwise).
    /// For SQLite the wait is for the file's write lock; for PostgreSQL, for the row and
    /// advisory locks another writer holds (`lock_timeout`).
    ///
    /// ```swift
    /// let background = SyncOptions(busyTimeout: 2)   // a periodic refresh gives up sooner
    /// ```
    public var busyTimeout: Double?
    /// How the input holds its values: one JSON value, or NDJSON (one value per line).
    /// `nil`, the default, lets ``ReplicaStore/importFile(_:into:options:)`` and
    /// ``ReplicaStore/validateFile(_:into:options:)`` go by the file's name (see
    /// ``InputFormat/init(path:)``) and reads every other input as JSON.
    ///
    /// ```swift
    /// var options = SyncOptions()
    /// options.format = .ndjson
    /// let result = try await store.importChunks(pipe, into: .entity("Event"), options: options)
    /// ```
    public var format: InputFormat?
    /// What a child nested under two parents of a one-to-many relationship in one response
    /// does: an error (the default) or the last parent keeps it (see ``SharedChildPolicy``).
    public var sharedChildren: SharedChildPolicy = .fail
    /// The most bytes of response bodies one ``SyncSession`` takes in, all its pages together
    /// (4 GiB by default): what it stages (in memory, then in scratch files in the temporary
    /// directory) or writes into its open transaction. Past it the session fails with
    /// ``SyncError/Code-swift.struct/input`` naming the limit, the page and how much had
    /// arrived, and the store is unchanged. Each single body also has
    /// ``ClientConfiguration/bodyLimits`` (1 GiB).
    ///
    /// ```swift
    /// var options = SyncOptions()
    /// options.maxStagingBytes = 16 << 30   // a 16 GiB collection in one sync
    /// ```
    public var maxStagingBytes: Int64 = 4 << 30

    public init(stalePolicy: StalePolicy? = nil, onInvalid: InvalidObjectPolicy = .fail,
                progress: (@Sendable (SyncProgress) -> Void)? = nil, progressInterval: Int = 10_000,
                chunkSize: Int = 1 << 16, limits: JSONLimits = .default, collectKeys: Bool = false,
                strictKeys: Bool = false, stagingMemory: Int = 4 << 20, streamingPatience: Double = 0.1,
                busyTimeout: Double? = nil) {
        self.stalePolicy = stalePolicy
        self.onInvalid = onInvalid
        self.progress = progress
        self.progressInterval = progressInterval
        self.chunkSize = chunkSize
        self.limits = limits
        self.collectKeys = collectKeys
        self.strictKeys = strictKeys
        self.stagingMemory = stagingMemory
        self.streamingPatience = streamingPatience
        self.busyTimeout = busyTimeout
    }
}

/// An object skipped under ``InvalidObjectPolicy/skip``: where it was and why.
public struct SkippedObject: Sendable, Hashable, CustomStringConvertible {
    /// The entity it would have been stored in.
    public var entity: String
    /// Where it is inside the response.
    public var pointer: JSONPointer
    /// Why it was skipped.
    public var reason: String
    /// Its primary key, when the object had a valid one: it still counts as seen, so
    /// stale-row deletion keeps the row stored for it (if any).
    public var key: AttributeValue?

    public init(entity: String, pointer: JSONPointer, reason: String, key: AttributeValue? = nil) {
        self.entity = entity
        self.pointer = pointer
        self.reason = reason
        self.key = key
    }

    public var description: String { "\(entity) at \(pointer.components.isEmpty ? "/" : pointer.description): \(reason)" }
}

/// The outcome of one sync or import.
public struct SyncResult: Sendable {
    /// What the transaction changed; empty for DATA routes and unchanged data.
    public var changes: ChangeSet
    /// Objects skipped under ``InvalidObjectPolicy/skip``.
    public var skipped: [SkippedObject]
    /// JSON keys that matched no attribute or relationship, and MANY collections that matched
    /// no entity, summed over all objects.
    public var ignoredKeyCount: Int
    /// Those keys by name, with a count and the pointer of their first occurrence, most frequent
    /// first (up to 64 distinct keys), and the keys objects gave twice (the last value was stored).
    public var ignoredKeys: [IgnoredKey] = []
    /// Objects read from the response (including nested ones and skipped ones).
    public var objectCount: Int
    /// Bytes of JSON read.
    public var byteCount: Int64
    /// For DATA routes, the parsed response; else `nil`.
    public var data: JSONValue?
    /// The route the response was synced through, when it came from a path.
    public var route: Route?
    /// The response without its streamed collections (emptied): the envelope's metadata
    /// such as `{"meta": {"next_cursor": "abc"}, "data": []}`; `nil` for DATA routes.
    public var metadata: JSONValue?
    /// With ``SyncOptions/collectKeys``: the keys of the response's own objects (not nested ones).
    public var seenKeys: PrimaryKeys
    /// The scope the response was synced into.
    public var scope: RouteScope?
    /// How long the write transaction held the store's writer (from its first statement to
    /// its commit); `nil` when nothing was written.
    public var writeLockDuration: Duration?
    /// Whether a streamed body paused for longer than ``SyncOptions/streamingPatience`` while it
    /// was being written, so that the sync rolled back and staged it instead (see
    /// ``SQLiteReplica/sync(_:_:chunks:options:)``).
    ///
    /// ```swift
    /// if result.stagedAfterPause { log.info("slow body: staged") }
    /// ```
    public var stagedAfterPause = false

    public init(changes: ChangeSet, skipped: [SkippedObject], ignoredKeyCount: Int, objectCount: Int, byteCount: Int64,
                data: JSONValue?, route: Route?, metadata: JSONValue?, seenKeys: PrimaryKeys, scope: RouteScope?,
                writeLockDuration: Duration? = nil) {
        self.changes = changes
        self.skipped = skipped
        self.ignoredKeyCount = ignoredKeyCount
        self.objectCount = objectCount
        self.byteCount = byteCount
        self.data = data
        self.route = route
        self.metadata = metadata
        self.seenKeys = seenKeys
        self.scope = scope
        self.writeLockDuration = writeLockDuration
    }
}
