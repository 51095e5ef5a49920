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
    /// The snapshot after the rows with `changedKeys` were removed from `old` and `fetched` (their
    /// current versions that match the predicate, in this plan's order) were placed, with the diff
    /// from `old`.
    ///
    /// Returns `nil` when the update cannot be derived this way and the caller must rebuild the
    /// snapshot and diff it in full: a limited query, a snapshot not sorted by this plan, or a
    /// section whose key value would change spelling (its new first row holds a value SQLite finds
    /// equal but stores differently, e.g. `1` and `1.0`).
    func incrementalUpdate(of old: ResultSnapshot, changedKeys: Dictionary<ExactKey, Bool>.Keys,
                           fetched: [EntityRow]) -> (snapshot: ResultSnapshot, diff: ResultDiff)? {
        guard query.limit == nil, case .sorted(_, var keyed) = old.locator else { return nil }
        let isSectioned = old.isSectioned
        guard isSectioned == (sectionIndex != nil), isSectioned || old.sections.count == 1 else { return nil }

        // 1. The changed rows shown now, by old position.
        struct Removal {
            var key: ExactKey
            var position: ResultSnapshot.Position
            var row: EntityRow
            /// The number of untouched rows before it in its section.
            var slot = 0
        }
        var removals: [Removal] = []
        for key in changedKeys {
            guard let row = keyed[key] else { continue }
            guard let position = old.position(of: row, in: order) else { return nil }
            removals.append(Removal(key: key, position: position, row: row))
        }
        removals.sort { $0.position.flat < $1.position.flat }
        var removedRows: [Int: [Int]] = [:]   // old section → removed row indices, ascending
        for index in removals.indices {
            let position = removals[index].position
            removals[index].slot = position.row - (removedRows[position.section]?.count ?? 0)
            removedRows[position.section, default: []].append(position.row)
        }

        // 2. Where each fetched row goes: an existing section (at a slot among its untouched
        //    rows), or a section that did not exist, placed before old section `before`.
        struct Created {
            var key: AttributeValue
            var before: Int
            var rows: [EntityRow] = []
        }
        var inserts: [Int: [(row: EntityRow, slot: Int)]] = [:]   // old section → rows, in order
        var created: [Created] = []
        for row in fetched {
            var target = 0
            if let sectionIndex {
                let key = row.values[sectionIndex]
                target = sectionLowerBound(of: key, in: old.sections)
                let exists = target < old.sections.count && SQLiteOrdering.compare(old.sections[target].key, key) == 0
                if !exists {
                    if let last = created.last, last.before == target, SQLiteOrdering.compare(last.key, key) == 0 {
                        created[created.count - 1].rows.append(row)
                    } else {
                        created.append(Created(key: key, before: target, rows: [row]))
                    }
                    continue
                }
            }
            let below = old.sections[target].rows.lowerBound(of: row, in: order)
            let removedBelow = removedRows[target].map { $0.lowerBound(below) } ?? 0
            inserts[target, default: []].append((row, below - removedBelow))
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
        var placed: [ExactKey: Placed] = [:]
        placed.reserveCapacity(fetched.count)
        var sections: [ResultSnapshot.Section] = []
        var oldToNew = [Int?](repeating: nil, count: old.sections.count)
        var sectionInserts: [ResultDiff.SectionChange] = []
        var nextCreated = 0
        for s in 0...old.sections.count {
            while nextCreated < created.count, created[nextCreated].before == s {
                let section = created[nextCreated]
                for (r, row) in section.rows.enumerated() {
                    placed[ExactKey(row.primaryKey)] = Placed(section: sections.count, row: r,
                                                              oldSection: nil, slot: 0)
                }
                sectionInserts.append(.init(index: sections.count + old.sectionOffset, key: section.key))
                sections.append(ResultSnapshot.Section(key: section.key, rows: section.rows))
                nextCreated += 1
            }
            guard s < old.sections.count else { break }
            let section = old.sections[s]
            let gone = removedRows[s] ?? []
            let added = inserts[s] ?? []
            if gone.isEmpty && added.isEmpty {
                oldToNew[s] = sections.count
                sections.append(section)
                continue
            }
            let newSection = sections.count
            let rows = Self.splice(section.rows, removing: gone, inserting: added) { insert, r in
                placed[ExactKey(insert.row.primaryKey)] = Placed(section: newSection, row: r,
                                                                 oldSection: s, slot: insert.slot)
            }
            if rows.isEmpty && isSectioned { continue }   // the section is deleted
            let key = sectionIndex.map { rows[0].values[$0] } ?? .null
            guard key.isIdentical(to: section.key) else { return nil }
            oldToNew[s] = newSection
            sections.append(ResultSnapshot.Section(key: key, rows: rows))
        }

        // 4. The key index: k removals and k insertions.
        for removal in removals { keyed.removeValue(forKey: removal.key) }
        for row in fetched { keyed[ExactKey(row.primaryKey)] = row }
        let snapshot = ResultSnapshot(sections: sections, sectionOffset: old.sectionOffset, isSectioned: isSectioned,
                                      locator: .sorted(order, keyed))

        // 5. The diff.
        var diff = ResultDiff()
        let (oldOffset, newOffset) = (old.sectionOffset, snapshot.sectionOffset)
        for s in old.sections.indices.reversed() where oldToNew[s] == nil {
            diff.sectionDeletes.append(.init(index: s + oldOffset, key: old.sections[s].key))
        }
        diff.sectionInserts = sectionInserts
        var removalByKey: [ExactKey: Int] = [:]
        removalByKey.reserveCapacity(removals.count)
        for (index, removal) in removals.enumerated() { removalByKey[removal.key] = index }

        // Changed rows shown before and after that stay between the same untouched rows of the
        // same section may be stable; the most of them that keep their order are.
        var candidateRanks: [Int] = []
        var candidateRows: [Int] = []
        for (index, row) in fetched.enumerated() {
            let key = ExactKey(row.primaryKey)
            guard let before = removalByKey[key].map({ removals[$0] }), let after = placed[key],
                  let oldSection = after.oldSection, oldSection == before.position.section,
                  after.slot == before.slot else { continue }
            candidateRanks.append(before.position.flat)
            candidateRows.append(index)
        }
        var isStable = [Bool](repeating: false, count: fetched.count)
        for index in ResultDiff.longestIncreasingSubsequence(candidateRanks) { isStable[candidateRows[index]] = true }

        // `fetched` is in the new snapshot's order, so these come out ascending by `to`.
        for (index, row) in fetched.enumerated() {
            let key = ExactKey(row.primaryKey)
            guard let after = placed[key] else { return nil }
            let to = ResultIndexPath(section: after.section + newOffset, row: after.row)
            guard let before = removalByKey[key].map({ removals[$0] }) else {
                diff.rowInserts.append(.init(key: row.primaryKey, from: nil, to: to, row: row))
                continue
            }
            let from = ResultIndexPath(section: before.position.section + oldOffset, row: before.position.row)
            if !isStable[index] {
                diff.rowMoves.append(.init(key: row.primaryKey, from: from, to: to, row: row))
            } else if !before.row.isIdentical(to: row) {
                diff.rowUpdates.append(.init(key: row.primaryKey, from: from, to: to, row: row))
            }
        }
        for removal in removals.reversed() where placed[removal.key] == nil {
            let from = ResultIndexPath(section: removal.position.section + oldOffset, row: removal.position.row)
            diff.rowDeletes.append(.init(key: removal.row.primaryKey, from: from, to: nil, row: removal.row))
        }
        return (snapshot, diff)
    }

    /// The index of the first section whose key does not sort before `key` (sections follow the
    /// direction of the first sort term, which is the section key's).
    func sectionLowerBound(of key: AttributeValue, in sections: [ResultSnapshot.Section]) -> Int {
        let ascending = order.terms.first?.ascending ?? true
        var low = 0
        var high = sections.count
        while low < high {
            let mid = (low + high) / 2
            let result = SQLiteOrdering.compare(sections[mid].key, key)
            if (ascending ? result : -result) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// `rows` without the rows at `removing` (ascending indices), with `inserting` placed at their
    /// slots (indices among the rows kept, ascending); `placed` is told each insert's new index.
    static func splice(_ rows: [EntityRow], removing: [Int], inserting: [(row: EntityRow, slot: Int)],
                       placed: ((row: EntityRow, slot: Int), Int) -> Void) -> [EntityRow] {
        var result: [EntityRow] = []
        result.reserveCapacity(rows.count - removing.count + inserting.count)
        var source = 0   // next index in `rows`
        var kept = 0     // rows kept so far
        var nextRemoved = 0
        // Copies kept rows until `kept == limit` or `rows` runs out.
        func copyKept(upTo limit: Int) {
            while kept < limit {
                while nextRemoved < removing.count, removing[nextRemoved] == source {
                    source += 1
                    nextRemoved += 1
                }
                let stop = nextRemoved < removing.count ? removing[nextRemoved] : rows.count
                let take = min(stop - source, limit - kept)
                guard take > 0 else { return }
                result.append(contentsOf: rows[source ..< source + take])
                source += take
                kept += take
            }
        }
        for insert in inserting {
            copyKept(upTo: insert.slot)
            placed(insert, result.count)
            result.append(insert.row)
        }
        copyKept(upTo: Int.max)
        return result
    }
}

extension Array where Element: Comparable {
    /// The number of elements less than `value` (the array sorted ascending).
    func lowerBound(_ value: Element) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
