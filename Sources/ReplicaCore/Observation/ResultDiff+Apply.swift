extension ResultDiff {
    /// Applies the diff's ``steps`` to the snapshot it was computed from, giving the new one; a
    /// reset gives its ``resetSnapshot``.
    ///
    /// ```swift
    /// let after = try update.diff.apply(to: before)   // == update.snapshot
    /// ```
    ///
    /// - Parameter snapshot: The old snapshot.
    /// - Returns: The new snapshot: the same sections, rows and values (for a snapshot that does
    ///   not hold its rows, the same keys and sort values; its rows are read on access).
    /// - Throws: ``LiveResultError/Code/mismatchedDiff`` when a step does not fit `snapshot`
    ///   (a path out of range, a key that is not there, a non-empty section deleted).
    /// - Complexity: O(n + k log k) for n rows and k changes: each section is rebuilt once.
    public func apply(to snapshot: ResultSnapshot) throws -> ResultSnapshot {
        if let reset { return reset.snapshot }
        let offset = snapshot.sectionOffset
        func fail(_ message: String) -> LiveResultError {
            LiveResultError(.mismatchedDiff, message)
        }
        var table: [ExactKey: EntityRow]?
        if case .resident(let rows) = snapshot.values { table = rows }
        let layout = snapshot.layout
        func entry(_ row: EntityRow) -> SnapshotEntry { layout?.entry(of: row) ?? SnapshotEntry(key: row.primaryKey) }

        // 1. Removals (deletes and the first half of moves), marked in the old sections.
        var removed: [Int: Set<Int>] = [:]
        let steps = self.steps
        for step in steps {
            guard case .removeRow(let key, let path, _) = step else { continue }
            let section = path.section - offset
            guard snapshot.parts.indices.contains(section) else { throw fail("no section \(path.section) for row \(path)") }
            guard path.row >= 0, path.row < snapshot.parts[section].entries.count else { throw fail("row \(path) is out of range") }
            guard snapshot.parts[section].entries.key(at: path.row).isIdentical(to: key) else { throw fail("row \(path) is not \(key)") }
            guard removed[section, default: []].insert(path.row).inserted else { throw fail("row \(path) is removed twice") }
            if case .removeRow(_, _, nil) = step { table?.removeValue(forKey: ExactKey(key)) }
        }
        var parts = snapshot.parts
        for (section, rows) in removed {
            parts[section].entries = SnapshotEntries(parts[section].entries.enumerated().filter { !rows.contains($0.offset) }.map(\.element))
        }

        // 2. Sections deleted (descending) and inserted (ascending), as the steps come.
        for step in steps {
            switch step {
            case .deleteSection(let index, let key):
                let s = index - offset
                guard parts.indices.contains(s), parts[s].key.isIdentical(to: key), parts[s].entries.isEmpty else {
                    throw fail("section \(index) (\(key)) is not there or not empty")
                }
                parts.remove(at: s)
            case .insertSection(let index, let key):
                let s = index - offset
                guard s >= 0, s <= parts.count else { throw fail("section \(index) is out of range") }
                parts.insert(ResultSnapshot.Part(key: key, entries: []), at: s)
            default:
                continue
            }
        }

        // 3. Rows inserted (inserts and the second half of moves), ascending: each section is
        //    rebuilt once, merging its kept rows with its insertions.
        var insertions: [Int: [(row: Int, entry: SnapshotEntry)]] = [:]
        for step in steps {
            guard case .insertRow(let row, let path, _) = step else { continue }
            let section = path.section - offset
            guard parts.indices.contains(section) else { throw fail("no section \(path.section) for row \(path)") }
            insertions[section, default: []].append((path.row, entry(row)))
            table?[ExactKey(row.primaryKey)] = row
        }
        for (section, inserts) in insertions {
            let kept = parts[section].entries
            var merged = SnapshotEntries()
            merged.reserveCapacity(kept.count + inserts.count)
            var next = 0
            for insert in inserts {
                guard insert.row >= 0, insert.row <= merged.count + (kept.count - next) else {
                    throw fail("row \(ResultIndexPath(section: section + offset, row: insert.row)) is out of range")
                }
                let take = insert.row - merged.count
                merged.append(contentsOf: kept[next ..< next + take])
                next += take
                merged.append(insert.entry)
            }
            merged.append(contentsOf: kept[next...])
            parts[section].entries = merged
        }

        // 4. Values replaced (a rekeyed row's under its old key).
        var updates: [Int: [Int: SnapshotEntry]] = [:]
        for update in rowUpdates {
            guard let path = update.to else { continue }
            let row = update.row
            let section = path.section - offset
            guard parts.indices.contains(section), path.row >= 0, path.row < parts[section].entries.count else {
                throw fail("row \(path) is out of range")
            }
            let shownKey = update.previousKey ?? row.primaryKey
            guard parts[section].entries.key(at: path.row).isIdentical(to: shownKey) else { throw fail("row \(path) is not \(shownKey)") }
            updates[section, default: [:]][path.row] = entry(row)
            if let previous = update.previousKey { table?.removeValue(forKey: ExactKey(previous)) }
            table?[ExactKey(row.primaryKey)] = row
        }
        for move in rowMoves {
            if let previous = move.previousKey { table?.removeValue(forKey: ExactKey(previous)) }
        }
        // Each section with updated rows is rebuilt once.
        for (section, replaced) in updates {
            let old = parts[section].entries
            var rebuilt = SnapshotEntries()
            rebuilt.reserveCapacity(old.count)
            var next = 0
            for (row, entry) in replaced.sorted(by: { $0.key < $1.key }) {
                rebuilt.append(contentsOf: old[next ..< row])
                rebuilt.append(entry)
                next = row + 1
            }
            rebuilt.append(contentsOf: old[next...])
            parts[section].entries = rebuilt
        }
        return ResultSnapshot(parts: parts, sectionOffset: offset, isSectioned: snapshot.isSectioned, layout: layout,
                              isSorted: false, values: table.map { .resident($0) } ?? snapshot.values,
                              windowStart: windowStart ?? snapshot.windowStart,
                              totalCount: totalCount ?? (snapshot.isWindowed ? snapshot.totalCount : nil))
    }
}
