extension ResultSnapshot {
    /// One section: the section-key value its rows share, and the rows in order.
    public struct Section: Sendable {
        /// The section key value (``AttributeValue/null`` without a section key).
        public var key: AttributeValue
        /// The rows, in order (read on access in a large snapshot).
        public var rows: ResultRows

        /// Creates a section holding `rows`.
        ///
        /// ```swift
        /// let section = ResultSnapshot.Section(key: .string("draft"), rows: rows)
        /// ```
        ///
        /// - Parameters:
        ///   - key: The section key value.
        ///   - rows: The rows, in order.
        public init(key: AttributeValue, rows: [EntityRow]) {
            self.key = key
            var table: [ExactKey: EntityRow] = [:]
            for row in rows { table[ExactKey(row.primaryKey)] = row }
            self.rows = ResultRows(segments: [SnapshotEntries(rows.map { SnapshotEntry(key: $0.primaryKey) })], values: .resident(table), layout: nil,
                                   memo: SnapshotMemo())
        }

        init(key: AttributeValue, rows: ResultRows) {
            self.key = key
            self.rows = rows
        }
    }

    /// The sections, in order (views of the snapshot, made on each access: keep the array when
    /// going through many).
    ///
    /// ```swift
    /// for section in snapshot.sections { print(section.key, section.rows.count) }
    /// ```
    public var sections: [Section] {
        parts.map { Section(key: $0.key, rows: ResultRows(segments: [$0.entries], values: values, layout: layout, memo: memo)) }
    }

    /// The reported index of the section whose key is `key`, or `nil`.
    ///
    /// ```swift
    /// let drafts = snapshot.sectionIndex(of: .string("draft"))
    /// ```
    ///
    /// - Parameter key: The section key value.
    /// - Returns: The section index (offset included).
    public func sectionIndex(of key: AttributeValue) -> Int? {
        parts.firstIndex { $0.key.isIdentical(to: key) }.map { $0 + sectionOffset }
    }

    /// The flat index of each section's first row.
    var sectionStarts: [Int] { runs.starts }

    /// The position of flat index `flat` (0 ≤ flat < count).
    func position(flat: Int) -> Position {
        let (section, row) = runs.locate(flat)
        return Position(section: section, row: row, flat: flat)
    }
}

/// Where consecutive runs of rows start in their flat order: the sections of a
/// ``ResultSnapshot``, the segments of a ``ResultRows``. ``locate(_:)`` is the one search that
/// finds the run holding a flat index.
struct RunStarts: Sendable {
    /// The flat index of each run's first row.
    let starts: [Int]
    /// The number of rows in all runs.
    let total: Int

    /// The starts of runs of the given lengths, in order.
    init(lengths: [Int]) {
        var starts: [Int] = []
        starts.reserveCapacity(lengths.count)
        var total = 0
        for length in lengths {
            starts.append(total)
            total += length
        }
        self.starts = starts
        self.total = total
    }

    /// The run holding flat index `flat` (0 ≤ flat < ``total``) and the offset in it: the last run
    /// starting at or before `flat`, so that empty runs are passed over.
    func locate(_ flat: Int) -> (run: Int, offset: Int) {
        if starts.count == 1 { return (0, flat) }
        var low = 0
        var high = starts.count
        while low < high {
            let mid = (low + high) / 2
            if starts[mid] <= flat { low = mid + 1 } else { high = mid }
        }
        let run = max(0, low - 1)
        return (run, flat - starts[run])
    }
}
