import Foundation

/// What one write transaction does, as the write driver decided it: the rows to write, the
/// stale rows to delete, a row to delete, the HTTP client's records. A store carries it out
/// (``StoreBackend/perform(_:)``) in one transaction of its own kind: SQLite's row writer on
/// GRDB's writer queue, PostgreSQL's write session on one connection.
package struct WriteJob: Sendable {
    /// Where the transaction's rows come from.
    package enum Rows: Sendable {
        /// None (a deletion).
        case none
        /// A response parsed as it is written; with `patience`, a wait of more than that many
        /// seconds for the next rows throws ``StreamStalled`` and rolls back (SQLite).
        case stream(ParsedStream, patience: Double?)
        /// A sync session's staged pages, handed over by the one call that commits them (the
        /// session refuses every other call until it returns).
        case staged(UncheckedBox<StagedRows>)
        /// A sync session's pages as they are parsed, then the commit's ``LiveTransaction/Ending``,
        /// which replaces the job's stale deletions, tombstones and records.
        case live(LiveTransaction)
    }

    /// Which stale rows go.
    package enum Stale: Sendable {
        /// None.
        case none
        /// The rows of the plan's stale entities whose collections the stream held complete,
        /// except those the transaction writes as top-level rows and skipped objects' keys.
        case completeCollections(SyncPlan)
        /// Decided before the transaction (a session, an explicit deletion).
        case fixed([StaleDeletion])
    }

    package var rows: Rows = .none
    package var stale: Stale = .none
    /// The entities whose top-level keys the transaction collects while writing.
    package var tracked: Set<Int> = []
    /// The entity whose written top-level keys the outcome reports.
    package var reportedEntity: Int?
    /// One row to delete by its key.
    package var deletedRow: (entity: Int, key: AttributeValue)?
    /// Rows the API says were deleted (an incremental sync's tombstones), after the rows are written.
    package var tombstones: [Tombstones] = []
    /// The HTTP client's records (validators, cursors, page keys), written beside the rows.
    package var records: [ClientCache.Record] = []
    /// Local writes to queue, and what the sender learned of queued ones.
    package var outbox = OutboxWork()
    /// What is written, for errors.
    package var source: String
    /// How long the transaction waits for another writer's lock; `nil`: the store's.
    package var busyTimeout: Double?

    package init(source: String) {
        self.source = source
    }

    /// The stale deletions to make once the rows are written, and the skipped objects' keys by
    /// entity: the one place that decides which keys a deletion keeps.
    package func deletions(after summary: ReaderSummary?, frontEnd: SyncFrontEnd) -> (deletions: [StaleDeletion], skipped: [Int: PrimaryKeys]) {
        switch stale {
        case .none:
            return ([], [:])
        case .fixed(let deletions):
            return (deletions, [:])
        case .completeCollections(let plan):
            guard let summary else { return ([], [:]) }
            // A skipped object's key still counts as seen: its row stays.
            let skipped = frontEnd.skippedKeys(summary)
            let deletions = summary.completeCollections.intersection(plan.staleEntities).sorted().map { entity in
                let kept = skipped[entity] ?? PrimaryKeys()
                return StaleDeletion(entity: entity, scope: entity == plan.targetEntity ? plan.scope : nil, keeping: kept,
                                     includesWritten: false, allWritten: kept.isEmpty)
            }
            return (deletions, skipped)
        }
    }
}

/// One entity's stale-row deletion: rows inside `scope` that are neither written as top-level
/// rows by the transaction nor among `keeping` go.
package struct StaleDeletion: Sendable {
    package var entity: Int
    /// The synced scope (the route's variables); `nil` for the whole table.
    package var scope: RouteScope?
    /// Keys that count as seen: skipped objects', vouched pages', or all a session saw.
    package var keeping: PrimaryKeys
    /// Whether `keeping` holds every top-level key the transaction writes (a session's seen
    /// keys): a store then needs no keys of its own.
    package var includesWritten: Bool
    /// Whether every key of `keeping` names a row the transaction writes (nothing vouched for,
    /// nothing skipped): a store that knows its written rows may then ignore `keeping`.
    package var allWritten: Bool

    package init(entity: Int, scope: RouteScope?, keeping: PrimaryKeys, includesWritten: Bool, allWritten: Bool) {
        self.entity = entity
        self.scope = scope
        self.keeping = keeping
        self.includesWritten = includesWritten
        self.allWritten = allWritten
    }

    /// The keys to keep besides the rows the transaction writes as top-level rows of `entity`
    /// (what a store that finds its written rows itself, as PostgreSQL's stage tables do, adds).
    package var keepingBeyondWritten: PrimaryKeys { allWritten ? PrimaryKeys() : keeping }

    /// Every key to keep, given the top-level keys the transaction wrote (SQLite's row writer).
    package func keysToKeep(written: @autoclosure () -> PrimaryKeys) -> PrimaryKeys {
        if includesWritten { return keeping }
        var keys = written()
        keys.formUnion(keeping)
        return keys
    }
}

/// Rows of one entity that the API says were deleted: each key's row goes when it is inside
/// `scope` (a route's tombstones never delete another scope's rows).
package struct Tombstones: Sendable {
    package var entity: Int
    /// The synced route's scope; `nil` for the whole table.
    package var scope: RouteScope?
    package var keys: PrimaryKeys

    package init(entity: Int, scope: RouteScope?, keys: PrimaryKeys) {
        self.entity = entity
        self.scope = scope
        self.keys = keys
    }
}

/// What a store's transaction reports back to the driver.
package struct WriteOutcome: Sendable {
    /// The committed change set (already published).
    package var changes: ChangeSet
    /// The stream's summary, for ``WriteJob/Rows/stream(_:patience:)`` jobs.
    package var summary: ReaderSummary?
    /// The skipped objects' keys by entity (from ``WriteJob/deletions(after:frontEnd:)``).
    package var skipped: [Int: PrimaryKeys]
    /// The top-level keys written of ``WriteJob/reportedEntity``.
    package var reportedKeys: PrimaryKeys
    /// How long the store's write lock was held.
    package var writeLockDuration: Duration?
    /// The mutations the job queued (``WriteJob/outbox``), numbered.
    package var queued: [Mutation] = []
    /// The mutations a local delete of the job took back (``OutboxPass/Finished/takenBack``).
    package var takenBack: [Mutation] = []

    package init(changes: ChangeSet, summary: ReaderSummary?, skipped: [Int: PrimaryKeys], reportedKeys: PrimaryKeys,
                 writeLockDuration: Duration?) {
        self.changes = changes
        self.summary = summary
        self.skipped = skipped
        self.reportedKeys = reportedKeys
        self.writeLockDuration = writeLockDuration
    }
}

extension WriteJob {
    /// The trace the store publishes the change set under: a live session's commit's, else the
    /// calling task's (read it in the task that runs the job).
    package var trace: WriteTrace? {
        if case .live(let live) = rows { return live.trace }
        return WriteTrace.current
    }

    /// Takes what a live session's commit decided: its stale deletions, tombstones and records.
    package mutating func end(with ending: LiveTransaction.Ending) {
        stale = .fixed(ending.stale)
        tombstones = ending.tombstones
        records = ending.records
        outbox = ending.outbox
    }
}
