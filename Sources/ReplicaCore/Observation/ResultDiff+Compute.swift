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
    /// Rows are compared by value when both snapshots hold their rows
    /// (``ResultSnapshot/holdsRows``); between larger snapshots only their sort values are, so a
    /// row that kept its place and its sort values is not reported as updated (a live result set
    /// sends a reset instead of such a diff).
    ///
    /// - Complexity: O(n log n) in the number of rows, hashing each key once.
    public init(from old: ResultSnapshot, to new: ResultSnapshot) {
        self.init(from: old, to: new, renamed: [:])
    }

    /// The diff from `old` to `new`, where `renamed` gives the old key of each row whose key the
    /// commits in between changed (new key → old key): such a row shown in both is one row,
    /// moved or updated, with its ``RowChange/previousKey``. A rename whose new key `old` already
    /// showed, or whose old key `new` still shows, is not one: those rows are matched by key.
    init(from old: ResultSnapshot, to new: ResultSnapshot, renamed: [ExactKey: AttributeValue]) {
        self.init()
        if old.isWindowed || new.isWindowed {
            if old.windowStart != new.windowStart { windowStart = new.windowStart }
            if old.totalCount != new.totalCount { totalCount = new.totalCount }
        }
        let (oldOffset, newOffset) = (old.sectionOffset, new.sectionOffset)
        let oldPositions = old.positionTable()
        let newPositions = new.positionTable()
        // The renames that join a row only the old snapshot shows to one only the new one shows.
        var previousKeys: [ExactKey: AttributeValue] = [:]
        var renamedAway = Set<ExactKey>()
        for (to, from) in renamed where oldPositions[to] == nil && newPositions[to] != nil
            && oldPositions[ExactKey(from)] != nil && newPositions[ExactKey(from)] == nil {
            previousKeys[to] = from
            renamedAway.insert(ExactKey(from))
        }

        // Sections: the same key value is the same section; both lists follow the same order.
        var newSectionByKey: [ExactKey: Int] = [:]
        for (index, section) in new.parts.enumerated() { newSectionByKey[ExactKey(section.key)] = index }
        var matchedNew: [Int] = []
        var matchedOld: [Int] = []
        var taken = Set<Int>()
        var newToOld = [Int?](repeating: nil, count: new.parts.count)
        for (index, section) in old.parts.enumerated() {
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
        var oldToNewSection = [Int?](repeating: nil, count: old.parts.count)
        var newIsMatched = [Bool](repeating: false, count: new.parts.count)
        for index in Self.longestIncreasingSubsequence(matchedOld) {
            oldToNewSection[matchedOld[index]] = matchedNew[index]
            newIsMatched[matchedNew[index]] = true
        }
        for index in old.parts.indices.reversed() where oldToNewSection[index] == nil {
            sectionDeletes.append(SectionChange(index: index + oldOffset, key: old.parts[index].key))
        }
        for index in new.parts.indices where !newIsMatched[index] {
            sectionInserts.append(SectionChange(index: index + newOffset, key: new.parts[index].key))
        }

        // Rows of the new snapshot, in order: inserted, moved across sections, or candidates to stay.
        struct Entry {
            var key: AttributeValue
            var to: ResultIndexPath
            var position: ResultSnapshot.Position
            var old: ResultSnapshot.Position?
            var isCandidate: Bool
            var previousKey: AttributeValue?
        }
        var entries: [Entry] = []
        entries.reserveCapacity(new.count)
        var candidateRanks: [Int] = []
        var candidateEntries: [Int] = []
        for (s, section) in new.parts.enumerated() {
            for r in section.entries.indices {
                let itemKey = section.entries.key(at: r)
                let to = ResultIndexPath(section: s + newOffset, row: r)
                let here = ResultSnapshot.Position(section: s, row: r, flat: new.sectionStarts[s] + r)
                let oldKey = previousKeys.isEmpty ? nil : previousKeys[ExactKey(itemKey)]
                guard let position = oldPositions[ExactKey(oldKey ?? itemKey)] else {
                    entries.append(Entry(key: itemKey, to: to, position: here, old: nil, isCandidate: false))
                    continue
                }
                let candidate = oldToNewSection[position.section] == s
                if candidate {
                    candidateRanks.append(position.flat)
                    candidateEntries.append(entries.count)
                }
                entries.append(Entry(key: itemKey, to: to, position: here, old: position, isCandidate: candidate, previousKey: oldKey))
            }
        }
        var isStable = [Bool](repeating: false, count: entries.count)
        for index in Self.longestIncreasingSubsequence(candidateRanks) { isStable[candidateEntries[index]] = true }

        let compareValues = old.holdsRows && new.holdsRows
        let comparesEntries = old.layout != nil && old.layout?.sortAttributes == new.layout?.sortAttributes
        for (index, entry) in entries.enumerated() {
            let key = entry.key
            guard let position = entry.old else {
                rowInserts.append(RowChange(key: key, from: nil, to: entry.to, row: new.row(section: entry.position.section, row: entry.position.row)))
                continue
            }
            let from = ResultIndexPath(section: position.section + oldOffset, row: position.row)
            // Read only when needed: a large snapshot reads its rows from the store.
            func row() -> EntityRow { new.row(section: entry.position.section, row: entry.position.row) }
            if !isStable[index] {
                rowMoves.append(RowChange(key: key, from: from, to: entry.to, row: row(), previousKey: entry.previousKey))
            } else if entry.previousKey != nil {
                // A new key is a change, whatever else the row kept.
                rowUpdates.append(RowChange(key: key, from: from, to: entry.to, row: row(), previousKey: entry.previousKey))
            } else if compareValues {
                let row = row()
                if !old.row(section: position.section, row: position.row).isIdentical(to: row) {
                    rowUpdates.append(RowChange(key: key, from: from, to: entry.to, row: row))
                }
            } else if comparesEntries && !old.entry(position).isIdentical(to: new.entry(entry.position)) {
                // Its sort values changed, yet it kept its place.
                rowUpdates.append(RowChange(key: key, from: from, to: entry.to, row: row()))
            }
        }
        for (s, section) in old.parts.enumerated().reversed() {
            for r in section.entries.indices.reversed() {
                let key = ExactKey(section.entries.key(at: r))
                guard newPositions[key] == nil, !renamedAway.contains(key) else { continue }
                rowDeletes.append(RowChange(key: section.entries.key(at: r), from: ResultIndexPath(section: s + oldOffset, row: r),
                                            to: nil, row: old.row(section: s, row: r)))
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
