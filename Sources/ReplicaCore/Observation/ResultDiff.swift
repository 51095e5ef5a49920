/// What changed from one ``ResultSnapshot`` to the next, in terms a list view applies.
///
/// Rows are identified by primary key. Each row that is in both snapshots is either *stable*
/// (same section, same order relative to the other stable rows) or *moved*; a stable row whose
/// values changed is *updated*. A moved row is never also reported as updated: its move carries
/// the new value. The diffs a ``LiveResultSet`` delivers for a commit keep every row the commit
/// did not touch stable, so only changed rows move; ``init(from:to:)``, which knows nothing of
/// commits, keeps the largest stable set (the fewest moves).
///
/// **Index paths.** Section indices include the query's section offset. `from` paths are in the
/// old snapshot, `to` paths in the new one (UIKit's batch-update convention).
///
/// **Batch form** (``changes``, and the order delegate calls arrive in): section deletes
/// (descending), row deletes (descending `from`; rows of deleted sections included), section
/// inserts (ascending), row inserts (ascending `to`), moves (ascending `to`), updates
/// (ascending `to`). Hand them to a table view's batch update as they are.
///
/// **Step form** (``steps``): each step is valid on the list as left by the previous steps:
/// 1. remove rows — deletes *and* the removal half of every move — at their `from` paths, descending;
/// 2. delete the (now empty) deleted sections, descending;
/// 3. insert the new (empty) sections, ascending;
/// 4. insert rows — inserts *and* the insertion half of every move, with the new value — at their
///    `to` paths, ascending;
/// 5. replace the values of updated rows at their `to` paths.
///
/// ``apply(to:)`` runs the steps; applied to the old snapshot it gives exactly the new one.
///
/// **Resets.** A change of more rows than the query's ``LiveQuery/resetThreshold`` (10,000 by
/// default) is reported as a *reset*, as a table view reloads its data rather than animate a
/// million rows: ``isReset`` is `true`, the diff lists no sections or rows (``changes`` and
/// ``steps`` are empty), and ``resetSnapshot`` is the new state, which ``apply(to:)`` returns.
/// A consumer never receives a row list longer than the threshold it asked for.
///
/// ```swift
/// for step in update.diff.steps {
///     switch step {
///     case .removeRow(_, let path, _): list.remove(at: path)
///     case .deleteSection(let index, _): list.removeSection(index)
///     case .insertSection(let index, _): list.insertSection(index)
///     case .insertRow(let row, let path, _): list.insert(row, at: path)
///     case .updateRow(let row, let path, _): list.replace(at: path, with: row)
///     }
/// }
/// ```
public struct ResultDiff: Sendable, Hashable, CustomStringConvertible {
    /// A section that appeared or disappeared.
    public struct SectionChange: Sendable, Hashable {
        /// The section index (offset included): in the old snapshot for deletes, the new for inserts.
        public var index: Int
        /// The section key value.
        public var key: AttributeValue
    }

    /// A row inserted, deleted, moved or updated.
    public struct RowChange: Sendable, Hashable, CustomStringConvertible {
        /// The row's primary key.
        public var key: AttributeValue
        /// Where it was in the old snapshot; `nil` for inserts.
        public var from: ResultIndexPath?
        /// Where it is in the new snapshot; `nil` for deletes.
        public var to: ResultIndexPath?
        /// The new row for inserts, moves and updates; the old row for deletes.
        public var row: EntityRow
        /// For a move or an update: the row's key in the old snapshot, when the commit changed it
        /// (a row saved locally under a temporary key took the API's key, see
        /// ``EntityChanges/rekeyed``); `nil` when the key stayed.
        ///
        /// ```swift
        /// if let old = change.previousKey { selection.replace(old, with: change.key) }
        /// ```
        public var previousKey: AttributeValue? = nil

        public var description: String {
            let name = previousKey.map { "\($0) → \(key)" } ?? key.description
            return "\(name) \(from.map(\.description) ?? "-") → \(to.map(\.description) ?? "-")"
        }
    }

