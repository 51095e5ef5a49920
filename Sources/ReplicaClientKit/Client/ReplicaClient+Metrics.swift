import CoreMetrics
import Metrics
import ReplicaCore

/// The metrics of one routed call (``ReplicaMetrics``), labelled by its route pattern, never its
/// concrete path: `/users/:userID/posts` is one series however many users there are.
///
/// Metric objects are made per use from the factory, which keeps one handler per name and
/// dimensions (as swift-metrics' factories do), so a call costs a few lookups.
///
/// ```swift
/// let metrics = CallMetrics(factory: configuration.metricsFactory, route: "/people")
/// metrics.page(notModified: false)
/// ```
struct CallMetrics: Sendable {
    let factory: any MetricsFactory
    /// The route pattern.
    let route: String

    /// Counts one page requested, and whether it answered 304.
    func page(notModified: Bool) {
        Counter(label: ReplicaMetrics.pages, dimensions: [("route", route)], factory: factory).increment()
        if notModified {
            Counter(label: ReplicaMetrics.notModifiedPages, dimensions: [("route", route)], factory: factory).increment()
        }
    }

    /// Counts one request sent again by ``RetryInterceptor``.
    func retried() {
        Counter(label: ReplicaMetrics.retries, dimensions: [("route", route)], factory: factory).increment()
    }

    /// Records a call that returned `result` after `duration`: its outcome, rows and write lock.
    func succeeded(_ result: CallResult, after duration: Duration) {
        let outcome = result.notModified ? "not_modified" : "success"
        CoreMetrics.Timer(label: ReplicaMetrics.syncDuration, dimensions: [("route", route), ("outcome", outcome)],
                          factory: factory).record(duration: duration)
        let counts = Self.rowCounts(result.changes)
        for (operation, count) in [("inserted", counts.inserted), ("updated", counts.updated), ("deleted", counts.deleted)]
        where count > 0 {
            Counter(label: ReplicaMetrics.rows, dimensions: [("route", route), ("operation", operation)], factory: factory)
                .increment(by: count)
        }
        if let lock = result.sync.writeLockDuration {
            CoreMetrics.Timer(label: ReplicaMetrics.writeLock, dimensions: [("route", route)], factory: factory)
                .record(duration: lock)
        }
    }

    /// Records a call that threw `error` after `duration`.
    func failed(_ error: any Error, after duration: Duration) {
        CoreMetrics.Timer(label: ReplicaMetrics.syncDuration, dimensions: [("route", route), ("outcome", "failure")],
                          factory: factory).record(duration: duration)
        Counter(label: ReplicaMetrics.failures, dimensions: [("route", route), ("error", Self.code(of: error))],
                factory: factory).increment()
    }

    /// The rows a change set inserted, updated and deleted, over every entity.
    static func rowCounts(_ changes: ChangeSet) -> (inserted: Int, updated: Int, deleted: Int) {
        changes.entities.values.reduce((0, 0, 0)) { sum, entity in
            (sum.0 + entity.inserted.count, sum.1 + entity.updated.count, sum.2 + entity.deleted.count)
        }
    }

    /// The `error` dimension: a ``ClientError``'s or ``SyncError``'s code, else `other`.
    static func code(of error: any Error) -> String {
        if let error = error as? ClientError { return error.code.description }
        if let error = error as? SyncError { return error.code.description }
        return "other"
    }
}
