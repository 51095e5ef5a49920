import CoreMetrics
import Foundation
import Metrics

/// The mutable state of one ``LiveResultSet``: its query, current snapshot, pending change sets
/// and consumers.
///
/// `@unchecked Sendable`: every mutable property is read and written only on `queue`, a serial
/// queue (the store delivers change sets on it; every public entry point hops onto it), which
/// each method that touches them checks with `dispatchPrecondition`.
final class LiveResultCore: @unchecked Sendable {
    let source: any LiveRowSource
    let queue: DispatchQueue
    /// Set once by the owner right after creation, read by delegate deliveries.
    weak var owner: LiveResultSet?
    /// Readable from any thread: delegate deliveries stop at once after ``LiveResultSet/close()``.
    let closedFlag = Latch()

    // Confined to `queue`.
    var plan: QueryPlan
    var current: ResultSnapshot
    /// The whole result of a query with a ``LiveQuery/window`` (``current`` is the window), else `nil`.
    var full: ResultSnapshot?
    /// Where the window started last time (an `around` window whose key left the result stays there).
    var lastWindowStart = 0
    /// Increases each time ``current`` changes.
    var version: UInt64 = 0
    /// The diff from version `version - 1` to `version`, for consumers exactly one step behind.
    var lastDiff: ResultDiff?
    var pending: [EntityChanges] = []
    /// When the change sets in `pending` were committed, for ``diffLatency``.
    var pendingCommits: [ContinuousClock.Instant] = []
    /// Records ``ReplicaMetrics/liveDiffLatency`` for each commit that changed the result; set
    /// once by the owner right after creation.
    var diffLatency: CoreMetrics.Timer?
    var isScheduled = false
    var needsRequery = false
    var delegateConsumer: DelegateConsumer?
    var streams: [UInt64: StreamConsumer] = [:]
    var nextStreamID: UInt64 = 1
    var statistics = LiveResultStatistics()
    var lastError: (any Error)?

    init(source: any LiveRowSource, plan: QueryPlan, queue: DispatchQueue) {
        self.source = source
        self.plan = plan
        self.queue = queue
        self.current = plan.emptySnapshot()
    }

    /// Loads the first snapshot (on `queue`).
    func load() throws {
        dispatchPrecondition(condition: .onQueue(queue))
        statistics.requeries += 1
        let base = try plan.load(source)
        if plan.query.window != nil {
            full = base
            current = try windowed(base)
        } else {
            current = base
        }
    }

    /// The window of `full` the query shows, its rows read (one query for the window's keys).
    func windowed(_ full: ResultSnapshot) throws -> ResultSnapshot {
        guard let window = plan.query.window else { return full }
        var keyPosition: Int?
        if case .around(let key, _, _) = window.kind {
            keyPosition = full.positions(of: [ExactKey(key)])[ExactKey(key)]?.flat
        }
        let range = window.range(total: full.count, keyPosition: keyPosition, previousStart: lastWindowStart)
        lastWindowStart = range.lowerBound
        var parts: [ResultSnapshot.Part] = []
        var lastSection = -1
        var keys: [AttributeValue] = []
        keys.reserveCapacity(range.count)
        for flat in range {
            let position = full.position(flat: flat)
            let entry = full.entry(position)
            keys.append(entry.key)
            if position.section == lastSection {
                parts[parts.count - 1].entries.append(entry)
            } else {
                parts.append(ResultSnapshot.Part(key: full.parts[position.section].key, entries: [entry]))
                lastSection = position.section
            }
        }
        if !full.isSectioned && parts.isEmpty { parts = [ResultSnapshot.Part(key: .null, entries: [])] }
        var table: [ExactKey: EntityRow] = [:]
        if !keys.isEmpty {
            for row in try plan.fetch(keys: keys, from: source) { table[ExactKey(row.primaryKey)] = row }
        }
        return ResultSnapshot(parts: parts, sectionOffset: plan.query.sectionOffset, isSectioned: full.isSectioned,
                              layout: plan.layout, isSorted: false, values: .resident(table),
                              windowStart: range.lowerBound, totalCount: full.count)
    }

    /// Shows another window of the result (or all of it, with `nil`) and reports the diff.
    func moveWindow(_ window: LiveWindow?) throws -> ResultDiff {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closedFlag.isSet else { throw LiveResultError(.closed, "the live result set was closed") }
        processPending()
        let whole = full ?? current
        let oldPlan = plan
        plan = plan.with(window: window)
        let next: ResultSnapshot
        do {
            next = window == nil ? whole : try windowed(whole)
        } catch {
            // The old window stays in force.
            plan = oldPlan
            throw error
        }
        full = window == nil ? nil : whole
        let diff = boundedDiff(from: current, to: next)
        advance(to: next, diff: diff)
        return diff
    }