    /// One change of the batch form.
    public enum Change: Sendable, Hashable {
        /// A section disappeared (old index).
        case deleteSection(SectionChange)
        /// A section appeared (new index).
        case insertSection(SectionChange)
        /// A row left (`from`, old value).
        case deleteRow(RowChange)
        /// A row entered (`to`, new value).
        case insertRow(RowChange)
        /// A row moved (`from` old, `to` new, new value).
        case moveRow(RowChange)
        /// A stable row's values changed (`from`, `to`, new value).
        case updateRow(RowChange)
    }

    /// One step of the step form; each is valid on the list left by the previous steps.
    public enum Step: Sendable, Hashable {
        /// Remove the row at `at` (a delete, or the first half of a move to `movingTo`); `key` is
        /// the row's key in the old snapshot.
        case removeRow(key: AttributeValue, at: ResultIndexPath, movingTo: ResultIndexPath?)
        /// Remove the empty section at `index`.
        case deleteSection(index: Int, key: AttributeValue)
        /// Insert an empty section at `index`.
        case insertSection(index: Int, key: AttributeValue)
        /// Insert `row` at `at` (an insert, or the second half of a move from `movedFrom`).
        case insertRow(EntityRow, at: ResultIndexPath, movedFrom: ResultIndexPath?)
        /// Replace the row at `at` with `row` (it was at `previously` in the old snapshot; its key
        /// may have changed, see ``RowChange/previousKey``).
        case updateRow(EntityRow, at: ResultIndexPath, previously: ResultIndexPath)
    }

    /// Sections deleted, by old index, descending.
    public internal(set) var sectionDeletes: [SectionChange] = []
    /// Sections inserted, by new index, ascending.
    public internal(set) var sectionInserts: [SectionChange] = []
    /// Rows deleted, by old path, descending.
    public internal(set) var rowDeletes: [RowChange] = []
    /// Rows inserted, by new path, ascending.
    public internal(set) var rowInserts: [RowChange] = []
    /// Rows moved (with their new values), by new path, ascending.
    public internal(set) var rowMoves: [RowChange] = []
    /// Stable rows whose values changed, by new path, ascending.
    public internal(set) var rowUpdates: [RowChange] = []
    /// The new snapshot of a reset, boxed so that the diff stays small to copy.
    var reset: ResetBox?
    /// For a ``LiveQuery/window``: where the window now starts in the whole result, when that
    /// moved (`nil` when it did not).
    ///
    /// ```swift
    /// if let start = update.diff.windowStart { print("now from row", start + 1) }
    /// ```
    public internal(set) var windowStart: Int?
    /// For a ``LiveQuery/window``: how many rows the whole result now has, when that changed
    /// (`nil` when it did not).
    ///
    /// ```swift
    /// if let total = update.diff.totalCount { print(total, "rows in all") }
    /// ```
    public internal(set) var totalCount: Int?

    /// `true` for a reset: too many rows changed to list them; reload from ``resetSnapshot``.
    ///
    /// ```swift
    /// if update.diff.isReset { table.reload(update.snapshot) } else { table.apply(update.diff.steps) }
    /// ```
    public var isReset: Bool { reset != nil }

    /// The whole new state of a reset (the same as the update's snapshot), `nil` for a row diff.
    ///
    /// ```swift
    /// if let fresh = update.diff.resetSnapshot { print("reload", fresh.count) }
    /// ```
    public var resetSnapshot: ResultSnapshot? { reset?.snapshot }

    /// A reset to `snapshot`: a diff that lists nothing and stands for "reload".
    static func reset(to snapshot: ResultSnapshot) -> ResultDiff {
        var diff = ResultDiff()
        diff.reset = ResetBox(snapshot: snapshot)
        return diff
    }

