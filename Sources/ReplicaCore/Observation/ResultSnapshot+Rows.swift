extension ResultSnapshot {
    /// All rows, in order (read on access in a large snapshot; a row whose read fails is its
    /// placeholder, and ``loadError`` records the error).
    ///
    /// ```swift
    /// for row in snapshot.rows.prefix(10) { print(row) }
    /// ```
    public var rows: ResultRows {
        ResultRows(segments: parts.map(\.entries), values: values, layout: layout, memo: memo)
    }

    /// The error of the latest failed read of this snapshot's rows, or `nil` when none failed:
    /// what tells a row that could not be read from a row deleted since.
    ///
    /// Only a large snapshot (``holdsRows`` is `false`) reads the store. Accessors that cannot
    /// throw (``row(at:)``, the elements of ``rows`` and of each section's rows, the rows of a
    /// ``ResultDiff`` computed from the snapshot) return a row whose read failed as its
    /// placeholder: its key and sort values, other attributes null, as for a deleted row. They
    /// record the error here; throwing ones (``loadRow(at:)``, ``rows(in:)``, ``decode(_:in:)``)
    /// throw it, and record it too. Nothing is cached for a failed read, so reading again retries;
    /// a later read that succeeds does not clear the error. Each snapshot has its own.
    ///
    /// ```swift
    /// let cells = (0 ..< 40).compactMap { snapshot.row(at: ResultIndexPath(section: 0, row: $0)) }
    /// if let error = snapshot.loadError { print("some rows could not be read: \(error)") }
    /// ```
    public var loadError: StoreError? { memo.loadError }

    /// The entry at a position.
    func entry(_ position: Position) -> SnapshotEntry { parts[position.section].entries[position.row] }

    /// The row of an entry of this snapshot: held, cached, read from the store, or its skeleton;
    /// its placeholder when the read fails (recorded in ``loadError``).
    func row(section: Int, row: Int) -> EntityRow {
        values.rowOrPlaceholder(at: row, in: parts[section].entries, layout: layout, memo: memo)
    }

    /// The row of an entry of this snapshot: held, cached, read from the store, or its skeleton.
    ///
    /// - Throws: ``StoreError`` naming the entity when the read fails (recorded in ``loadError``).
    func loadRow(section: Int, row: Int) throws(StoreError) -> EntityRow {
        try values.loadRow(at: row, in: parts[section].entries, layout: layout, memo: memo)
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

    /// The row at a reported index path, or `nil` when there is none. In a large snapshot this may
    /// read the store: when that read fails, it returns the row's placeholder (key and sort values,
    /// other attributes null) and records the error in ``loadError``. ``loadRow(at:)`` throws it.
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

    /// The row at a reported index path, or `nil` when there is none, reading it (with its batch)
    /// from the store in a large snapshot; throws when that read fails.
    ///
    /// ```swift
    /// do {
    ///     let row = try snapshot.loadRow(at: ResultIndexPath(section: 0, row: 5_000))
    /// } catch let error as StoreError {
    ///     print(error)   // cannot read 256 rows (keys 5001 … 5256) of 'Post' for a live result: ...
    /// }
    /// ```
    ///
    /// - Parameter indexPath: Section (offset included) and row.
    /// - Returns: The row (a row deleted since the snapshot was taken reads as its key and sort
    ///   values), or `nil` when the index path is outside the snapshot.
    /// - Throws: ``StoreError`` naming the entity and the keys read when reading the store fails;
    ///   ``loadError`` records it too.
    public func loadRow(at indexPath: ResultIndexPath) throws -> EntityRow? {
        guard let position = position(of: indexPath) else { return nil }
        return try loadRow(section: position.section, row: position.row)
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
    /// - Throws: ``StoreError`` naming the entity when reading the store fails; ``loadError``
    ///   records it too.
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
            do {
                try cache.load(keys, layout: layout, entries: wanted)
            } catch {
                memo.record(error)
                throw error
            }
        }
        return try range.map { flat in
            let position = position(flat: flat)
            return try loadRow(section: position.section, row: position.row)
        }
    }
}