    /// Takes a committed change set (on `queue`); bursts that arrive before processing runs are
    /// processed together.
    func receive(_ changes: ChangeSet) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closedFlag.isSet, let entityChanges = changes[plan.query.entity], !entityChanges.isEmpty else { return }
        pending.append(entityChanges)
        if let committed = changes.committedAt { pendingCommits.append(committed) }
        guard !isScheduled else { return }
        isScheduled = true
        queue.async { self.processPending() }
    }

    /// Processes the change sets received so far (on `queue`); a no-op when there are none.
    func processPending() {
        dispatchPrecondition(condition: .onQueue(queue))
        isScheduled = false
        let batch = pending
        let commits = pendingCommits
        pending = []
        pendingCommits = []
        guard !closedFlag.isSet, !batch.isEmpty else { return }
        do {
            let renamed = Self.renames(in: batch)
            if let next = try evaluate(batch, renamed: renamed) {
                advance(to: next.snapshot, diff: next.diff, renamed: renamed, committed: commits)
            }
        } catch {
            needsRequery = true
            report(error)
        }
    }

    /// Replaces the query and reports the diff from the old results to the new.
    func refresh(_ query: LiveQuery) throws -> ResultDiff {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closedFlag.isSet else { throw LiveResultError(.closed, "the live result set was closed") }
        let newPlan = try QueryPlan(query: query, source: source)
        let base = try newPlan.load(source)
        statistics.requeries += 1
        let oldPlan = plan
        plan = newPlan
        let next: ResultSnapshot
        do {
            full = query.window == nil ? nil : base
            next = try windowed(base)
        } catch {
            plan = oldPlan
            throw error
        }
        // The full read saw every commit delivered so far.
        pending = []
        pendingCommits = []
        needsRequery = false
        let diff = boundedDiff(from: current, to: next)
        advance(to: next, diff: diff)
        return diff
    }

    /// Makes `next` current and feeds consumers; `committed` are the commit instants of the change
    /// sets it shows, whose latency is recorded as the diff is handed over; `renamed` the rows
    /// they rekeyed (new key → old key), one row each in a diff computed here.
    func advance(to next: ResultSnapshot, diff: ResultDiff? = nil, renamed: [ExactKey: AttributeValue] = [:],
                 committed: [ContinuousClock.Instant] = []) {
        dispatchPrecondition(condition: .onQueue(queue))
        let diff = diff.map { bounded($0, to: next) } ?? boundedDiff(from: current, to: next, renamed: renamed)
        // An empty diff means equal snapshots: same sections, keys, positions and values.
        guard !diff.isEmpty else { return }
        current = next
        version += 1
        lastDiff = diff
        statistics.diffs += 1
        if let diffLatency, !committed.isEmpty {
            let now = ContinuousClock.now
            for instant in committed { diffLatency.record(duration: instant.duration(to: now)) }
        }
        feedConsumers()
    }

    /// The diff a consumer that has seen `snapshot` (at `seen`) needs to reach ``current``.
    func diff(since seen: UInt64, snapshot: ResultSnapshot) -> ResultDiff {
        if seen + 1 == version, let lastDiff { return lastDiff }
        statistics.catchUpDiffs += 1
        return boundedDiff(from: snapshot, to: current)
    }

    /// The diff from `old` to `new`, or a reset when it would list more changes than the query's
    /// ``LiveQuery/resetThreshold``. When the row counts alone differ by more, no diff is
    /// computed at all: a million-row import reaches its consumers as one reset, at once.
    ///
    /// Between snapshots that do not both hold their rows, the diff is always a reset (unless
    /// both are empty): without the old values, rows updated in place could not be told from
    /// unchanged ones, and none may go unreported.
    func boundedDiff(from old: ResultSnapshot, to new: ResultSnapshot, renamed: [ExactKey: AttributeValue] = [:]) -> ResultDiff {
        if let threshold = plan.query.resetThreshold, abs(old.count - new.count) > threshold {
            statistics.resets += 1
            return .reset(to: new)
        }
        if !(old.holdsRows && new.holdsRows) && !(old.isEmpty && new.isEmpty) {
            statistics.resets += 1
            return .reset(to: new)
        }
        return bounded(ResultDiff(from: old, to: new, renamed: renamed), to: new)
    }

    /// `diff`, or a reset to `new` when it lists more changes than the query's threshold.
    func bounded(_ diff: ResultDiff, to new: ResultSnapshot) -> ResultDiff {
        guard !diff.isReset, let threshold = plan.query.resetThreshold, diff.changeCount > threshold else { return diff }
        statistics.resets += 1
        return .reset(to: new)
    }

    func feedConsumers() {
        feedDelegate()
        for id in streams.keys.sorted() { feedStream(id) }
    }

    func report(_ error: any Error) {
        lastError = error
        guard let consumer = delegateConsumer, let owner else { return }
        let flag = closedFlag
        consumer.queue.async { [weak owner] in
            guard let owner, !flag.isSet, let delegate = consumer.delegate.value else { return }
            delegate.resultSet(owner, didFail: error)
        }
    }

    /// Stops everything (on `queue`): waiting iterators end.
    func shutdown() {
        dispatchPrecondition(condition: .onQueue(queue))
        pending = []
        pendingCommits = []
        delegateConsumer = nil
        let waiting = streams.values.compactMap(\.waiting)
        streams = [:]
        for continuation in waiting { continuation.resume(returning: nil) }
    }
}

/// What a live result set did, for tests and tuning.
struct LiveResultStatistics: Sendable, Hashable {
    /// Full queries (first load, refresh, re-query fallbacks).
    var requeries = 0
    /// Fetches of changed keys only.
    var keyFetches = 0
    /// Batches of change sets evaluated without any query (deletes only, rows outside the result).
    var queryFreeBatches = 0
    /// Batches of change sets processed.
    var batches = 0
    /// Change sets processed.
    var changeSets = 0
    /// Snapshots produced (each with one diff).
    var diffs = 0
    /// Snapshots and diffs derived from the changed keys alone.
    var incrementalDiffs = 0
    /// Diffs computed for consumers more than one snapshot behind (coalesced).
    var catchUpDiffs = 0
    /// Diffs replaced by resets (more changes than the query's reset threshold).
    var resets = 0
    /// Delegates set so far (identifies delegate registrations).
    var delegateGenerations: UInt64 = 0
}
