/// An immutable state of a live result: sections of rows, in order.
///
/// Without a section key there is exactly one section (key ``AttributeValue/null``), even when
/// empty; with one, there is a section per distinct key value present, and never an empty one.
/// ``sections`` is a plain array (index 0 is the first section); ``row(at:)``, ``indexPath(of:)``
/// and every diff use reported section numbers, which add the query's ``sectionOffset``.
///
/// ```swift
/// let snapshot = resultSet.snapshot
/// for section in snapshot.sections { print(section.key, section.rows.count) }
/// if let path = snapshot.indexPath(of: .integer(7)) { print(snapshot.row(at: path) ?? "gone") }
/// ```
public struct ResultSnapshot: Sendable, Equatable, CustomStringConvertible {
    /// One section: the section-key value its rows share, and the rows in order.
    public struct Section: Sendable, Hashable {
        /// The section key value (``AttributeValue/null`` without a section key).
        public var key: AttributeValue
        /// The rows, in order.
        public var rows: [EntityRow]

        /// Creates a section.
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
            self.rows = rows
        }
    }

    /// Where a row is: its section and row index (section without offset) and its flat index.
    struct Position: Sendable, Hashable {
        var section: Int
        var row: Int
        var flat: Int
    }

    /// The sections, in order.
    public let sections: [Section]
    /// The shift added to every reported section index.
    public let sectionOffset: Int
    /// `true` when rows are grouped by a section key.
    public let isSectioned: Bool
    /// The number of rows in all sections.
    public let count: Int
    /// The flat index of each section's first row.
    let sectionStarts: [Int]
    /// How a primary key is found.
    let locator: Locator

    /// Finds rows by primary key.
    enum Locator: Sendable {
        /// Key → row, in a snapshot sorted by `order` (total: it ends with the primary key), so a
        /// row's position is found by binary search. Updated incrementally: a change of k rows
        /// touches k entries.
        case sorted(RowOrder, [ExactKey: EntityRow])
        /// Key → position, for snapshots whose order is not known (built from sections).
        case table([ExactKey: Position])
    }

    /// Builds a snapshot from rows in order, grouping runs of equal section-key values.
    ///
    /// - Parameters:
    ///   - rows: The rows, sorted with the section key first.
    ///   - sectionIndex: The position of the section attribute in the rows' values, or `nil`.
    ///   - sectionOffset: The shift of reported section indices.
    ///   - order: The order `rows` are in, when it is reproducible in Swift; positions are then
    ///     found by binary search and later snapshots can be derived incrementally.
    init(rows: [EntityRow], sectionIndex: Int?, sectionOffset: Int, order: RowOrder? = nil) {
        var sections: [Section] = []
        if let sectionIndex {
            for row in rows {
                let key = row.values[sectionIndex]
                // Runs of values SQLite finds equal (as GROUP BY does).
                if let last = sections.last, SQLiteOrdering.compare(last.key, key) == 0 {
                    sections[sections.count - 1].rows.append(row)
                } else {
                    sections.append(Section(key: key, rows: [row]))
                }
            }
        } else {
            sections = [Section(key: .null, rows: rows)]
        }
        if let order {
            var keyed: [ExactKey: EntityRow] = [:]
            keyed.reserveCapacity(rows.count)
            for row in rows { keyed[ExactKey(row.primaryKey)] = row }
            self.init(sections: sections, sectionOffset: sectionOffset, isSectioned: sectionIndex != nil,
                      locator: .sorted(order, keyed))
        } else {
            self.init(sections: sections, sectionOffset: sectionOffset, isSectioned: sectionIndex != nil)
        }
    }

    /// Builds a snapshot from sections, indexing every row's position.
    init(sections: [Section], sectionOffset: Int, isSectioned: Bool) {
        var positions: [ExactKey: Position] = [:]
        positions.reserveCapacity(sections.reduce(0) { $0 + $1.rows.count })
        var flat = 0
        for (s, section) in sections.enumerated() {
            for (r, row) in section.rows.enumerated() {
                positions[ExactKey(row.primaryKey)] = Position(section: s, row: r, flat: flat)
                flat += 1
            }
        }
        self.init(sections: sections, sectionOffset: sectionOffset, isSectioned: isSectioned, locator: .table(positions))
    }

    /// Builds a snapshot from sections and a ready locator.
    init(sections: [Section], sectionOffset: Int, isSectioned: Bool, locator: Locator) {
        self.sections = sections
        self.sectionOffset = sectionOffset
        self.isSectioned = isSectioned
        var starts: [Int] = []
        starts.reserveCapacity(sections.count)
        var flat = 0
        for section in sections {
            starts.append(flat)
            flat += section.rows.count
        }
        self.sectionStarts = starts
        self.count = flat
        self.locator = locator
    }

    /// Where the row with primary key `key` is, or `nil` when it is not shown: a hash lookup, plus
    /// a binary search in a sorted snapshot.
    func position(of key: ExactKey) -> Position? {
        switch locator {
        case .table(let positions):
            return positions[key]
        case .sorted(let order, let keyed):
            guard let row = keyed[key] else { return nil }
            return position(of: row, in: order)
        }
    }

    /// `true` when the row with primary key `key` is shown.
    func contains(_ key: ExactKey) -> Bool {
        switch locator {
        case .table(let positions): return positions[key] != nil
        case .sorted(_, let keyed): return keyed[key] != nil
        }
    }

    /// The position of `row` (present in this snapshot, which is sorted by `order`).
    func position(of row: EntityRow, in order: RowOrder) -> Position? {
        // The last section whose first row does not sort after `row`.
        var low = 0
        var high = sections.count
        while low < high {
            let mid = (low + high) / 2
            if let first = sections[mid].rows.first, order.compare(first, row) <= 0 { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return nil }
        let s = low - 1
        let r = sections[s].rows.lowerBound(of: row, in: order)
        guard r < sections[s].rows.count, order.compare(sections[s].rows[r], row) == 0 else { return nil }
        return Position(section: s, row: r, flat: sectionStarts[s] + r)
    }

    /// Every row's position, keyed by primary key (for diffs between arbitrary snapshots).
    func positionTable() -> [ExactKey: Position] {
        if case .table(let positions) = locator { return positions }
        var positions: [ExactKey: Position] = [:]
        positions.reserveCapacity(count)
        for (s, section) in sections.enumerated() {
            let start = sectionStarts[s]
            for (r, row) in section.rows.enumerated() {
                positions[ExactKey(row.primaryKey)] = Position(section: s, row: r, flat: start + r)
            }
        }
        return positions
    }

    /// An empty snapshot of the given shape.
    static func empty(sectioned: Bool, sectionOffset: Int) -> ResultSnapshot {
        ResultSnapshot(rows: [], sectionIndex: sectioned ? 0 : nil, sectionOffset: sectionOffset)
    }

    /// All rows, in order.
    public var rows: [EntityRow] { sections.flatMap(\.rows) }

    /// `true` when there is no row.
    public var isEmpty: Bool { count == 0 }

    /// The row at a reported index path, or `nil` when there is none.
    ///
    /// ```swift
    /// let first = snapshot.row(at: ResultIndexPath(section: snapshot.sectionOffset, row: 0))
    /// ```
    ///
    /// - Parameter indexPath: Section (offset included) and row.
    /// - Returns: The row, or `nil`.
    public func row(at indexPath: ResultIndexPath) -> EntityRow? {
        let section = indexPath.section - sectionOffset
        guard sections.indices.contains(section), sections[section].rows.indices.contains(indexPath.row) else { return nil }
        return sections[section].rows[indexPath.row]
    }

    /// The reported index path of the row with primary key `key`, or `nil` when it is not shown.
    ///
    /// ```swift
    /// let path = snapshot.indexPath(of: .integer(7))
    /// ```
    ///
    /// - Parameter key: The primary key.
    /// - Returns: Its index path (offset included); a hash lookup and a binary search.
    public func indexPath(of key: AttributeValue) -> ResultIndexPath? {
        position(of: ExactKey(key)).map { ResultIndexPath(section: $0.section + sectionOffset, row: $0.row) }
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
        sections.firstIndex { $0.key.isIdentical(to: key) }.map { $0 + sectionOffset }
    }

    /// Exact equality: same shape, section keys and rows, values compared byte for byte (unlike
    /// Swift's `String ==`, which equates canonically equivalent spellings).
    public static func == (lhs: ResultSnapshot, rhs: ResultSnapshot) -> Bool {
        guard lhs.sectionOffset == rhs.sectionOffset, lhs.isSectioned == rhs.isSectioned,
              lhs.count == rhs.count, lhs.sections.count == rhs.sections.count else { return false }
        for (a, b) in zip(lhs.sections, rhs.sections) {
            guard a.key.isIdentical(to: b.key), a.rows.count == b.rows.count else { return false }
            for (x, y) in zip(a.rows, b.rows) where !x.isIdentical(to: y) { return false }
        }
        return true
    }

    public var description: String {
        "\(count) rows in \(sections.count) sections: "
            + sections.map { "\($0.key) \($0.rows.map(\.primaryKey.description))" }.joined(separator: "; ")
    }
}

extension Array where Element == EntityRow {
    /// The index of the first row that does not sort before `row` (rows sorted by `order`).
    func lowerBound(of row: EntityRow, in order: RowOrder) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if order.compare(self[mid], row) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
