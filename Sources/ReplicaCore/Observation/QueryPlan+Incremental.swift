/// Deriving the next snapshot and its diff from the changed keys alone.
///
/// The rows a change set did not touch keep their values, their section and their order relative
/// to each other, so they are all stable: only the changed rows need placing. The cost follows
/// the number of changed rows (hash lookups and binary searches) plus copying the arrays of the
/// sections they touch, never comparing or hashing the untouched rows.
///
/// A changed row still shown is *stable* when it stays in its section between the same untouched
/// neighbours (the same "slot") and keeps its order among the other changed rows of that slot
/// (a longest increasing subsequence); otherwise it *moves*. This keeps every untouched row in
/// place, so a moved row is always one the transaction changed.
extension QueryPlan {
    /// The snapshot after the rows with keys in `changed` were removed from `old` and `fetched`
    /// (their current versions that match the predicate, in this plan's order) were placed, with
    /// the diff from `old`. `shown` gives the old positions of the changed keys `old` shows.
    ///
    /// Returns `nil` when the update cannot be derived this way and the caller must rebuild the
    /// snapshot and diff it in full: a limited query, a snapshot not sorted by this plan, or a
    /// section whose key value would change spelling (its new first row holds a value SQLite finds
    /// equal but stores differently, e.g. `1` and `1.0`).
    ///
    /// `renamed` gives the old key of each row whose key changed (new key → old key): a fetched
    /// row under its new key whose old key `old` shows is that row, moved or updated.
    func incrementalUpdate(of old: ResultSnapshot, changed: [ExactKey: Bool], shown: [ExactKey: ResultSnapshot.Position],
                           fetched: [EntityRow], renamed: [ExactKey: AttributeValue] = [:]) -> (snapshot: ResultSnapshot, diff: ResultDiff)? {
        guard query.limit == nil, old.isSorted, let layout = old.layout, layout.sortAttributes == self.layout.sortAttributes
        else { return nil }
        let isSectioned = old.isSectioned
        guard isSectioned == (sectionIndex != nil), isSectioned || old.parts.count == 1 else { return nil }

        // 1. The changed rows shown now, by old position.
        struct Removal {
            var key: ExactKey
            var position: ResultSnapshot.Position
            /// The number of untouched rows before it in its section.
            var slot = 0
        }
        var removals = shown.map { Removal(key: $0.key, position: $0.value) }
        removals.sort { $0.position.flat < $1.position.flat }
        var removedRows: [Int: [Int]] = [:]   // old section → removed row indices, ascending
        for index in removals.indices {
            let position = removals[index].position
            removals[index].slot = position.row - (removedRows[position.section]?.count ?? 0)
            removedRows[position.section, default: []].append(position.row)
        }

        // 2. Where each fetched row goes: an existing section (at a slot among its untouched
        //    rows), or a section that did not exist, placed before old section `before`.
        let entries = fetched.map(layout.entry(of:))
        struct Created {
            var key: AttributeValue
            var before: Int
            var members: [Int] = []   // indices into `fetched`
        }
        var inserts: [Int: [(member: Int, slot: Int)]] = [:]   // old section → rows, in order
        var created: [Created] = []
        for (member, entry) in entries.enumerated() {
            var target = 0
            if isSectioned {
                let key = layout.sectionValue(entry)
                target = sectionLowerBound(of: key, in: old.parts)
                let exists = target < old.parts.count && SQLiteOrdering.compare(old.parts[target].key, key) == 0
                if !exists {
                    if let last = created.last, last.before == target, SQLiteOrdering.compare(last.key, key) == 0 {
                        created[created.count - 1].members.append(member)
                    } else {
                        created.append(Created(key: key, before: target, members: [member]))
                    }
                    continue
                }
            }
            let below = old.parts[target].entries.lowerBound(of: entry, in: layout)
            let removedBelow = removedRows[target].map { $0.lowerBound(below) } ?? 0
            inserts[target, default: []].append((member, below - removedBelow))
        }

        // 3. The new sections: untouched ones shared, touched ones spliced, created ones added.
        struct Placed {
            /// The new section (without offset) and row.
            var section: Int
            var row: Int
            /// The old section it was placed in, and its slot there; `nil` in a created section.
            var oldSection: Int?
            var slot: Int
        }
        var placed = [Placed?](repeating: nil, count: fetched.count)
        var parts: [ResultSnapshot.Part] = []
        var oldToNew = [Int?](repeating: nil, count: old.parts.count)
        var sectionInserts: [ResultDiff.SectionChange] = []
        var nextCreated = 0
        for s in 0...old.parts.count {
            while nextCreated < created.count, created[nextCreated].before == s {
                let section = created[nextCreated]
                for (r, member) in section.members.enumerated() {
                    placed[member] = Placed(section: parts.count, row: r, oldSection: nil, slot: 0)
                }
                sectionInserts.append(.init(index: parts.count + old.sectionOffset, key: section.key))
                parts.append(ResultSnapshot.Part(key: section.key, entries: SnapshotEntries(section.members.map { entries[$0] })))
                nextCreated += 1
            }
            guard s < old.parts.count else { break }
            let part = old.parts[s]
            let gone = removedRows[s] ?? []
            let added = inserts[s] ?? []
            if gone.isEmpty && added.isEmpty {
                oldToNew[s] = parts.count
                parts.append(part)
                continue
            }
            let newSection = parts.count
            let spliced = Self.splice(part.entries, removing: gone, inserting: added.map { (entries[$0.member], $0.slot) }) { index, r in
                placed[added[index].member] = Placed(section: newSection, row: r, oldSection: s, slot: added[index].slot)
            }
            if spliced.isEmpty && isSectioned { continue }   // the section is deleted
            let key = isSectioned ? layout.sectionValue(spliced, at: 0) : .null
            guard key.isIdentical(to: part.key) else { return nil }
            oldToNew[s] = newSection
            parts.append(ResultSnapshot.Part(key: key, entries: spliced))
        }

        // 4. The values: k removals and k insertions in a snapshot that holds its rows.
        let count = parts.reduce(0) { $0 + $1.entries.count }
        let values: SnapshotRows
        if case .resident(var table) = old.values, count <= query.residentRowLimit {
            for removal in removals { table.removeValue(forKey: removal.key) }
            for row in fetched { table[ExactKey(row.primaryKey)] = row }
            values = .resident(table)
        } else {
            values = .lazy(cache)
        }
        let snapshot = ResultSnapshot(parts: parts, sectionOffset: old.sectionOffset, isSectioned: isSectioned, layout: layout,
                                      isSorted: true, values: values)

        // 5. The diff.
        var diff = ResultDiff()
        let (oldOffset, newOffset) = (old.sectionOffset, snapshot.sectionOffset)
        for s in old.parts.indices.reversed() where oldToNew[s] == nil {
            diff.sectionDeletes.append(.init(index: s + oldOffset, key: old.parts[s].key))
        }
        diff.sectionInserts = sectionInserts
        var removalByKey: [ExactKey: Int] = [:]
        removalByKey.reserveCapacity(removals.count)
        for (index, removal) in removals.enumerated() { removalByKey[removal.key] = index }
        // The removal of a fetched row: under its key, or under its old key when it was rekeyed.
        func removal(of row: EntityRow) -> (removal: Removal, previousKey: AttributeValue?)? {
            let key = ExactKey(row.primaryKey)
            if let index = removalByKey[key] { return (removals[index], nil) }
            guard let previous = renamed[key], let index = removalByKey[ExactKey(previous)] else { return nil }
            return (removals[index], previous)
        }

        // Changed rows shown before and after that stay between the same untouched rows of the
        // same section may be stable; the most of them that keep their order are.
        var candidateRanks: [Int] = []
        var candidateRows: [Int] = []
        for (index, row) in fetched.enumerated() {
            guard let before = removal(of: row)?.removal, let after = placed[index],
                  let oldSection = after.oldSection, oldSection == before.position.section,
                  after.slot == before.slot else { continue }
            candidateRanks.append(before.position.flat)
            candidateRows.append(index)
        }
        var isStable = [Bool](repeating: false, count: fetched.count)
        for index in ResultDiff.longestIncreasingSubsequence(candidateRanks) { isStable[candidateRows[index]] = true }

        // `fetched` is in the new snapshot's order, so these come out ascending by `to`.
        var placedKeys = Set<ExactKey>()
        placedKeys.reserveCapacity(fetched.count)
        for (index, row) in fetched.enumerated() {
            guard let after = placed[index] else { return nil }
            let to = ResultIndexPath(section: after.section + newOffset, row: after.row)
            placedKeys.insert(ExactKey(row.primaryKey))
            guard let (before, previousKey) = removal(of: row) else {
                diff.rowInserts.append(.init(key: row.primaryKey, from: nil, to: to, row: row))
                continue
            }
            if let previousKey { placedKeys.insert(ExactKey(previousKey)) }
            let from = ResultIndexPath(section: before.position.section + oldOffset, row: before.position.row)
            if !isStable[index] {
                diff.rowMoves.append(.init(key: row.primaryKey, from: from, to: to, row: row, previousKey: previousKey))
            } else if previousKey != nil || !Self.isUnchanged(row, in: old) {
                diff.rowUpdates.append(.init(key: row.primaryKey, from: from, to: to, row: row, previousKey: previousKey))
            }
        }
        for removal in removals.reversed() where !placedKeys.contains(removal.key) {
            let from = ResultIndexPath(section: removal.position.section + oldOffset, row: removal.position.row)
            let row = old.knownRow(removal.key.value) ?? layout.skeleton(old.entry(removal.position))
            diff.rowDeletes.append(.init(key: removal.key.value, from: from, to: nil, row: row))
        }
        return (snapshot, diff)
    }

