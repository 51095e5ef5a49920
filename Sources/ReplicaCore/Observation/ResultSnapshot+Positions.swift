extension ResultSnapshot {
    /// Every row's position, keyed by primary key (built once, on first use).
    func positionTable() -> [ExactKey: Position] {
        memo.table {
            var positions: [ExactKey: Position] = [:]
            positions.reserveCapacity(count)
            for (s, part) in parts.enumerated() {
                let start = sectionStarts[s]
                for r in part.entries.indices {
                    positions[ExactKey(part.entries.key(at: r))] = Position(section: s, row: r, flat: start + r)
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
            let entries = part.entries
            for r in entries.indices {
                let key: AttributeValue
                if onlyIntegers {
                    guard let value = entries.integerKey(at: r), integers.contains(value) else { continue }
                    key = .integer(value)
                } else {
                    key = entries.key(at: r)
                    if !keys.contains(ExactKey(key)) { continue }
                }
                found[ExactKey(key)] = Position(section: s, row: r, flat: start + r)
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
}
