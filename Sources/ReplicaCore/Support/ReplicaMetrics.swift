/// The names of the metrics Replica records, for dashboards and for a factory's settings (a
/// Prometheus factory's histogram buckets by name). Durations are swift-metrics timers, which
/// Prometheus exports as histograms in seconds; README's "Metrics and tracing" shows each one.
///
/// ```swift
/// var factory = PrometheusMetricsFactory()
/// factory.durationHistogramBuckets[ReplicaMetrics.writeLock] = [.milliseconds(1), .milliseconds(10), .seconds(1)]
/// ```
public enum ReplicaMetrics {
    /// Timer, `route` and `outcome` (`success`, `not_modified`, `failure`): how long each sync
    /// (one routed call: every page, then the commit) took.
    public static let syncDuration = "replica_sync_duration_seconds"
    /// Counter, `route`: pages requested by syncs (304s included; a page asked again without
    /// validators counts twice).
    public static let pages = "replica_sync_pages_total"
    /// Counter, `route`: pages that answered 304 Not Modified.
    public static let notModifiedPages = "replica_sync_not_modified_pages_total"
    /// Counter, `route` and `operation` (`inserted`, `updated`, `deleted`): rows a sync's commit
    /// changed, over every entity.
    public static let rows = "replica_rows_total"
    /// Timer, `route`: how long a sync's commit held the store's write lock (SQLite's writer,
    /// PostgreSQL's table locks), from its first write to its commit.
    public static let writeLock = "replica_write_lock_seconds"
    /// Counter, `route`: requests that ``RetryInterceptor`` sent again.
    public static let retries = "replica_retries_total"
    /// Counter, `route` and `error` (the code of the ``ClientError`` or ``SyncError``, or `other`):
    /// syncs that failed, leaving the store as it was.
    public static let failures = "replica_sync_failures_total"
    /// Timer, `entity`: from the commit of a change set to the diff it caused in a
    /// ``LiveResultSet`` (the diff computed and handed to its consumers).
    public static let liveDiffLatency = "replica_live_diff_latency_seconds"
    /// Counter, `entity` and `outcome` (`confirmed`, `rejected`, `failed`): mutations of the
    /// outbox sent, and what the API made of each (`failed`: no answer that decides it).
    public static let outboxMutations = "replica_outbox_mutations_total"
    /// Gauge: mutations waiting in the outbox after the latest push.
    public static let outboxPending = "replica_outbox_pending"
    /// Gauge: mutations the API refused, waiting for a retry or a discard, after the latest push.
    public static let outboxRejected = "replica_outbox_rejected"
    /// Gauge: how long the oldest pending mutation had waited at the latest push, in seconds (0
    /// when none is pending).
    public static let outboxOldestPending = "replica_outbox_oldest_pending_seconds"
}
