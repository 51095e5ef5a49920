/// An immutable state of a live result: sections of rows, in order.
///
/// Without a section key there is exactly one section (key ``AttributeValue/null``), even when
/// empty; with one, there is a section per distinct key value present, and never an empty one.
/// ``sections`` is a plain array (index 0 is the first section); ``row(at:)``, ``indexPath(of:)``
/// and every diff use reported section numbers, which add the query's ``sectionOffset``.
///
/// **What a snapshot holds.** Every row's primary key and sort values (its place), always. A
/// result of at most ``LiveQuery/residentRowLimit`` rows (10,000 by default) also holds every
/// row's values: it is exact, whatever is written later. A larger one reads rows from the store
/// when they are accessed, ``LiveQuery/rowBatchSize`` rows per query, and keeps the most recently
/// read ones in a bounded cache shared with the result set's later snapshots, as Core Data faults
/// rows in batches (`fetchBatchSize`): a million-row snapshot costs about what its keys and sort
/// values cost. Such a row shows the values it has when it is read; a row deleted since it was
/// taken reads as its key and sort values, other attributes null. ``holdsRows`` tells which.
///
/// **When a read fails.** Throwing accessors (``loadRow(at:)``, ``rows(in:)``, ``decode(_:in:)``)
/// throw the ``StoreError``, which names the entity. Accessors that cannot throw (``row(at:)``,
/// the elements of ``rows`` and of each section's rows) return the row's placeholder (its key and
/// sort values, as for a deleted row) and record the error in ``loadError``.
///
/// ```swift
/// let snapshot = resultSet.snapshot
/// for section in snapshot.sections { print(section.key, section.rows.count) }
/// if let path = snapshot.indexPath(of: .integer(7)) { print(try snapshot.loadRow(at: path) ?? "gone") }
/// let page = try snapshot.rows(in: 1_000 ..< 1_040)   // one query for a screenful
/// ```
public struct ResultSnapshot: Sendable, Equatable, CustomStringConvertible {
    /// Where a row is: its section and row index (section without offset) and its flat index.
    struct Position: Sendable, Hashable {
        var section: Int
        var row: Int
        var flat: Int
    }

    /// One section's entries.
    struct Part: Sendable {
        var key: AttributeValue
        var entries: SnapshotEntries
    }

    let parts: [Part]
    /// The shift added to every reported section index.
    public let sectionOffset: Int
    /// `true` when rows are grouped by a section key.
    public let isSectioned: Bool
    /// The number of rows in all sections.
    public let count: Int
    /// Where each section starts in the flat order of rows.
    let runs: RunStarts
    /// How entries are laid out and ordered, when they come from a query plan (`nil` for a
    /// snapshot built from rows alone: its entries hold keys only).
    let layout: SnapshotLayout?
    /// `true` when the entries are sorted by ``layout`` and SQLite's order is reproducible in
    /// Swift, so that later snapshots can be derived from changed keys.
    let isSorted: Bool
    /// The row values.
    let values: SnapshotRows
    /// The position of the first row in the whole result: 0 unless the query has a
    /// ``LiveQuery/window``.
    ///
    /// ```swift
    /// print("rows \(snapshot.windowStart + 1)–\(snapshot.windowStart + snapshot.count) of \(snapshot.totalCount)")
    /// ```
    public let windowStart: Int
    /// The number of rows of the whole result: ``count`` unless the query has a
    /// ``LiveQuery/window``, which shows ``count`` of them from ``windowStart``.
    ///
    /// ```swift
    /// let atEnd = snapshot.windowStart + snapshot.count == snapshot.totalCount
    /// ```
    public let totalCount: Int
    /// What this snapshot learns after it is taken: its key table, its failed reads.
    let memo = SnapshotMemo()

    /// Builds a snapshot from parts.
    init(parts: [Part], sectionOffset: Int, isSectioned: Bool, layout: SnapshotLayout?, isSorted: Bool, values: SnapshotRows,
         windowStart: Int = 0, totalCount: Int? = nil) {
        self.parts = parts
        self.sectionOffset = sectionOffset
        self.isSectioned = isSectioned
        self.layout = layout
        self.isSorted = isSorted && layout != nil
        self.values = values
        self.runs = RunStarts(lengths: parts.map(\.entries.count))
        self.count = runs.total
        self.windowStart = windowStart
        self.totalCount = totalCount ?? runs.total
    }

