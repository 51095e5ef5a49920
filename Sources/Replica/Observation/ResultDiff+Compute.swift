extension ResultDiff {
    /// The diff from `old` to `new`, matching rows by primary key and sections by key value,
    /// with the fewest moves (the stable rows are a longest increasing subsequence).
    ///
    /// ```swift
    /// let diff = ResultDiff(from: before, to: after)
    /// #expect(try diff.apply(to: before) == after)
    /// ```
    ///
    /// - Parameters:
    ///   - old: The earlier snapshot.
    ///   - new: The later snapshot.
    /// - Complexity: O(n log n) in the number of rows, hashing each key once.
    public init(from old: ResultSnapshot, to new: ResultSnapshot) {
        self.init()
        let (oldOffset, newOffset) = (old.sectionOffset, new.sectionOffset)
        let oldPositions = old.positionTable()
        let newPositions = new.positionTable()

        // Sections: the same key value is the same section; both lists follow the same order.
        var newSectionByKey: [ExactKey: Int] = [:]
        for (index, section) in new.sections.enumerated() { newSectionByKey[ExactKey(section.key)] = index }
        var matchedNew: [Int] = []
        var matchedOld: [Int] = []
        var taken = Set<Int>()
        var newToOld = [Int?](repeating: nil, count: new.sections.count)
        for (index, section) in old.sections.enumerated() {
            if let match = newSectionByKey[ExactKey(section.key)], taken.insert(match).inserted { newToOld[match] = index }
        }
        for (index, oldIndex) in newToOld.enumerated() {
            if let oldIndex {
                matchedNew.append(index)
                matchedOld.append(oldIndex)
            }
        }
        // A new sort may reorder sections: only sections keeping their relative order persist;
        // the others are deleted and inserted again (their rows then move).
        var oldToNewSection = [Int?](repeating: nil, count: old.sections.count)
        var newIsMatched = [Bool](repeating: false, count: new.sections.count)
        for index in Self.longestIncreasingSubsequence(matchedOld) {
            oldToNewSection[matchedOld[index]] = matchedNew[index]
            newIsMatched[matchedNew[index]] = true
        }
        for index in old.sections.indices.reversed() where oldToNewSection[index] == nil {
            sectionDeletes.append(SectionChange(index: index + oldOffset, key: old.sections[index].key))
        }
        for index in new.sections.indices where !newIsMatched[index] {
            sectionInserts.append(SectionChange(index: index + newOffset, key: new.sections[index].key))
        }

        // Rows of the new snapshot, in order: inserted, moved across sections, or candidates to stay.
        struct Entry {
            var row: EntityRow
            var to: ResultIndexPath
            var old: ResultSnapshot.Position?
            var isCandidate: Bool
        }
        var entries: [Entry] = []
        entries.reserveCapacity(new.count)
        var candidateRanks: [Int] = []
        var candidateEntries: [Int] = []
        for (s, section) in new.sections.enumerated() {
            for (r, row) in section.rows.enumerated() {
                let to = ResultIndexPath(section: s + newOffset, row: r)
                guard let position = oldPositions[ExactKey(row.primaryKey)] else {
                    entries.append(Entry(row: row, to: to, old: nil, isCandidate: false))
                    continue
                }
                let candidate = oldToNewSection[position.section] == s
                if candidate {
                    candidateRanks.append(position.flat)
                    candidateEntries.append(entries.count)
                }
                entries.append(Entry(row: row, to: to, old: position, isCandidate: candidate))
            }
        }
        var isStable = [Bool](repeating: false, count: entries.count)
        for index in Self.longestIncreasingSubsequence(candidateRanks) { isStable[candidateEntries[index]] = true }

        for (index, entry) in entries.enumerated() {
            let key = entry.row.primaryKey
            guard let position = entry.old else {
                rowInserts.append(RowChange(key: key, from: nil, to: entry.to, row: entry.row))
                continue
            }
            let from = ResultIndexPath(section: position.section + oldOffset, row: position.row)
            if !isStable[index] {
                rowMoves.append(RowChange(key: key, from: from, to: entry.to, row: entry.row))
            } else if !old.sections[position.section].rows[position.row].isIdentical(to: entry.row) {
                rowUpdates.append(RowChange(key: key, from: from, to: entry.to, row: entry.row))
            }
        }
        for (s, section) in old.sections.enumerated().reversed() {
            for (r, row) in section.rows.enumerated().reversed() where newPositions[ExactKey(row.primaryKey)] == nil {
                rowDeletes.append(RowChange(key: row.primaryKey, from: ResultIndexPath(section: s + oldOffset, row: r),
                                            to: nil, row: row))
            }
        }
    }

    /// The indices of a longest strictly increasing subsequence of `values` (patience sorting).
    static func longestIncreasingSubsequence(_ values: [Int]) -> [Int] {
        if values.isEmpty { return [] }
        var tails: [Int] = []             // index into values of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result: [Int] = []
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            result.append(cursor)
            cursor = previous[cursor]
        }
        return result.reversed()
    }
}
