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
/// ```swift
/// let snapshot = resultSet.snapshot
/// for section in snapshot.sections { print(section.key, section.rows.count) }
/// if let path = snapshot.indexPath(of: .integer(7)) { print(snapshot.row(at: path) ?? "gone") }
/// let page = try snapshot.rows(in: 1_000 ..< 1_040)   // one query for a screenful
/// ```
public struct ResultSnapshot: Sendable, Equatable, CustomStringConvertible {
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
            self.rows = ResultRows(segments: [rows.map { SnapshotEntry(key: $0.primaryKey) }], values: .resident(table), layout: nil)
        }

        init(key: AttributeValue, rows: ResultRows) {
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

    /// One section's entries.
    struct Part: Sendable {
        var key: AttributeValue
        var entries: [SnapshotEntry]
    }

    let parts: [Part]
    /// The shift added to every reported section index.
    public let sectionOffset: Int
    /// `true` when rows are grouped by a section key.
    public let isSectioned: Bool
    /// The number of rows in all sections.
    public let count: Int
    /// The flat index of each section's first row.
    let sectionStarts: [Int]
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
    private let lookup = KeyLookup()

    /// Builds a snapshot from parts.
    init(parts: [Part], sectionOffset: Int, isSectioned: Bool, layout: SnapshotLayout?, isSorted: Bool, values: SnapshotRows,
         windowStart: Int = 0, totalCount: Int? = nil) {
        self.parts = parts
        self.sectionOffset = sectionOffset
        self.isSectioned = isSectioned
        self.layout = layout
        self.isSorted = isSorted && layout != nil
        self.values = values
        var starts: [Int] = []
        starts.reserveCapacity(parts.count)
        var flat = 0
        for part in parts {
            starts.append(flat)
            flat += part.entries.count
        }
        self.sectionStarts = starts
        self.count = flat
        self.windowStart = windowStart
        self.totalCount = totalCount ?? flat
    }

    /// Builds a snapshot from entries in order, grouping runs of equal section values (as SQLite's
    /// GROUP BY finds them equal).
    init(entries: [SnapshotEntry], layout: SnapshotLayout, sectionOffset: Int, isSorted: Bool, values: SnapshotRows) {
        var parts: [Part] = []
        if layout.sectionSlot != nil {
            var start = 0
            while start < entries.count {
                let key = layout.sectionValue(entries[start])
                var end = start + 1
                while end < entries.count, SQLiteOrdering.compare(key, layout.sectionValue(entries[end])) == 0 { end += 1 }
                parts.append(Part(key: key, entries: Array(entries[start ..< end])))
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
            for (index, entry) in section.rows.allEntries.enumerated() {
                table[ExactKey(entry.key)] = section.rows[index]
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

    // MARK: Rows

    /// `true` when the snapshot holds every row's values (at most ``LiveQuery/residentRowLimit``
    /// rows); `false` when rows are read from the store on access.
    ///
    /// ```swift
    /// let page = snapshot.holdsRows ? Array(snapshot.rows.prefix(40)) : try snapshot.rows(in: 0 ..< 40)
    /// ```
    public var holdsRows: Bool { values.isResident }

    /// The sections, in order (views of the snapshot, made on each access: keep the array when
    /// going through many).
    ///
    /// ```swift
    /// for section in snapshot.sections { print(section.key, section.rows.count) }
    /// ```
    public var sections: [Section] {
        parts.map { Section(key: $0.key, rows: ResultRows(segments: [$0.entries], values: values, layout: layout)) }
    }

    /// All rows, in order (read on access in a large snapshot).
    ///
    /// ```swift
    /// for row in snapshot.rows.prefix(10) { print(row) }
    /// ```
    public var rows: ResultRows {
        ResultRows(segments: parts.map(\.entries), values: values, layout: layout)
    }

    /// `true` when there is no row.
    public var isEmpty: Bool { count == 0 }

    /// `true` when the snapshot shows part of a larger result (a ``LiveQuery/window``).
    var isWindowed: Bool { windowStart != 0 || totalCount != count }

    /// The position of flat index `flat` (0 ≤ flat < count).
    func position(flat: Int) -> Position {
        var low = 0
        var high = sectionStarts.count
        while low < high {
            let mid = (low + high) / 2
            if sectionStarts[mid] <= flat { low = mid + 1 } else { high = mid }
        }
        let section = max(0, low - 1)
        return Position(section: section, row: flat - sectionStarts[section], flat: flat)
    }

    /// The entry at a position.
    func entry(_ position: Position) -> SnapshotEntry { parts[position.section].entries[position.row] }

    /// The row of an entry of this snapshot: held, cached, read from the store, or its skeleton.
    func row(section: Int, row: Int) -> EntityRow {
        values.row(at: row, in: parts[section].entries, layout: layout)
    }

    /// The row values of `key` this snapshot knows without reading the store (held or cached).
    func knownRow(_ key: AttributeValue) -> EntityRow? {
        switch values {
        case .resident(let table): return table[ExactKey(key)]
        case .lazy(let cache): return cache.cached(key)
        }
    }

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
        guard parts.indices.contains(section), parts[section].entries.indices.contains(indexPath.row) else { return nil }
        return row(section: section, row: indexPath.row)
    }

    /// The primary key of the row at a reported index path (no read), or `nil` when there is none.
    ///
    /// ```swift
    /// let key = snapshot.key(at: ResultIndexPath(section: 0, row: 999_999))
    /// ```
    ///
    /// - Parameter indexPath: Section (offset included) and row.
    /// - Returns: The key, or `nil`.
    public func key(at indexPath: ResultIndexPath) -> AttributeValue? {
        let section = indexPath.section - sectionOffset
        guard parts.indices.contains(section), parts[section].entries.indices.contains(indexPath.row) else { return nil }
        return parts[section].entries[indexPath.row].key
    }

    /// The rows at flat indices `range` (across sections, 0 ..< ``count``), read in one query per
    /// ``LiveQuery/rowBatchSize`` rows not cached: what a view asks for a screenful.
    ///
    /// ```swift
    /// for row in try snapshot.rows(in: 0 ..< 40) { print(row) }
    /// ```
    ///
    /// - Parameter range: Flat indices, clamped to the snapshot.
    /// - Returns: The rows, in order.
    /// - Throws: ``StoreError`` when reading the store fails.
    public func rows(in range: Range<Int>) throws -> [EntityRow] {
        let range = range.clamped(to: 0 ..< count)
        guard !range.isEmpty else { return [] }
        if case .lazy(let cache) = values, let layout {
            var keys: [AttributeValue] = []
            var wanted: [SnapshotEntry] = []
            keys.reserveCapacity(range.count)
            for flat in range {
                let entry = entry(position(flat: flat))
                keys.append(entry.key)
                wanted.append(entry)
            }
            try cache.load(keys, layout: layout, entries: wanted)
        }
        return range.map { flat in
            let position = position(flat: flat)
            return row(section: position.section, row: position.row)
        }
    }

    // MARK: Typed rows

    /// Every row decoded into `type` (coding keys are attribute names), in order, as
    /// ``Store/fetch(_:from:where:arguments:sort:limit:)`` decodes them. In a large snapshot this
    /// reads every row: decode a screenful with ``decode(_:in:)`` instead.
    ///
    /// ```swift
    /// struct Post: Decodable { var id: Int; var title: String }
    /// let posts = try resultSet.snapshot.decode(Post.self)
    /// ```
    ///
    /// - Parameter type: The type.
    /// - Returns: The values, in order.
    /// - Throws: ``StoreError`` (`decoding`) for a row that does not fit, or a failed read.
    public func decode<T: Decodable>(_ type: T.Type) throws -> [T] {
        try decode(type, in: 0 ..< count)
    }

    /// The rows at flat indices `range` decoded into `type`, read in one query per batch in a
    /// large snapshot: rows decoded as they are needed.
    ///
    /// ```swift
    /// let screen = try snapshot.decode(Post.self, in: 0 ..< 40)
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type.
    ///   - range: Flat indices (across sections), clamped to the snapshot.
    /// - Returns: The values, in order.
    /// - Throws: ``StoreError`` (`decoding`) for a row that does not fit, or a failed read.
    public func decode<T: Decodable>(_ type: T.Type, in range: Range<Int>) throws -> [T] {
        try rows(in: range).map { try $0.decode(type) }
    }

    /// The row at a reported index path decoded into `type`, or `nil` when there is none.
    ///
    /// ```swift
    /// let first = try snapshot.decode(Post.self, at: ResultIndexPath(section: 0, row: 0))
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type.
    ///   - indexPath: Section (offset included) and row.
    /// - Returns: The value, or `nil`.
    /// - Throws: ``StoreError`` (`decoding`) when the row does not fit.
    public func decode<T: Decodable>(_ type: T.Type, at indexPath: ResultIndexPath) throws -> T? {
        try row(at: indexPath)?.decode(type)
    }

    // MARK: Keys and positions

    /// Every row's position, keyed by primary key (built once, on first use).
    func positionTable() -> [ExactKey: Position] {
        lookup.table {
            var positions: [ExactKey: Position] = [:]
            positions.reserveCapacity(count)
            for (s, part) in parts.enumerated() {
                let start = sectionStarts[s]
                for (r, entry) in part.entries.enumerated() {
                    positions[ExactKey(entry.key)] = Position(section: s, row: r, flat: start + r)
                }
            }
            return positions
        }
    }

    /// The positions of the rows among `keys` that this snapshot shows: one pass over the keys,
    /// without building a table of every key.
    func positions(of keys: Set<ExactKey>) -> [ExactKey: Position] {
        var found: [ExactKey: Position] = [:]
        guard !keys.isEmpty, count > 0 else { return found }
        let integers = Set(keys.compactMap { key -> Int64? in
            if case .integer(let value) = key.value { return value }
            return nil
        })
        let onlyIntegers = integers.count == keys.count
        for (s, part) in parts.enumerated() {
            let start = sectionStarts[s]
            for (r, entry) in part.entries.enumerated() {
                if onlyIntegers {
                    guard case .integer(let value) = entry.key, integers.contains(value) else { continue }
                } else if !keys.contains(ExactKey(entry.key)) {
                    continue
                }
                found[ExactKey(entry.key)] = Position(section: s, row: r, flat: start + r)
                if found.count == keys.count { return found }
            }
        }
        return found
    }

    /// The reported index path of the row with primary key `key`, or `nil` when it is not shown.
    ///
    /// ```swift
    /// let path = snapshot.indexPath(of: .integer(7))
    /// ```
    ///
    /// - Parameter key: The primary key.
    /// - Returns: Its index path (offset included). The first call builds a table of every key.
    public func indexPath(of key: AttributeValue) -> ResultIndexPath? {
        positionTable()[ExactKey(key)].map { ResultIndexPath(section: $0.section + sectionOffset, row: $0.row) }
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
                for entry in part.entries {
                    let key = ExactKey(entry.key)
                    guard let x = left[key], let y = right[key], x.isIdentical(to: y) else { return false }
                }
            }
        }
        return true
    }

    public var description: String {
        (totalCount != count || windowStart != 0 ? "rows \(windowStart)..<\(windowStart + count) of \(totalCount): " : "")
            + "\(count) rows in \(parts.count) sections: "
            + parts.map { "\($0.key) \($0.entries.map(\.key.description))" }.joined(separator: "; ")
    }
}

extension SnapshotLayout {
    /// A row holding only an entry's key (its layout's skeleton when there is a layout).
    static func keyOnly(_ entry: SnapshotEntry, layout: SnapshotLayout?) -> EntityRow {
        if let layout { return layout.skeleton(entry) }
        return EntityRow(entity: "", names: ["key"], values: [entry.key], primaryKeyIndex: 0)
    }
}

/// The rows of a section or of a whole ``ResultSnapshot``, in order: a random-access collection
/// whose rows are held (small snapshots) or read from the store in batches as they are accessed.
///
/// ```swift
/// let rows = snapshot.sections[0].rows
/// print(rows.count, rows.first as Any, rows.keys.prefix(3))
/// ```
public struct ResultRows: RandomAccessCollection, Sendable {
    /// Consecutive runs of entries (one per section); `starts[i]` is the index of run `i`'s first.
    let segments: [[SnapshotEntry]]
    let starts: [Int]
    let values: SnapshotRows
    let layout: SnapshotLayout?
    public let count: Int

    init(segments: [[SnapshotEntry]], values: SnapshotRows, layout: SnapshotLayout?) {
        let kept = segments.filter { !$0.isEmpty }
        self.segments = kept
        var starts: [Int] = []
        var total = 0
        for segment in kept {
            starts.append(total)
            total += segment.count
        }
        self.starts = starts
        self.count = total
        self.values = values
        self.layout = layout
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The segment and offset of `index`.
    private func locate(_ index: Int) -> (Int, Int) {
        if segments.count == 1 { return (0, index) }
        var low = 0
        var high = starts.count
        while low < high {
            let mid = (low + high) / 2
            if starts[mid] <= index { low = mid + 1 } else { high = mid }
        }
        return (low - 1, index - starts[low - 1])
    }

    public subscript(position: Int) -> EntityRow {
        precondition(position >= 0 && position < count, "row index \(position) out of range 0..<\(count)")
        let (segment, offset) = locate(position)
        return values.row(at: offset, in: segments[segment], layout: layout)
    }

    /// The primary keys, in order (no read).
    ///
    /// ```swift
    /// let shown = Set(snapshot.rows.keys.map(\.description))
    /// ```
    public var keys: [AttributeValue] { segments.flatMap { $0.map(\.key) } }

    /// Every entry, in order.
    var allEntries: [SnapshotEntry] { segments.count == 1 ? segments[0] : segments.flatMap { $0 } }
}
