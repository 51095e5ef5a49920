import Foundation
import GRDB
import GRDBSQLite
import ReplicaCore

/// What keeps live result sets on an SQLite replica live: its observers (each commit's change
/// set, published on the writer's queue right after the commit) and its reads.
extension SQLiteReplica {
    /// Live result sets read the store's rows on their own queue, through GRDB's reader pool.
    package var liveSource: any LiveRowSource { store }

    /// Registers `callback` for every committed change set that touches `entities` (all when `nil`),
    /// delivered in commit order on `queue`.
    ///
    /// ```swift
    /// let token = engine.addObserver(for: ["Post"], queue: .main) { changes in
    ///     print("posts inserted:", changes["Post"]?.inserted.count ?? 0)
    /// }
    /// engine.removeObserver(token)
    /// ```
    ///
    /// - Parameters:
    ///   - entities: Entity names to watch, or `nil` for all.
    ///   - queue: Where callbacks run; a serial queue keeps them in commit order.
    ///   - callback: Receives the change set, restricted to the watched entities.
    /// - Returns: A token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(for entities: Set<String>? = nil, queue: DispatchQueue,
                            _ callback: @escaping @Sendable (ChangeSet) -> Void) -> ObserverToken {
        observers.add(entities: entities, queue: queue, callback)
    }

    /// Stops deliveries to an observer at once; safe from inside its own callback.
    public func removeObserver(_ token: ObserverToken) {
        observers.remove(token)
    }

    /// The committed change sets touching `entities`, as an async sequence; ends when the task is cancelled.
    ///
    /// ```swift
    /// for await changes in engine.changes(for: ["Post"]) { print(changes) }
    /// ```
    public func changes(for entities: Set<String>? = nil) -> AsyncStream<ChangeSet> {
        let (stream, continuation) = AsyncStream<ChangeSet>.makeStream(bufferingPolicy: .unbounded)
        let queue = DispatchQueue(label: "Replica.changes")
        let token = addObserver(for: entities, queue: queue) { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in self?.removeObserver(token) }
        return stream
    }
}

/// The live reads of an SQLite replica: one read transaction of the reader pool per load.
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
            // The key's columns (a composite key's parts, whose tuple is the entry's key), then the sort values.
            let keyIndexes = entity.primaryKeyPositions
            let columns = (keyIndexes + request.sortAttributes).map { attributes[$0].name.quotedIdentifier }
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
            let keyTypes = keyIndexes.map { attributes[$0].type }
            let types = request.sortAttributes.map { attributes[$0].type }
            let width = Int32(keyIndexes.count)
            var entries = SnapshotEntries()
            entries.reserveCapacity(total)
            while true {
                let code = sqlite3_step(handle)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else {
                    throw StoreError(.sqlite, "query on '\(entity.name)' failed: \(String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))",
                                     path: path)
                }
                let key = keyTypes.count == 1 ? AttributeValue(column: handle, at: 0, type: keyTypes[0])
                    : .compositeKey(keyTypes.enumerated().map { AttributeValue(column: handle, at: Int32($0.offset), type: $0.element) })
                var entry = SnapshotEntry(key: key)
                for (slot, type) in types.enumerated() {
                    entry.append(AttributeValue(column: handle, at: Int32(slot) + width, type: type), slot: slot)
                }
                entries.append(entry)
                // Once the first entries tell their size, the buffer is sized for all of them.
                if entries.count == 1_024 { entries.reserveBytes(forEntries: total) }
            }
            return .entries(entries)
        }
    }

    package func liveRows(of entity: Entity, keys: [AttributeValue], predicate: RowPredicate) throws -> [EntityRow] {
        let table = entity.tableName.quotedIdentifier
        let columns = entity.attributes.map(\.name.quotedIdentifier).joined(separator: ", ")
        return try read { db in
            var rows: [EntityRow] = []
            for chunk in liveKeyChunks(keys, of: entity) {
                var sql = "SELECT \(columns) FROM \(table) WHERE \(chunk.condition)"
                if !predicate.isAll { sql += " AND (\(predicate.sql))" }
                rows += try Store.fetchRows(db, entity: entity, sql: sql, arguments: chunk.arguments + predicate.arguments)
            }
            return rows
        }
    }
}
