/// Turning a batch of change sets into the next snapshot: incrementally from the changed keys
/// when the result can be merged, by re-running the query when it must.
///
/// Rules, in order:
/// 1. Re-query when a change set is unknown (written behind Replica's back), after an error,
///    when the plan cannot merge (sorted by a `json` attribute, or primary keys that are
///    neither integers nor strings), or when more keys changed than
///    ``LiveResultCore/incrementalKeyLimit(for:)`` allows.
/// 2. Otherwise each key's last change in the batch decides: deleted keys are dropped without a
///    query; inserted and updated keys are fetched with `WHERE pk IN (...) AND (predicate)` (in
///    chunks of 500) and placed among the sorted rows. Without a limit, the
///    snapshot and its diff are derived from the changed keys alone
///    (``QueryPlan/incrementalUpdate(of:changedKeys:fetched:)``); otherwise the rows are merged
///    and the diff is computed from both snapshots.
/// 3. With a limit: while the previous result was not full it held every matching row, so the
///    merge is exact; when it was full, fetched rows sorting after its last row are left out, and
///    if fewer than `limit` rows remain, rows outside the window would have to enter, so the
///    query is re-run.
extension LiveResultCore {
    /// The number of changed keys above which re-running the query is cheaper than fetching them:
    /// at least 256, or half the rows shown.
    static func incrementalKeyLimit(for count: Int) -> Int { max(256, count / 2) }

    /// The next snapshot (with its diff when it was derived from the changed keys), or `nil`
    /// when the batch changes nothing shown. `renamed` is ``renames(in:)`` of the batch.
    func evaluate(_ batch: [EntityChanges], renamed: [ExactKey: AttributeValue]) throws -> (snapshot: ResultSnapshot, diff: ResultDiff?)? {
        guard let full else { return try evaluate(batch, base: current, renamed: renamed) }
        // A window: the whole result moves on, then the window is cut from it and diffed.
        guard let next = try evaluate(batch, base: full, renamed: renamed) else { return nil }
        self.full = next.snapshot
        return (try windowed(next.snapshot), nil)
    }

    /// The rows of a batch whose key changed, new key → the key before the batch (a row rekeyed
    /// twice in one batch maps to its first key).
    static func renames(in batch: [EntityChanges]) -> [ExactKey: AttributeValue] {
        var renamed: [ExactKey: AttributeValue] = [:]
        for changes in batch {
            for change in changes.rekeyed {
                let first = renamed.removeValue(forKey: ExactKey(change.from)) ?? change.from
                renamed[ExactKey(change.to)] = first
            }
        }
        return renamed
    }

    /// The next state of `base` (the current snapshot, or the whole result of a window).
    func evaluate(_ batch: [EntityChanges], base current: ResultSnapshot,
                  renamed: [ExactKey: AttributeValue]) throws -> (snapshot: ResultSnapshot, diff: ResultDiff?)? {
        statistics.batches += 1
        statistics.changeSets += batch.count
        if needsRequery || !plan.canMerge || batch.contains(where: \.isUnknown) { return (try requery(), nil) }
        let keyLimit = Self.incrementalKeyLimit(for: current.count)
        // A million-row import needs no table of its keys to know it is too many.
        let listed = batch.reduce(0) { $0 + $1.inserted.count + $1.updated.count + $1.deleted.count }
        if listed > 4 * keyLimit { return (try requery(), nil) }

        // The last change of each key decides whether it is gone or must be read.
        var isDeleted: [ExactKey: Bool] = [:]
        for changes in batch {
            for key in changes.inserted { isDeleted[ExactKey(key)] = false }
            for key in changes.updated { isDeleted[ExactKey(key)] = false }
            for key in changes.deleted { isDeleted[ExactKey(key)] = true }
            // A rekeyed row left its old key and is read under its new one.
            for change in changes.rekeyed {
                isDeleted[ExactKey(change.from)] = true
                isDeleted[ExactKey(change.to)] = false
            }
        }
        if isDeleted.count > keyLimit { return (try requery(), nil) }
        let fetchKeys = isDeleted.filter { !$0.value }.map(\.key.value)
        // One pass over the shown keys finds the changed ones.
        let shown = current.positions(of: Set(isDeleted.keys))
        if fetchKeys.isEmpty && shown.isEmpty {
            statistics.queryFreeBatches += 1
            return nil
        }

        var fetched: [EntityRow] = []
        if fetchKeys.isEmpty {
            statistics.queryFreeBatches += 1
        } else {
            fetched = try plan.fetch(keys: fetchKeys, from: source)
            statistics.keyFetches += 1
        }
        // Then the cache of large snapshots: fresh values for rows still shown, others dropped
        // (after the update, which reads the old values it holds).
        defer {
            let kept = Set(fetched.map { ExactKey($0.primaryKey) })
            plan.cache.refresh(fetched, removing: isDeleted.keys.filter { !kept.contains($0) }.map(\.value))
        }
        if let (snapshot, diff) = plan.incrementalUpdate(of: current, changed: isDeleted, shown: shown, fetched: fetched, renamed: renamed) {
            statistics.incrementalDiffs += 1
            return (snapshot, diff)
        }
        // Limited queries merge rows; a snapshot that does not hold its rows is read again.
        guard current.holdsRows else { return (try requery(), nil) }
        let old = Array(current.rows)
        let base = shown.isEmpty ? old : old.filter { isDeleted[ExactKey($0.primaryKey)] == nil }
        guard let limit = plan.query.limit else { return (plan.snapshot(plan.merge(base, fetched)), nil) }
        guard old.count >= limit else { return (plan.snapshot(Array(plan.merge(base, fetched).prefix(limit))), nil) }
        guard let boundary = old.last else { return nil }   // limit 0
        let entering = fetched.filter { plan.order.compare($0, boundary) <= 0 }
        let merged = plan.merge(base, entering)
        if merged.count < limit { return (try requery(), nil) }
        return (plan.snapshot(Array(merged.prefix(limit))), nil)
    }

    /// Re-runs the whole query.
    func requery() throws -> ResultSnapshot {
        statistics.requeries += 1
        let snapshot = try plan.load(source)
        needsRequery = false
        return snapshot
    }
}
