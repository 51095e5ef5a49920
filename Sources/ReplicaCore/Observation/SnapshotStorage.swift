import Foundation

/// What a snapshot keeps of one row: its primary key and the values of its query's sort
/// attributes (the section key is the first of them), enough to place, find and order it.
/// Snapshots keep their entries packed (``SnapshotEntries``) and decode one when it is read; the
/// first sort value lives inline, a longer sort keeps the rest in an array.
package struct SnapshotEntry: Sendable {
    package var key: AttributeValue
    var first: AttributeValue = .null
    var more: [AttributeValue] = []

    package init(key: AttributeValue) { self.key = key }

    /// The sort value in `slot` (the position in ``SnapshotLayout/sortAttributes``).
    subscript(slot: Int) -> AttributeValue {
        slot == 0 ? first : more[slot - 1]
    }

    /// The sort value in `slot`, or `nil` for an entry that holds fewer (a key alone).
    func value(slot: Int) -> AttributeValue? {
        slot == 0 ? first : (slot - 1 < more.count ? more[slot - 1] : nil)
    }

    /// Sets the sort value of the next slot (slots are filled in order).
    package mutating func append(_ value: AttributeValue, slot: Int) {
        if slot == 0 { first = value } else { more.append(value) }
    }

    /// `true` when keys and sort values are the same, byte for byte.
    func isIdentical(to other: SnapshotEntry) -> Bool {
        key.isIdentical(to: other.key) && first.isIdentical(to: other.first)
            && more.count == other.more.count && zip(more, other.more).allSatisfy { $0.isIdentical(to: $1) }
    }
}

/// How a query's rows become ``SnapshotEntry`` values, and how entries compare: the entity's
/// attributes, which of them an entry keeps, and the sort terms over the entry's slots.
struct SnapshotLayout: Sendable {
    struct Term: Sendable {
        /// The entry's sort slot, or `nil` for the primary key.
        var slot: Int?
        var ascending: Bool
    }

    let entityName: String
    let names: [String]
    /// The position of a single-column primary key; `nil` for a composite key, whose parts are
    /// sort attributes of the entry (the order ends with them) and whose tuple is the entry's key.
    let keyIndex: Int?
    /// The positions of a composite key's parts (empty for a single key).
    let compositeKeyIndexes: [Int]
    /// The attribute positions an entry keeps, in sort order, the primary key left out.
    let sortAttributes: [Int]
    let terms: [Term]
    /// Where the section value is: `.some(slot)` (`nil` slot: the primary key), `nil` without sections.
    let sectionSlot: Int??

    init(entity: Entity, order: RowOrder, sectionIndex: Int?) {
        entityName = entity.name
        names = entity.attributes.map(\.name)
        keyIndex = entity.hasCompositeKey ? nil : entity.primaryKeyPositions.first ?? 0
        compositeKeyIndexes = entity.hasCompositeKey ? entity.primaryKeyPositions : []
        var attributes: [Int] = []
        for term in order.terms where term.index != keyIndex && !attributes.contains(term.index) {
            attributes.append(term.index)
        }
        if let sectionIndex, sectionIndex != keyIndex, !attributes.contains(sectionIndex) { attributes.append(sectionIndex) }
        sortAttributes = attributes
        let keyIndex = self.keyIndex
        terms = order.terms.map { Term(slot: $0.index == keyIndex ? nil : attributes.firstIndex(of: $0.index), ascending: $0.ascending) }
        sectionSlot = sectionIndex.map { $0 == keyIndex ? nil : attributes.firstIndex(of: $0) }
    }

    /// The entry of a full row.
    func entry(of row: EntityRow) -> SnapshotEntry {
        var entry = SnapshotEntry(key: keyIndex.map { row.values[$0] } ?? row.primaryKey)
        for (slot, attribute) in sortAttributes.enumerated() {
            entry.append(attribute < row.values.count ? row.values[attribute] : .null, slot: slot)
        }
        return entry
    }

    /// The value an entry sorts by in `term`.
    @inline(__always)
    func value(_ entry: SnapshotEntry, _ term: Term) -> AttributeValue {
        term.slot.map { entry[$0] } ?? entry.key
    }

    /// -1, 0 or 1 in the query's order (0 only for the same key and sort values).
    func compare(_ a: SnapshotEntry, _ b: SnapshotEntry) -> Int {
        for term in terms {
            let result = SQLiteOrdering.compare(value(a, term), value(b, term))
            if result != 0 { return term.ascending ? result : -result }
        }
        return 0
    }

    /// The section value of entry `index` of `entries` (``AttributeValue/null`` without sections),
    /// decoding nothing else.
    func sectionValue(_ entries: SnapshotEntries, at index: Int) -> AttributeValue {
        guard let sectionSlot else { return .null }
        return sectionSlot.map { entries.value(at: index, slot: $0) ?? .null } ?? entries.key(at: index)
    }

    /// The section value of an entry (``AttributeValue/null`` without sections).
    func sectionValue(_ entry: SnapshotEntry) -> AttributeValue {
        guard let sectionSlot else { return .null }
        return sectionSlot.map { entry[$0] } ?? entry.key
    }

