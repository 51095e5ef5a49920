/// The rows of a section or of a whole ``ResultSnapshot``, in order: a random-access collection
/// whose rows are held (small snapshots) or read from the store in batches as they are accessed.
/// A row whose read fails is its placeholder (key and sort values), and the snapshot's
/// ``ResultSnapshot/loadError`` records the error.
///
/// ```swift
/// let rows = snapshot.sections[0].rows
/// print(rows.count, rows.first as Any, rows.keys.prefix(3))
/// ```
public struct ResultRows: RandomAccessCollection, Sendable {
    /// Consecutive runs of entries (one per section), none empty.
    let segments: [SnapshotEntries]
    /// Where each segment starts.
    let runs: RunStarts
    let values: SnapshotRows
    let layout: SnapshotLayout?
    /// The snapshot's memo, where failed reads are recorded.
    let memo: SnapshotMemo

    init(segments: [SnapshotEntries], values: SnapshotRows, layout: SnapshotLayout?, memo: SnapshotMemo) {
        let kept = segments.filter { !$0.isEmpty }
        self.segments = kept
        self.runs = RunStarts(lengths: kept.map(\.count))
        self.values = values
        self.layout = layout
        self.memo = memo
    }

    public var count: Int { runs.total }
    public var startIndex: Int { 0 }
    public var endIndex: Int { runs.total }

    public subscript(position: Int) -> EntityRow {
        precondition(position >= 0 && position < count, "row index \(position) out of range 0..<\(count)")
        let (segment, offset) = runs.locate(position)
        return values.rowOrPlaceholder(at: offset, in: segments[segment], layout: layout, memo: memo)
    }

    /// The primary keys, in order (no read).
    ///
    /// ```swift
    /// let shown = Set(snapshot.rows.keys.map(\.description))
    /// ```
    public var keys: [AttributeValue] { segments.flatMap { segment in segment.indices.map(segment.key(at:)) } }

    /// Every entry, in order.
    var allEntries: SnapshotEntries {
        if segments.count == 1 { return segments[0] }
        var all = SnapshotEntries()
        for segment in segments { all.append(contentsOf: segment) }
        return all
    }
}
