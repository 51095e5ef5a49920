/// How a file store is opened: how long it waits for another connection's lock, and whether
/// it may write at all.
///
/// Several processes may share one SQLite file (WAL). Readers never wait for a writer and
/// never take the write lock; writers take turns: one that finds another process writing
/// waits up to ``busyTimeout`` seconds for its lock, then fails with
/// ``SyncError/Code-swift.struct/busy`` (or ``StoreError/Code-swift.struct/busy`` when opening
/// must migrate) having written nothing.
///
/// ```swift
/// let reader = try Store(path: "blog.sqlite", options: StoreOptions(readOnly: true))
/// let writer = try Store(path: "blog.sqlite", schema: schema, options: StoreOptions(busyTimeout: 5))
/// ```
public struct StoreOptions: Sendable, Hashable {
    /// How long, in seconds, a write (or a migration when opening) waits for another
    /// connection's write lock before it fails; 30 s by default. ``SyncOptions/busyTimeout``
    /// overrides it for one sync. Readers wait up to this long only in SQLite's rare cases
    /// (another process recovering the file after a crash).
    public var busyTimeout: Double
    /// Opens the file for reading only: the store never takes the write lock, not even to
    /// set up WAL or record a schema, and every write fails. The file must exist, and a given
    /// schema must be the recorded one (a migration needs a writer).
    public var readOnly: Bool

    public init(busyTimeout: Double = 30, readOnly: Bool = false) {
        self.busyTimeout = busyTimeout
        self.readOnly = readOnly
    }

    /// The busy timeout as SQLite takes it: whole milliseconds, within `Int32`.
    package var busyTimeoutMilliseconds: Int32 {
        Self.milliseconds(busyTimeout)
    }

    /// `seconds` as whole milliseconds for `sqlite3_busy_timeout`: negative and NaN are 0,
    /// more than `Int32.max` ms (about 24 days) is `Int32.max`.
    package static func milliseconds(_ seconds: Double) -> Int32 {
        guard seconds.isFinite else { return seconds > 0 ? Int32.max : 0 }
        return Int32(max(0, min(seconds * 1000, Double(Int32.max))).rounded())
    }
}
