extension ResultDiff {
    /// Applies the diff's ``steps`` to the snapshot it was computed from, giving the new one; a
    /// reset gives its ``resetSnapshot``.
    ///
    /// ```swift
    /// let after = try update.diff.apply(to: before)   // == update.snapshot
    /// ```
    ///
    /// - Parameter snapshot: The old snapshot.
    /// - Returns: The new snapshot: the same sections, rows and values.
    /// - Throws: ``LiveResultError/Code/mismatchedDiff`` when a step does not fit `snapshot`
    ///   (a path out of range, a key that is not there, a non-empty section deleted).
    public func apply(to snapshot: ResultSnapshot) throws -> ResultSnapshot {
        if let reset { return reset.snapshot }
        let offset = snapshot.sectionOffset
        var sections = snapshot.sections
        func fail(_ message: String) -> LiveResultError {
            LiveResultError(.mismatchedDiff, message)
        }
        func locate(_ path: ResultIndexPath, inserting: Bool) throws -> (Int, Int) {
            let section = path.section - offset
            guard sections.indices.contains(section) else { throw fail("no section \(path.section) for row \(path)") }
            let limit = sections[section].rows.count + (inserting ? 1 : 0)
            guard path.row >= 0, path.row < limit else { throw fail("row \(path) is out of range") }
            return (section, path.row)
        }
        for step in steps {
            switch step {
            case .removeRow(let key, let path, _):
                let (s, r) = try locate(path, inserting: false)
                guard sections[s].rows[r].primaryKey.isIdentical(to: key) else { throw fail("row \(path) is not \(key)") }
                sections[s].rows.remove(at: r)
            case .deleteSection(let index, let key):
                let s = index - offset
                guard sections.indices.contains(s), sections[s].key.isIdentical(to: key), sections[s].rows.isEmpty else {
                    throw fail("section \(index) (\(key)) is not there or not empty")
                }
                sections.remove(at: s)
            case .insertSection(let index, let key):
                let s = index - offset
                guard s >= 0, s <= sections.count else { throw fail("section \(index) is out of range") }
                sections.insert(ResultSnapshot.Section(key: key, rows: []), at: s)
            case .insertRow(let row, let path, _):
                let (s, r) = try locate(path, inserting: true)
                sections[s].rows.insert(row, at: r)
            case .updateRow(let row, let path, _):
                let (s, r) = try locate(path, inserting: false)
                guard sections[s].rows[r].primaryKey.isIdentical(to: row.primaryKey) else { throw fail("row \(path) is not \(row.primaryKey)") }
                sections[s].rows[r] = row
            }
        }
        return ResultSnapshot(sections: sections, sectionOffset: offset, isSectioned: snapshot.isSectioned)
    }
}