    /// A row standing for an entry whose row cannot be read (deleted since): its key and sort
    /// values, every other attribute null.
    func skeleton(_ entry: SnapshotEntry) -> EntityRow {
        var values = [AttributeValue](repeating: .null, count: names.count)
        if let keyIndex {
            values[keyIndex] = entry.key
        } else if let parts = entry.key.compositeKeyParts {
            for (part, index) in zip(parts, compositeKeyIndexes) { values[index] = part }
        }
        for (slot, attribute) in sortAttributes.enumerated() { values[attribute] = entry.value(slot: slot) ?? .null }
        if let keyIndex { return EntityRow(entity: entityName, names: names, values: values, primaryKeyIndex: keyIndex) }
        return EntityRow(entity: entityName, names: names, values: values, primaryKeyIndexes: compositeKeyIndexes)
    }

    /// A row holding only an entry's key (its layout's skeleton when there is a layout).
    static func keyOnly(_ entry: SnapshotEntry, layout: SnapshotLayout?) -> EntityRow {
        if let layout { return layout.skeleton(entry) }
        return EntityRow(entity: "", names: ["key"], values: [entry.key], primaryKeyIndex: 0)
    }
}

/// Where a snapshot's row values are.
enum SnapshotRows: Sendable {
    /// Every row, by key: the snapshot is exact (small results).
    case resident([ExactKey: EntityRow])
    /// Read from the store on access, in batches, through a bounded cache shared by the live
    /// result set's snapshots (large results).
    case lazy(RowCache)

    var isResident: Bool {
        if case .resident = self { return true }
        return false
    }

    /// The row of entry `index` of `entries`: held, cached, or read from the store (a row the
    /// store no longer has reads as its skeleton).
    ///
    /// - Throws: ``StoreError`` naming the entity when reading the store fails.
    func row(at index: Int, in entries: SnapshotEntries, layout: SnapshotLayout?) throws(StoreError) -> EntityRow {
        switch self {
        case .resident(let table):
            return table[ExactKey(entries.key(at: index))] ?? SnapshotLayout.keyOnly(entries[index], layout: layout)
        case .lazy(let cache):
            guard let layout else { return SnapshotLayout.keyOnly(entries[index], layout: nil) }
            return try cache.row(at: index, in: entries, layout: layout)
        }
    }

    /// ``row(at:in:layout:)``, recording a failed read in `memo` (the snapshot's
    /// ``ResultSnapshot/loadError``) before throwing it.
    func loadRow(at index: Int, in entries: SnapshotEntries, layout: SnapshotLayout?, memo: SnapshotMemo) throws(StoreError) -> EntityRow {
        do {
            return try row(at: index, in: entries, layout: layout)
        } catch {
            memo.record(error)
            throw error
        }
    }

    /// ``row(at:in:layout:)`` for accessors that cannot throw: when the read fails, the error is
    /// recorded in `memo` (the snapshot's ``ResultSnapshot/loadError``) and the row reads as its
    /// placeholder (key and sort values).
    func rowOrPlaceholder(at index: Int, in entries: SnapshotEntries, layout: SnapshotLayout?, memo: SnapshotMemo) -> EntityRow {
        do {
            return try loadRow(at: index, in: entries, layout: layout, memo: memo)
        } catch {
            return SnapshotLayout.keyOnly(entries[index], layout: layout)
        }
    }
}

/// The rows of a large live result, read from the store in batches as they are accessed, and
/// kept in a bounded cache: about `capacity` rows, the oldest batch dropped first.
///
/// The live result set keeps it current: rows a commit changed are replaced by the values it
/// fetched, deleted rows are dropped, and a re-run query empties it. A row read from the store
/// shows its values at the time it is read.
///
/// Its rows and their order are one ``Cached`` value in a ``Locked``.
final class RowCache: Sendable {
    let source: any LiveRowSource
    let entity: Entity
    let batchSize: Int
    let capacity: Int
    private let state = Locked(Cached())

    /// The rows held, in the order they entered.
    private struct Cached: Sendable {
        var rows: [ExactKey: EntityRow] = [:]
        /// Keys in the order they entered, for eviction.
        var arrival: [ExactKey] = []
        var arrivalStart = 0
        /// Batches read from the store (for tests and tuning).
        var fetches = 0

        mutating func insert(_ row: EntityRow) {
            let key = ExactKey(row.primaryKey)
            if rows.updateValue(row, forKey: key) == nil { arrival.append(key) }
        }

        /// Drops the oldest rows beyond `capacity`.
        mutating func evict(capacity: Int) {
            while rows.count > capacity, arrivalStart < arrival.count {
                rows.removeValue(forKey: arrival[arrivalStart])
                arrivalStart += 1
            }
            if arrivalStart > capacity {
                arrival.removeFirst(arrivalStart)
                arrivalStart = 0
            }
        }
    }

