import GRDB
import GRDBSQLite

/// A ``LiveQuery`` checked against the schema, with what evaluating it needs.
struct QueryPlan: Sendable {
    private(set) var query: LiveQuery
    let entity: Entity
    let order: RowOrder
    /// The position of the section attribute in a row's values.
    let sectionIndex: Int?
    /// The position of the primary key in a row's values.
    let keyIndex: Int
    /// `true` when changed rows can be fetched by key and merged: the order is reproducible in
    /// Swift and primary keys round-trip through ``PrimaryKeys`` (integer or string keys).
    let canMerge: Bool
    /// What a snapshot keeps of each row, and how entries compare.
    let layout: SnapshotLayout
    /// The rows of large snapshots, read on access (shared by this plan's snapshots).
    let cache: RowCache

    /// - Throws: ``StoreError`` for an unknown entity or sort attribute; ``LiveResultError`` for an
    ///   unknown section key.
    init(query: LiveQuery, store: Store) throws {
        let entity = try store.requireEntity(query.entity)
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
        self.keyIndex = names.firstIndex(of: entity.primaryKey) ?? 0
        let keyType = entity.primaryKeyAttribute.type
        self.canMerge = order.isReproducible && (keyType == .integer || keyType == .string)
        self.layout = SnapshotLayout(entity: entity, order: order, sectionIndex: sectionIndex)
        self.cache = RowCache(store: store, entity: entity, batchSize: query.rowBatchSize,
                              capacity: max(4_096, 16 * query.rowBatchSize))
    }

    /// A snapshot of rows in this plan's order: holding them when there are at most
    /// ``LiveQuery/residentRowLimit``, else keeping their entries and reading rows on access.
    func snapshot(_ rows: [EntityRow]) -> ResultSnapshot {
        let entries = rows.map(layout.entry(of:))
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
    func load(_ store: Store) throws -> ResultSnapshot {
        let rowQuery = query.rowQuery
        let (entity, sql) = try store.selectSQL(rowQuery)
        let table = entity.tableName.quotedIdentifier
        let predicate = rowQuery.predicate.map { " WHERE \($0)" } ?? ""
        let limit = query.residentRowLimit
        return try store.read { db in
            // One read transaction: the count and the rows agree.
            let probe = try Store.queryStatement(db, sql: "SELECT count(*) FROM (SELECT 1 FROM \(table)\(predicate) LIMIT \(limit + 1))",
                                                 arguments: rowQuery.arguments)
            let matching = try Int.fetchOne(probe) ?? 0
            if matching <= limit || (query.limit ?? Int.max) <= limit {
                let rows = try Store.fetchRows(db, entity: entity, sql: sql, arguments: rowQuery.arguments)
                return snapshot(rows)
            }
            cache.removeAll()
            let attributes = entity.attributes
            let columns = ([layout.keyIndex] + layout.sortAttributes).map { attributes[$0].name.quotedIdentifier }
            let entrySQL = "SELECT \(columns.joined(separator: ", ")) FROM \(table)\(predicate) ORDER BY "
                + (try store.orderBy(query.effectiveSort, for: entity)) + (query.limit.map { " LIMIT \(max(0, $0))" } ?? "")
            // Without a predicate the count is cheap (SQLite counts the table's pages, decoding no row):
            // the entries of a whole large table are then allocated once, not grown by doubling. With
            // one it would cost another scan: the entries grow.
            var total = limit + 1
            if predicate.isEmpty {
                total = max(total, try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0)
            }
            total = min(total, query.limit ?? Int.max)
            let statement = try Store.queryStatement(db, sql: entrySQL, arguments: rowQuery.arguments)
            let handle = statement.sqliteStatement
            defer { sqlite3_reset(handle) }
            let keyType = attributes[layout.keyIndex].type
            let types = layout.sortAttributes.map { attributes[$0].type }
            var entries: [SnapshotEntry] = []
            entries.reserveCapacity(total)
            while true {
                let code = sqlite3_step(handle)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else {
                    throw StoreError(.sqlite, "query on '\(entity.name)' failed: \(String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))",
                                     path: store.path)
                }
                var entry = SnapshotEntry(key: AttributeValue(column: handle, at: 0, type: keyType))
                for (slot, type) in types.enumerated() {
                    entry.append(AttributeValue(column: handle, at: Int32(slot + 1), type: type), slot: slot)
                }
                entries.append(entry)
            }
            return ResultSnapshot(entries: entries, layout: layout, sectionOffset: query.sectionOffset, isSorted: canMerge,
                                  values: .lazy(cache))
        }
    }

    /// The current rows among `keys` that match the predicate, in order.
    func fetch(keys: [AttributeValue], from store: Store) throws -> [EntityRow] {
        let table = entity.tableName.quotedIdentifier
        let columns = entity.attributes.map(\.name.quotedIdentifier).joined(separator: ", ")
        let key = entity.primaryKey.quotedIdentifier
        let predicate = query.predicate
        var rows = try store.read { db in
            var rows: [EntityRow] = []
            var start = 0
            while start < keys.count {
                let chunk = Array(keys[start ..< min(keys.count, start + Self.chunkSize)])
                start += chunk.count
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                var sql = "SELECT \(columns) FROM \(table) WHERE \(key) IN (\(marks))"
                if !predicate.isAll { sql += " AND (\(predicate.sql))" }
                rows += try Store.fetchRows(db, entity: entity, sql: sql, arguments: chunk + predicate.arguments)
            }
            return rows
        }
        rows.sort { order.compare($0, $1) < 0 }
        return rows
    }

    /// Keys bound per `IN (...)` statement.
    static let chunkSize = 500

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