    /// A reset's snapshot. Equal when the snapshots are equal; hashed by their shape only.
    final class ResetBox: Sendable, Hashable {
        let snapshot: ResultSnapshot
        init(snapshot: ResultSnapshot) { self.snapshot = snapshot }
        static func == (lhs: ResetBox, rhs: ResetBox) -> Bool { lhs === rhs || lhs.snapshot == rhs.snapshot }
        func hash(into hasher: inout Hasher) {
            hasher.combine(snapshot.count)
            hasher.combine(snapshot.sections.count)
            hasher.combine(snapshot.sectionOffset)
        }
    }

    /// An empty diff; see ``init(from:to:)`` for the diff between two snapshots.
    ///
    /// ```swift
    /// let none = ResultDiff()   // none.isEmpty
    /// ```
    public init() {}

    /// `true` when nothing changed (a reset is never empty).
    public var isEmpty: Bool {
        reset == nil && windowStart == nil && totalCount == nil && sectionDeletes.isEmpty && sectionInserts.isEmpty && rowDeletes.isEmpty && rowInserts.isEmpty
            && rowMoves.isEmpty && rowUpdates.isEmpty
    }

    /// The number of changes in the batch form (0 for a reset).
    public var changeCount: Int {
        sectionDeletes.count + sectionInserts.count + rowDeletes.count + rowInserts.count + rowMoves.count + rowUpdates.count
    }

    /// The batch form: section deletes, row deletes, section inserts, row inserts, moves, updates.
    public var changes: [Change] {
        sectionDeletes.map(Change.deleteSection) + rowDeletes.map(Change.deleteRow)
            + sectionInserts.map(Change.insertSection) + rowInserts.map(Change.insertRow)
            + rowMoves.map(Change.moveRow) + rowUpdates.map(Change.updateRow)
    }

    /// The step form (see the type's documentation).
    public var steps: [Step] {
        var steps: [Step] = []
        steps.reserveCapacity(changeCount + rowMoves.count)
        var removals: [(path: ResultIndexPath, step: Step)] = []
        for change in rowDeletes {
            if let from = change.from { removals.append((from, .removeRow(key: change.key, at: from, movingTo: nil))) }
        }
        for move in rowMoves {
            if let from = move.from { removals.append((from, .removeRow(key: move.previousKey ?? move.key, at: from, movingTo: move.to))) }
        }
        steps += removals.sorted { $0.path > $1.path }.map(\.step)
        steps += sectionDeletes.map { .deleteSection(index: $0.index, key: $0.key) }
        steps += sectionInserts.map { .insertSection(index: $0.index, key: $0.key) }
        var insertions: [(path: ResultIndexPath, step: Step)] = []
        for change in rowInserts {
            if let to = change.to { insertions.append((to, .insertRow(change.row, at: to, movedFrom: nil))) }
        }
        for move in rowMoves {
            if let to = move.to { insertions.append((to, .insertRow(move.row, at: to, movedFrom: move.from))) }
        }
        steps += insertions.sorted { $0.path < $1.path }.map(\.step)
        for update in rowUpdates {
            if let to = update.to, let from = update.from { steps.append(.updateRow(update.row, at: to, previously: from)) }
        }
        return steps
    }

    public var description: String {
        if let reset { return "reset to \(reset.snapshot.count) rows" }
        var parts: [String] = []
        if let windowStart { parts.append("window starts at \(windowStart)") }
        if let totalCount { parts.append("\(totalCount) rows in all") }
        if !sectionDeletes.isEmpty { parts.append("sections -\(sectionDeletes.map(\.index))") }
        if !sectionInserts.isEmpty { parts.append("sections +\(sectionInserts.map(\.index))") }
        if !rowDeletes.isEmpty { parts.append("deleted \(rowDeletes)") }
        if !rowInserts.isEmpty { parts.append("inserted \(rowInserts)") }
        if !rowMoves.isEmpty { parts.append("moved \(rowMoves)") }
        if !rowUpdates.isEmpty { parts.append("updated \(rowUpdates)") }
        return parts.isEmpty ? "no changes" : parts.joined(separator: "; ")
    }
}
