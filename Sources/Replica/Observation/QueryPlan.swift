/// A ``LiveQuery`` checked against the schema, with what evaluating it needs.
struct QueryPlan: Sendable {
    let query: LiveQuery
    let entity: Entity
    let order: RowOrder
    /// The position of the section attribute in a row's values.
    let sectionIndex: Int?
    /// The position of the primary key in a row's values.
    let keyIndex: Int
    /// `true` when changed rows can be fetched by key and merged: the order is reproducible in
    /// Swift and primary keys round-trip through ``PrimaryKeys`` (integer or string keys).
    let canMerge: Bool

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
    }

    /// A snapshot of rows in this plan's order.
    func snapshot(_ rows: [EntityRow]) -> ResultSnapshot {
        ResultSnapshot(rows: rows, sectionIndex: sectionIndex, sectionOffset: query.sectionOffset,
                       order: canMerge ? order : nil)
    }

    /// Runs the whole query.
    func fetchAll(_ store: Store) throws -> [EntityRow] {
        try store.rows(query.rowQuery)
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
