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
    /// Primary key → position.
    let positions: [ExactKey: Position]

    /// Builds a snapshot from rows in order, grouping runs of equal section-key values.
    ///
    /// - Parameters:
    ///   - rows: The rows, sorted with the section key first.
    ///   - sectionIndex: The position of the section attribute in the rows' values, or `nil`.
    ///   - sectionOffset: The shift of reported section indices.
    init(rows: [EntityRow], sectionIndex: Int?, sectionOffset: Int) {
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
        self.init(sections: sections, sectionOffset: sectionOffset, isSectioned: sectionIndex != nil)
    }

    init(sections: [Section], sectionOffset: Int, isSectioned: Bool) {
        self.sections = sections
        self.sectionOffset = sectionOffset
        self.isSectioned = isSectioned
        var positions: [ExactKey: Position] = [:]
        var flat = 0
        for (s, section) in sections.enumerated() {
            for (r, row) in section.rows.enumerated() {
                positions[ExactKey(row.primaryKey)] = Position(section: s, row: r, flat: flat)
                flat += 1
            }
        }
        self.positions = positions
        self.count = flat
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
    /// - Returns: Its index path (offset included), in constant time.
    public func indexPath(of key: AttributeValue) -> ResultIndexPath? {
        positions[ExactKey(key)].map { ResultIndexPath(section: $0.section + sectionOffset, row: $0.row) }
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
