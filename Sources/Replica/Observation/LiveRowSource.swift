import GRDB
import GRDBSQLite

/// Where a live result set reads its rows: the SQLite ``Store``, or a store of another module
/// (the PostgreSQL replica). Reads are synchronous: they run on the live result set's queue, or
/// on the thread reading a large snapshot's rows.
package protocol LiveRowSource: Sendable {
    /// The entity named `name`, or a ``StoreError``.
    func requireEntity(_ name: String) throws -> Entity

    /// Runs a live query in one consistent read: every matching row (in order) when at most
    /// `request.residentLimit` rows match or the query's limit is at most that; else, in order,
    /// only the entries (key and sort values) of the matching rows.
    ///
    /// - Throws: ``StoreError`` for an unknown attribute or a where-clause the store refuses.
    func loadLive(_ request: LiveLoadRequest) throws -> LiveLoad

    /// The current rows among `keys` that match `predicate`, in any order.
    ///
    /// - Throws: ``StoreError`` when the read fails.
    func liveRows(of entity: Entity, keys: [AttributeValue], predicate: RowPredicate) throws -> [EntityRow]
}

/// What ``LiveRowSource/loadLive(_:)`` reads.
package struct LiveLoadRequest: Sendable {
    package let entity: Entity
    package let predicate: RowPredicate
    package let sort: [SortKey]
    package let limit: Int?
    /// The most rows loaded whole.
    package let residentLimit: Int
    /// The attribute positions an entry keeps: its sort attributes, in order (after the key).
    package let sortAttributes: [Int]
}

/// The result of a live query: its rows, or for a large one its entries.
package enum LiveLoad {
    case rows([EntityRow])
    case entries([SnapshotEntry])
}

/// `keys` in chunks of at most 500, each with its `?, ?, …` placeholders: the keys bound per
/// `IN (...)` statement by row sources.
package func liveKeyChunks(_ keys: [AttributeValue]) -> [(keys: [AttributeValue], marks: String)] {
    stride(from: 0, to: keys.count, by: 500).map { start in
        let chunk = Array(keys[start ..< min(keys.count, start + 500)])
        return (chunk, Array(repeating: "?", count: chunk.count).joined(separator: ", "))
    }
}

extension Store: LiveRowSource {
    package func loadLive(_ request: LiveLoadRequest) throws -> LiveLoad {
        let entity = request.entity
        let predicate = request.predicate
        let rowQuery = RowQuery(entity.name, where: predicate.isAll ? nil : predicate.sql, arguments: predicate.arguments,
                                sort: request.sort, limit: request.limit)
        let (_, sql) = try selectSQL(rowQuery)
        let table = entity.tableName.quotedIdentifier
        let whereClause = rowQuery.predicate.map { " WHERE \($0)" } ?? ""
        let limit = request.residentLimit
        return try read { db in
            // One read transaction: the count and the rows agree.
            let probe = try Store.queryStatement(db, sql: "SELECT count(*) FROM (SELECT 1 FROM \(table)\(whereClause) LIMIT \(limit + 1))",
                                                 arguments: rowQuery.arguments)
            let matching = try Int.fetchOne(probe) ?? 0
            if matching <= limit || (request.limit ?? Int.max) <= limit {
                return .rows(try Store.fetchRows(db, entity: entity, sql: sql, arguments: rowQuery.arguments))
            }
            let attributes = entity.attributes
            let keyIndex = attributes.firstIndex { $0.name == entity.primaryKey } ?? 0
            let columns = ([keyIndex] + request.sortAttributes).map { attributes[$0].name.quotedIdentifier }
            let entrySQL = "SELECT \(columns.joined(separator: ", ")) FROM \(table)\(whereClause) ORDER BY "
                + (try orderBy(request.sort, for: entity)) + (request.limit.map { " LIMIT \(max(0, $0))" } ?? "")
            // Without a predicate the count is cheap (SQLite counts the table's pages, decoding no row):
            // the entries of a whole large table are then allocated once, not grown by doubling. With
            // one it would cost another scan: the entries grow.
            var total = limit + 1
            if whereClause.isEmpty {
                total = max(total, try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0)
            }
            total = min(total, request.limit ?? Int.max)
            let statement = try Store.queryStatement(db, sql: entrySQL, arguments: rowQuery.arguments)
            let handle = statement.sqliteStatement
            defer { sqlite3_reset(handle) }
            let keyType = attributes[keyIndex].type
            let types = request.sortAttributes.map { attributes[$0].type }
            var entries: [SnapshotEntry] = []
            entries.reserveCapacity(total)
            while true {
                let code = sqlite3_step(handle)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else {
                    throw StoreError(.sqlite, "query on '\(entity.name)' failed: \(String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))",
                                     path: path)
                }
                var entry = SnapshotEntry(key: AttributeValue(column: handle, at: 0, type: keyType))
                for (slot, type) in types.enumerated() {
                    entry.append(AttributeValue(column: handle, at: Int32(slot + 1), type: type), slot: slot)
                }
                entries.append(entry)
            }
            return .entries(entries)
        }
    }

    package func liveRows(of entity: Entity, keys: [AttributeValue], predicate: RowPredicate) throws -> [EntityRow] {
        let table = entity.tableName.quotedIdentifier
        let columns = entity.attributes.map(\.name.quotedIdentifier).joined(separator: ", ")
        let key = entity.primaryKey.quotedIdentifier
        return try read { db in
            var rows: [EntityRow] = []
            for chunk in liveKeyChunks(keys) {
                var sql = "SELECT \(columns) FROM \(table) WHERE \(key) IN (\(chunk.marks))"
                if !predicate.isAll { sql += " AND (\(predicate.sql))" }
                rows += try Store.fetchRows(db, entity: entity, sql: sql, arguments: chunk.keys + predicate.arguments)
            }
            return rows
        }
    }
}