    /// Whether a changed row's new values are those `old` holds: only a snapshot holding its rows
    /// can tell; for a larger one a row the commit changed is reported updated.
    static func isUnchanged(_ row: EntityRow, in old: ResultSnapshot) -> Bool {
        guard case .resident(let table) = old.values, let before = table[ExactKey(row.primaryKey)] else { return false }
        return before.isIdentical(to: row)
    }

    /// The index of the first section whose key does not sort before `key` (sections follow the
    /// direction of the first sort term, which is the section key's).
    func sectionLowerBound(of key: AttributeValue, in parts: [ResultSnapshot.Part]) -> Int {
        let ascending = order.terms.first?.ascending ?? true
        var low = 0
        var high = parts.count
        while low < high {
            let mid = (low + high) / 2
            let result = SQLiteOrdering.compare(parts[mid].key, key)
            if (ascending ? result : -result) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// `entries` without the entries at `removing` (ascending indices), with `inserting` placed at
    /// their slots (indices among the entries kept, ascending); `placed` is told each insert's
    /// position in `inserting` and its new index.
    static func splice(_ entries: SnapshotEntries, removing: [Int], inserting: [(entry: SnapshotEntry, slot: Int)],
                       placed: (Int, Int) -> Void) -> SnapshotEntries {
        var result = SnapshotEntries()
        result.reserveCapacity(entries.count - removing.count + inserting.count)
        var source = 0   // next index in `entries`
        var kept = 0     // entries kept so far
        var nextRemoved = 0
        // Copies kept entries until `kept == limit` or `entries` runs out.
        func copyKept(upTo limit: Int) {
            while kept < limit {
                while nextRemoved < removing.count, removing[nextRemoved] == source {
                    source += 1
                    nextRemoved += 1
                }
                let stop = nextRemoved < removing.count ? removing[nextRemoved] : entries.count
                let take = min(stop - source, limit - kept)
                guard take > 0 else { return }
                result.append(contentsOf: entries[source ..< source + take])
                source += take
                kept += take
            }
        }
        for (index, insert) in inserting.enumerated() {
            copyKept(upTo: insert.slot)
            placed(index, result.count)
            result.append(insert.entry)
        }
        copyKept(upTo: Int.max)
        return result
    }
}

extension Array where Element: Comparable {
    /// The number of elements less than `value` (the array sorted ascending).
    package func lowerBound(_ value: Element) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