    init(source: any LiveRowSource, entity: Entity, batchSize: Int, capacity: Int) {
        self.source = source
        self.entity = entity
        self.batchSize = max(1, batchSize)
        self.capacity = max(self.batchSize, capacity)
    }

    /// The number of rows held.
    var count: Int { state.withLock { $0.rows.count } }

    /// The number of batches read so far.
    var fetchCount: Int { state.withLock { $0.fetches } }

    /// The cached row of `key`, if any.
    func cached(_ key: AttributeValue) -> EntityRow? {
        state.withLock { $0.rows[ExactKey(key)] }
    }

    /// The row of entry `index` of `entries`; on a miss, reads the batch of entries from `index`
    /// (those not cached) in one query. A row the store no longer has reads as its skeleton.
    ///
    /// - Throws: ``StoreError`` naming the entity when the read fails (nothing is cached then).
    func row(at index: Int, in entries: SnapshotEntries, layout: SnapshotLayout) throws(StoreError) -> EntityRow {
        let entry = entries[index]
        if let row = cached(entry.key) { return row }
        let end = min(entries.count, index + batchSize)
        let start = max(0, min(index, end - batchSize))
        let read = try load(entries[start ..< end].map(\.key), layout: layout, entries: Array(entries[start ..< end]))
        // The row just read, even if another thread's batch has evicted it since.
        if let row = cached(entry.key) ?? read.first(where: { $0.primaryKey.isIdentical(to: entry.key) }) { return row }
        return layout.skeleton(entry)
    }

    /// Reads the rows of `keys` that are not cached; the keys the store lacks are cached as
    /// skeletons (`entries`, when given, supply their sort values).
    ///
    /// - Returns: The rows read from the store (none for keys it lacks or that were cached).
    /// - Throws: ``StoreError`` naming the entity and the keys when the read fails.
    @discardableResult
    func load(_ keys: [AttributeValue], layout: SnapshotLayout, entries: [SnapshotEntry]? = nil) throws(StoreError) -> [EntityRow] {
        let missing = state.withLock { cached in keys.filter { cached.rows[ExactKey($0)] == nil } }
        guard !missing.isEmpty else { return [] }
        let found: [EntityRow]
        do {
            found = try source.liveRows(of: entity, keys: missing, predicate: .all)
        } catch {
            throw readFailure(error, keys: missing)
        }
        let capacity = self.capacity
        state.withLock { cached in
            cached.fetches += 1
            for row in found { cached.insert(row) }
            for key in missing where cached.rows[ExactKey(key)] == nil {
                let entry = entries?.first { $0.key.isIdentical(to: key) } ?? SnapshotEntry(key: key)
                cached.insert(layout.skeleton(entry))
            }
            cached.evict(capacity: capacity)
        }
        return found
    }

    /// A failed read of `keys` as a ``StoreError`` that names the entity and the keys, keeping
    /// the store's code, message and path.
    private func readFailure(_ error: any Error, keys: [AttributeValue]) -> StoreError {
        let storeError = error as? StoreError
        var which = ""
        if let first = keys.first?.jsonValue.serialized(), let last = keys.last?.jsonValue.serialized() {
            which = keys.count == 1 ? "row \(first)" : "\(keys.count) rows (keys \(first) … \(last))"
        }
        return StoreError(storeError?.code ?? .sqlite,
                          "cannot read \(which) of '\(entity.name)' for a live result: \(storeError?.message ?? String(describing: error))",
                          path: storeError?.path)
    }

    /// Replaces cached rows with fresh values (rows a commit changed), and drops `removed` keys.
    func refresh(_ fresh: [EntityRow], removing removed: [AttributeValue] = []) {
        state.withLock { cached in
            for key in removed { cached.rows.removeValue(forKey: ExactKey(key)) }
            for row in fresh where cached.rows[ExactKey(row.primaryKey)] != nil { cached.rows[ExactKey(row.primaryKey)] = row }
        }
    }

    /// Drops every row (the query was re-run: any row may have changed).
    func removeAll() {
        state.withLock { cached in
            cached.rows.removeAll()
            cached.arrival.removeAll()
            cached.arrivalStart = 0
        }
    }
}

/// What a snapshot learns after it is taken: its key → position table, built on first use
/// (``ResultSnapshot/indexPath(of:)``), and its latest failed row read
/// (``ResultSnapshot/loadError``). Copies of a snapshot share it.
final class SnapshotMemo: Sendable {
    private let positions = Locked<[ExactKey: ResultSnapshot.Position]?>(nil)
    private let failure = Locked<StoreError?>(nil)

    /// The key → position table, built by `build` on first use.
    func table(_ build: () -> [ExactKey: ResultSnapshot.Position]) -> [ExactKey: ResultSnapshot.Position] {
        positions.withLock { positions in
            if let positions { return positions }
            let built = build()
            positions = built
            return built
        }
    }

    /// The latest failed read, or `nil`.
    var loadError: StoreError? { failure.value }

    /// Records a failed read.
    func record(_ error: StoreError) {
        failure.withLock { $0 = error }
    }
}
