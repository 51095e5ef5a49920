extension ResultSnapshot {
    /// All rows, in order (read on access in a large snapshot).
    ///
    /// ```swift
    /// for row in snapshot.rows.prefix(10) { print(row) }
    /// ```
    public var rows: ResultRows {
        ResultRows(segments: parts.map(\.entries), values: values, layout: layout)
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

    /// The position of a reported index path, or `nil` when there is no row there.
    func position(of indexPath: ResultIndexPath) -> Position? {
        let section = indexPath.section - sectionOffset
        guard parts.indices.contains(section), parts[section].entries.indices.contains(indexPath.row) else { return nil }
        return Position(section: section, row: indexPath.row, flat: sectionStarts[section] + indexPath.row)
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
        position(of: indexPath).map { row(section: $0.section, row: $0.row) }
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
        position(of: indexPath).map { entry($0).key }
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
}