    /// Builds a snapshot from entries in order, grouping runs of equal section values (as SQLite's
    /// GROUP BY finds them equal).
    init(entries: SnapshotEntries, layout: SnapshotLayout, sectionOffset: Int, isSorted: Bool, values: SnapshotRows) {
        var parts: [Part] = []
        if layout.sectionSlot != nil {
            var start = 0
            while start < entries.count {
                let key = layout.sectionValue(entries, at: start)
                var end = start + 1
                while end < entries.count, SQLiteOrdering.compare(key, layout.sectionValue(entries, at: end)) == 0 { end += 1 }
                // The sections share the load's buffer.
                parts.append(Part(key: key, entries: start == 0 && end == entries.count ? entries : SnapshotEntries(entries[start ..< end])))
                start = end
            }
        } else {
            parts = [Part(key: .null, entries: entries)]
        }
        self.init(parts: parts, sectionOffset: sectionOffset, isSectioned: layout.sectionSlot != nil, layout: layout,
                  isSorted: isSorted, values: values)
    }

    /// Builds a snapshot holding every row of `sections` (order unknown: no incremental updates).
    init(sections: [Section], sectionOffset: Int, isSectioned: Bool) {
        var table: [ExactKey: EntityRow] = [:]
        var parts: [Part] = []
        for section in sections {
            parts.append(Part(key: section.key, entries: section.rows.allEntries))
            let entries = section.rows.allEntries
            for index in entries.indices {
                table[ExactKey(entries.key(at: index))] = section.rows[index]
            }
        }
        self.init(parts: parts, sectionOffset: sectionOffset, isSectioned: isSectioned, layout: nil, isSorted: false,
                  values: .resident(table))
    }

    /// An empty snapshot of the given shape.
    static func empty(sectioned: Bool, sectionOffset: Int, layout: SnapshotLayout? = nil) -> ResultSnapshot {
        ResultSnapshot(parts: sectioned ? [] : [Part(key: .null, entries: [])], sectionOffset: sectionOffset,
                       isSectioned: sectioned, layout: layout, isSorted: layout != nil, values: .resident([:]))
    }

    /// `true` when the snapshot holds every row's values (at most ``LiveQuery/residentRowLimit``
    /// rows); `false` when rows are read from the store on access.
    ///
    /// ```swift
    /// let page = snapshot.holdsRows ? Array(snapshot.rows.prefix(40)) : try snapshot.rows(in: 0 ..< 40)
    /// ```
    public var holdsRows: Bool { values.isResident }

    /// `true` when there is no row.
    public var isEmpty: Bool { count == 0 }

    /// `true` when the snapshot shows part of a larger result (a ``LiveQuery/window``).
    var isWindowed: Bool { windowStart != 0 || totalCount != count }

    /// Exact equality: same shape, section keys and row keys in the same places; for snapshots
    /// that hold their rows, the same values byte for byte (unlike Swift's `String ==`, which
    /// equates canonically equivalent spellings); for larger ones, the same sort values.
    public static func == (lhs: ResultSnapshot, rhs: ResultSnapshot) -> Bool {
        guard lhs.sectionOffset == rhs.sectionOffset, lhs.isSectioned == rhs.isSectioned, lhs.count == rhs.count,
              lhs.windowStart == rhs.windowStart, lhs.totalCount == rhs.totalCount, lhs.parts.count == rhs.parts.count
        else { return false }
        let sameLayout = lhs.layout != nil && lhs.layout?.sortAttributes == rhs.layout?.sortAttributes
        for (a, b) in zip(lhs.parts, rhs.parts) {
            guard a.key.isIdentical(to: b.key), a.entries.count == b.entries.count else { return false }
            for (x, y) in zip(a.entries, b.entries) {
                guard sameLayout ? x.isIdentical(to: y) : x.key.isIdentical(to: y.key) else { return false }
            }
        }
        if case .resident(let left) = lhs.values, case .resident(let right) = rhs.values {
            for part in lhs.parts {
                for index in part.entries.indices {
                    let key = ExactKey(part.entries.key(at: index))
                    guard let x = left[key], let y = right[key], x.isIdentical(to: y) else { return false }
                }
            }
        }
        return true
    }

    public var description: String {
        (totalCount != count || windowStart != 0 ? "rows \(windowStart)..<\(windowStart + count) of \(totalCount): " : "")
            + "\(count) rows in \(parts.count) sections: "
            + parts.map { part in "\(part.key) \(part.entries.indices.map { part.entries.key(at: $0).description })" }.joined(separator: "; ")
    }
}
