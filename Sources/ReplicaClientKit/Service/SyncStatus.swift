import Foundation
import ReplicaCore

/// Where one synced path stands: what its last sync did, its last error, when it runs next.
/// ``ReplicaService/status(of:)`` streams one each time it changes.
///
/// ```swift
/// for await status in service.status(of: "/people") {
///     print(status)   // /people: ok 3 s ago (incremental, 1 page, 12 rows: +2 ~10 -0), next in 27 s
/// }
/// ```
public struct SyncStatus: Sendable, Hashable, CustomStringConvertible {
    /// What the path is doing.
    public enum Phase: String, Sendable, Hashable {
        /// Not synced yet.
        case starting
        /// A sync is under way.
        case syncing
        /// Waiting for the next sync (``SyncStatus/nextAttempt``) or a push.
        case waiting
        /// The service has stopped: no more syncs.
        case stopped
    }

    /// What the last successful sync did.
    public struct Outcome: Sendable, Hashable {
        /// How it synced (full, incremental, or full after an expired cursor).
        public var mode: SyncMode
        /// The status of its first page that did not answer 304 (304 when all did).
        public var status: Int
        /// Pages requested, and how many answered 304.
        public var pages: Int
        public var unchangedPages: Int
        /// Objects read from the responses.
        public var objects: Int
        /// Rows inserted, updated and deleted, over every entity.
        public var inserted: Int
        public var updated: Int
        public var deleted: Int
        /// How long the sync took, request to commit.
        public var duration: Duration
    }

    /// The last failure.
    public struct Failure: Sendable, Hashable {
        /// When it happened.
        public var date: Date
        /// The error, as the user reads it (``ClientError`` and ``SyncError`` say what and where).
        public var message: String
        /// The HTTP status, when the server answered with an error.
        public var httpStatus: Int?
    }

    /// The synced path (`/people`).
    public var path: String
    public var phase: Phase
    /// When the last successful sync began (its data is at least as new as that), or `nil`.
    public var lastSuccess: Date?
    /// What the last successful sync did.
    public var lastOutcome: Outcome?
    /// The last failure (kept after later successes; ``consecutiveFailures`` says whether it is current).
    public var lastError: Failure?
    /// Failures since the last success.
    public var consecutiveFailures: Int
    /// When the next sync starts (a push or ``ReplicaClient/poke(_:)`` may start it sooner), or `nil`.
    public var nextAttempt: Date?
    /// When this status was taken.
    public var date: Date
    /// The store's outbox as of the service's latest push: local writes pending (and since when),
    /// writes the API rejected, and why the last attempt failed; `nil` for a service that sends
    /// no outbox (``ReplicaService/Outbox``) or before its first push. A change of the outbox is a
    /// change of every path's status.
    ///
    /// ```swift
    /// if let outbox = service.currentStatus(of: "/people")?.outbox, outbox.rejected > 0 { alert(outbox) }
    /// ```
    public var outbox: OutboxStatus? = nil

    /// How old the data may be as of ``date``: since the last successful sync began; `nil` before one.
    public var lag: Duration? {
        lastSuccess.map { .milliseconds(Int64((date.timeIntervalSince($0) * 1000).rounded())) }
    }

    /// One line for logs and terminals:
    /// `/people: ok 0.0 s ago (incremental, 1 page, 12 objects: +2 ~10 -0 in 8 ms), next in 30.0 s`, or
    /// `/people: failing ×3: HTTP 503 … , next in 8.0 s`; with local writes waiting, the outbox too:
    /// `…, next in 30.0 s; outbox: 2 pending (oldest 12.0 s), 0 rejected`.
    public var description: String {
        var text = "\(path): "
        if consecutiveFailures > 0, let lastError {
            text += "failing ×\(consecutiveFailures): \(lastError.message)"
        } else if let lastOutcome, let lag {
            let pages = lastOutcome.pages == 1 ? "1 page" : "\(lastOutcome.pages) pages"
            let unchanged = lastOutcome.unchangedPages > 0 ? " (\(lastOutcome.unchangedPages) not modified)" : ""
            text += "ok \(Self.seconds(lag)) ago (\(lastOutcome.mode.rawValue), \(pages)\(unchanged), \(lastOutcome.objects) objects: "
                + "+\(lastOutcome.inserted) ~\(lastOutcome.updated) -\(lastOutcome.deleted) in \(Self.milliseconds(lastOutcome.duration)))"
        } else {
            text += phase.rawValue
        }
        switch phase {
        case .stopped: text += ", stopped"
        case .syncing: text += ", syncing"
        case .starting, .waiting:
            if let nextAttempt { text += ", next in \(Self.seconds(max(0, nextAttempt.timeIntervalSince(date))))" }
        }
        if let outbox, outbox.pending > 0 || outbox.rejected > 0 {
            var counts = "\(outbox.pending) pending"
            if let age = outbox.oldestPendingAge { counts += " (oldest \(Self.seconds(age)))" }
            text += "; outbox: \(counts), \(outbox.rejected) rejected"
        }
        return text
    }

    static func seconds(_ duration: Duration) -> String {
        seconds(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    static func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }

    static func milliseconds(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return String(format: "%.0f ms", value)
    }
}

extension SyncStatus.Outcome {
    /// What `result` did, taking `duration`.
    init(_ result: CallResult, duration: Duration) {
        var inserted = 0, updated = 0, deleted = 0
        for (_, change) in result.changes.entities {
            inserted += change.inserted.count
            updated += change.updated.count
            deleted += change.deleted.count
        }
        self.init(mode: result.mode, status: result.status, pages: result.pages, unchangedPages: result.unchangedPages,
                  objects: result.sync.objectCount, inserted: inserted, updated: updated, deleted: deleted, duration: duration)
    }
}
