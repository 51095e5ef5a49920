/// A ``LiveQuery`` checked against the schema, with what evaluating it needs.
struct QueryPlan: Sendable {
    private(set) var query: LiveQuery
    let entity: Entity
    let order: RowOrder
    /// The position of the section attribute in a row's values.
    let sectionIndex: Int?
    /// `true` when changed rows can be fetched by key and merged: the order is reproducible in
    /// Swift and primary keys round-trip through ``PrimaryKeys`` (integer or string keys, or
    /// composite keys of such parts).
    let canMerge: Bool
    /// What a snapshot keeps of each row, and how entries compare.
    let layout: SnapshotLayout
    /// The rows of large snapshots, read on access (shared by this plan's snapshots).
    let cache: RowCache

    /// - Throws: ``StoreError`` for an unknown entity or sort attribute; ``LiveResultError`` for an
    ///   unknown section key.
    init(query: LiveQuery, source: any LiveRowSource) throws {
        let entity = try source.requireEntity(query.entity)
        let names = entity.attributes.map(\.name)
        if let key = query.sectionKey {
            guard let index = names.firstIndex(of: key) else {
                throw LiveResultError(.invalidQuery, "cannot section by '\(key)': entity '\(entity.name)' has "
                                      + names.joined(separator: ", "))
            }
            sectionIndex = index
        } else {
            sectionIndex = nil
        }
        self.query = query
        self.entity = entity
        self.order = try RowOrder(entity: entity, sort: query.effectiveSort)
        let keyTypes = entity.primaryKeyAttributes.map(\.type)
        self.canMerge = order.isReproducible && keyTypes.allSatisfy { $0 == .integer || $0 == .string }
        self.layout = SnapshotLayout(entity: entity, order: order, sectionIndex: sectionIndex)
        self.cache = RowCache(source: source, entity: entity, batchSize: query.rowBatchSize,
                              capacity: max(4_096, 16 * query.rowBatchSize))
    }

    /// A snapshot of rows in this plan's order: holding them when there are at most
    /// ``LiveQuery/residentRowLimit``, else keeping their entries and reading rows on access.
    func snapshot(_ rows: [EntityRow]) -> ResultSnapshot {
        let entries = SnapshotEntries(rows.map(layout.entry(of:)))
        return ResultSnapshot(entries: entries, layout: layout, sectionOffset: query.sectionOffset, isSorted: canMerge,
                              values: values(for: rows))
    }

    /// Where the values of a snapshot of `rows` live.
    func values(for rows: [EntityRow]) -> SnapshotRows {
        guard rows.count <= query.residentRowLimit else { return .lazy(cache) }
        var table: [ExactKey: EntityRow] = [:]
        table.reserveCapacity(rows.count)
        for row in rows { table[ExactKey(row.primaryKey)] = row }
        return .resident(table)
    }

    /// The same plan (and row cache) showing another window of its result.
    func with(window: LiveWindow?) -> QueryPlan {
        var plan = self
        plan.query.window = window
        return plan
    }

    /// An empty snapshot of this plan's shape.
    func emptySnapshot() -> ResultSnapshot {
        .empty(sectioned: sectionIndex != nil, sectionOffset: query.sectionOffset, layout: layout)
    }

    /// Runs the whole query: every row of a result of at most ``LiveQuery/residentRowLimit``
    /// rows; for a larger one only the keys and sort values (the row cache is emptied: any row
    /// may have changed), so that a million rows cost their keys, not their values.
    func load(_ source: any LiveRowSource) throws -> ResultSnapshot {
        let request = LiveLoadRequest(entity: entity, predicate: query.predicate, sort: query.effectiveSort,
                                      limit: query.limit, residentLimit: query.residentRowLimit,
                                      sortAttributes: layout.sortAttributes)
        switch try source.loadLive(request) {
        case .rows(let rows):
            return snapshot(rows)
        case .entries(let entries):
            cache.removeAll()
            return ResultSnapshot(entries: entries, layout: layout, sectionOffset: query.sectionOffset, isSorted: canMerge,
                                  values: .lazy(cache))
        }
    }

    /// The current rows among `keys` that match the predicate, in order.
    func fetch(keys: [AttributeValue], from source: any LiveRowSource) throws -> [EntityRow] {
        var rows = try source.liveRows(of: entity, keys: keys, predicate: query.predicate)
        rows.sort { order.compare($0, $1) < 0 }
        return rows
    }

    /// Merges two sorted row arrays.
    func merge(_ a: [EntityRow], _ b: [EntityRow]) -> [EntityRow] {
        if b.isEmpty { return a }
        if a.isEmpty { return b }
        var result: [EntityRow] = []
        result.reserveCapacity(a.count + b.count)
        var (i, j) = (0, 0)
        while i < a.count, j < b.count {
            if order.compare(b[j], a[i]) < 0 {
                result.append(b[j])
                j += 1
            } else {
                result.append(a[i])
                i += 1
            }
        }
        result += a[i...]
        result += b[j...]
        return result
    }
}
