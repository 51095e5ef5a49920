import Foundation
import Logging
import NIOCore
import PostgresNIO
import ReplicaCore

/// One write transaction on one connection: stage tables filled by `COPY`, one merge statement
/// per entity (and per set of attributes present), stale-row deletion; the replica's
/// ``PostgresReplica/perform(_:)`` drives it and announces what it changed.
///
/// Staging takes no lock on the replica's tables (the stage tables are the connection's own),
/// so a slow producer holds up no other writer; the merge takes one advisory lock per table,
/// so two processes syncing one collection never interleave half-syncs.
final class PostgresWriteSession {
    let connection: PostgresConnection
    let maps: [PropertyMap]
    let logger: Logger
    let url: PostgresURL
    /// What was staged, by entity (set once staging ends).
    private(set) var staged: [CopyEncoder.EntityState] = []
    private var stageTables: Set<Int> = []
    /// When the transaction took its first table lock (what a `SyncResult` reports as the write lock).
    private(set) var lockedSince: ContinuousClock.Instant?

    let mapping: SchemaMapping

    init(connection: PostgresConnection, mapping: SchemaMapping, logger: Logger, url: PostgresURL) {
        self.connection = connection
        self.mapping = mapping
        self.maps = mapping.maps
        self.logger = logger
        self.url = url
    }

    /// The stage table of an entity, or (past the entities) of a link side.
    static func stageTable(_ entity: Int) -> String { "replica_stage_\(entity)" }

    /// Encoded COPY text of one entity, on its way from the thread that encodes parsed batches
    /// to the task that sends it (through a bounded channel: a slow server slows the parser
    /// instead of filling memory).
    struct CopyChunk: Sendable {
        var entity: Int
        var bytes: [UInt8]
    }

    func execute(_ sql: String, _ arguments: [AttributeValue] = []) async throws {
        _ = try await connection.query(PostgresSQL.query(sql, arguments), logger: logger).collect()
    }

    // MARK: Staging

    /// Streams every batch of `stream` into the stage tables; returns the parser's summary.
    func stage(_ stream: ParsedStream) async throws -> ReaderSummary {
        try await stage { append in try await stream.drain(append) }
    }

    /// Streams a sync session's pages into the stage tables as they are parsed; returns what the
    /// session's commit adds.
    func stage(_ live: LiveTransaction, source: String) async throws -> LiveTransaction.Ending {
        try await stage { append in try await live.drain(source: source, append) }
    }

    /// Streams a sync session's staged batches into the stage tables.
    func stage(_ rows: StagedRows) async throws {
        let rows = UncheckedBox(rows)
        // The session is busy until its commit returns: only this replay touches the rows.
        try await stage { append in try await rows.value.replayOnThread(append) }
    }

    /// Streams the batches `produce` hands to its `append` (on a thread of its own, which may
    /// block while the COPY catches up) into the stage tables; returns what `produce` returned.
    private func stage<Result: Sendable>(
        _ produce: @escaping @Sendable (_ append: @escaping (RowBatch) throws -> Void) async throws -> Result
    ) async throws -> Result {
        let encoder = UncheckedBox(CopyEncoder(mapping: mapping))
        let pipe = BridgeQueue<CopyChunk>(capacity: 4)
        // The encoder is used by the producing thread until `produce` returns, then by this task.
        let producer = Task { () throws -> Result in
            do {
                let summary = try await produce { batch in
                    try encoder.value.append(batch)
                    while let entity = encoder.value.fullest(minimum: CopyEncoder.flushSize) {
                        let bytes = encoder.value.take(entity)
                        guard pipe.push(CopyChunk(entity: entity, bytes: bytes)) else { throw CancellationError() }
                    }
                }
                for entity in encoder.value.entities.indices where !encoder.value.entities[entity].buffer.isEmpty {
                    pipe.push(CopyChunk(entity: entity, bytes: encoder.value.take(entity)), bounded: false)
                }
                pipe.finish()
                return summary
            } catch {
                pipe.finish(throwing: error)
                throw error
            }
        }
        do {
            try await sendCopies(pipe)
        } catch {
            pipe.finish(throwing: CancellationError())
            // The producer's own error (malformed JSON at byte N) says more than a broken COPY.
            if case .failure(let produced) = await producer.result, !(produced is CancellationError) { throw produced }
            throw error
        }
        let summary = try await producer.value
        staged = encoder.value.entities
        return summary
    }

    /// Sends the pipe's chunks: one `COPY` per run of chunks of one entity.
    private func sendCopies(_ pipe: BridgeQueue<CopyChunk>) async throws {
        var pending = try await pipe.next()
        while let first = pending {
            pending = nil
            try await createStageTable(first.entity)
            var handoff: CopyChunk? = nil
            let guarded = CopyWriteGuard(connection: connection, url: url)
            try await connection.copyFrom(table: Self.stageTable(first.entity), logger: logger) { writer in
                try await guarded.write(first.bytes, to: writer)
                while let next = try await pipe.next() {
                    if next.entity != first.entity {
                        handoff = next
                        return
                    }
                    try await guarded.write(next.bytes, to: writer)
                }
            }
            pending = handoff
        }
    }

    private func createStageTable(_ entity: Int) async throws {
        guard !stageTables.contains(entity) else { return }
        if entity >= maps.count {
            let link = mapping.links[entity - maps.count]
            let types = [maps[link.parent], maps[link.child]].map { SQLDialect.postgres.columnType($0.entity.primaryKeyAttribute.type) }
            try await execute("CREATE TEMPORARY TABLE \(Self.stageTable(entity)) (replica_ord bigint, parent \(types[0]), "
                              + "child \(types[1])) ON COMMIT DROP")
            stageTables.insert(entity)
            return
        }
        let columns = maps[entity].entity.attributes.map { "\($0.name.quotedIdentifier) \(SQLDialect.postgres.columnType($0.type))" }
        try await execute("CREATE TEMPORARY TABLE \(Self.stageTable(entity)) (replica_ord bigint, replica_mask bigint, "
                          + "replica_top boolean, \(columns.joined(separator: ", "))) ON COMMIT DROP")
        stageTables.insert(entity)
    }

    // MARK: Merging

    /// Upserts the staged rows and makes `deletions` (rows neither staged as top-level rows nor
    /// kept by the deletion); returns what changed, by entity name.
    func merge(_ deletions: [StaleDeletion]) async throws -> [String: EntityChanges] {
        let written = stageTables.filter { $0 < maps.count }.sorted()
        let linked = stageTables.filter { $0 >= maps.count }.sorted().map { $0 - maps.count }
        try await lock(written + deletions.map(\.entity), joinTables: linked.map { mapping.links[$0].table })
        var changes: [String: EntityChanges] = [:]
        for entity in written {
            let change = try await upsert(entity)
            if !change.isEmpty { changes[maps[entity].entity.name] = change }
        }
        for link in linked {
            try await replaceLinks(link, into: &changes)
        }
        for deletion in deletions {
            let deleted = try await deleteStale(deletion.entity, scope: deletion.scope, keeping: deletion.keepingBeyondWritten)
            record(deleted, of: deletion.entity, into: &changes)
        }
        Self.normalize(&changes)
        return changes
    }

    /// What a deletion removed: the rows' keys, and the keys at the other end of each link it
    /// removed, by entity index.
    struct Deletion {
        var deleted = PrimaryKeys()
        var unlinked: [Int: PrimaryKeys] = [:]
    }

    /// Records a deletion of rows of `entity`: the rows deleted, and the rows its removed links
    /// reached as updated (their links changed), as on SQLite.
    func record(_ deletion: Deletion, of entity: Int, into changes: inout [String: EntityChanges]) {
        if !deletion.deleted.isEmpty { changes[maps[entity].entity.name, default: EntityChanges()].deleted.formUnion(deletion.deleted) }
        for (other, keys) in deletion.unlinked where !keys.isEmpty {
            changes[maps[other].entity.name, default: EntityChanges()].updated.formUnion(keys)
        }
    }

    /// Sorts each entity's updated keys and leaves out those the transaction inserted or deleted.
    static func normalize(_ changes: inout [String: EntityChanges]) {
        for (name, var change) in changes {
            var excluded = change.inserted
            excluded.formUnion(change.deleted)
            change.deleted.sortKeys()
            change.deleted.normalize()
            change.updated.sortKeys()
            change.updated.normalize(excluding: excluded)
            changes[name] = change
        }
    }

    /// Makes the links of every parent staged for `link` exactly those of its latest link row:
    /// deletes the pairs it no longer lists, inserts the new ones (one statement). A parent or
    /// child whose links changed counts as updated, as on SQLite.
    private func replaceLinks(_ index: Int, into changes: inout [String: EntityChanges]) async throws {
        let link = mapping.links[index]
        let stage = Self.stageTable(maps.count + index)
        let table = link.table.quotedIdentifier
        let parent = link.parentColumn.quotedIdentifier
        let child = link.childColumn.quotedIdentifier
        let sql = """
            WITH latest AS (SELECT parent, max(replica_ord) AS ord FROM \(stage) GROUP BY parent),
            wanted AS (SELECT DISTINCT s.parent, s.child FROM \(stage) s JOIN latest l ON l.parent = s.parent AND l.ord = s.replica_ord
                       WHERE s.child IS NOT NULL),
            removed AS (DELETE FROM \(table) j USING latest l WHERE j.\(parent) = l.parent AND NOT EXISTS
                        (SELECT 1 FROM wanted w WHERE w.parent = j.\(parent) AND w.child = j.\(child)) RETURNING j.\(parent), j.\(child)),
            added AS (INSERT INTO \(table) (\(parent), \(child)) SELECT parent, child FROM wanted ON CONFLICT DO NOTHING
                      RETURNING \(parent), \(child))
            SELECT \(parent), \(child) FROM removed UNION ALL SELECT \(parent), \(child) FROM added
            """
        let parentType = maps[link.parent].entity.primaryKeyAttribute.type
        let childType = maps[link.child].entity.primaryKeyAttribute.type
        var parents = PrimaryKeys()
        var children = PrimaryKeys()
        for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) {
            var cells = row.makeIterator()
            guard let parentCell = cells.next(), let childCell = cells.next() else { continue }
            parents.append(try PostgresSQL.value(parentCell, type: parentType))
            children.append(try PostgresSQL.value(childCell, type: childType))
        }
        if !parents.isEmpty { changes[maps[link.parent].entity.name, default: EntityChanges()].updated.formUnion(parents) }
        if !children.isEmpty { changes[maps[link.child].entity.name, default: EntityChanges()].updated.formUnion(children) }
    }

    /// The end of a statement whose CTE `gone` holds the keys of deleted rows of `entity`: deletes
    /// their links, and selects the deleted keys (as `gone` names them) or, when `entity` is linked
    /// (single keys only), each deleted key and each key at the other end of a removed link as
    /// text, after the index of its join column (`-1` for the deleted rows themselves).
    private func deletionTail(_ entity: Int) -> String {
        let joins = mapping.joinColumns(of: entity)
        guard !joins.isEmpty else { return " SELECT \(Self.keyAliases(maps[entity].entity)) FROM gone" }
        var sql = joins.enumerated().map { offset, join in
            ", unlinked_\(offset) AS (DELETE FROM \(join.table.quotedIdentifier) j USING gone WHERE j.\(join.column.quotedIdentifier) = gone.k "
                + "RETURNING j.\(join.otherColumn.quotedIdentifier) AS k)"
        }.joined()
        sql += " SELECT -1, gone.k::text FROM gone"
        for offset in joins.indices { sql += " UNION ALL SELECT \(offset), unlinked_\(offset).k::text FROM unlinked_\(offset)" }
        return sql
    }

    /// Runs a statement ending in ``deletionTail(_:)`` and reads what it deleted.
    private func deletion(_ query: PostgresQuery, entity: Int) async throws -> Deletion {
        let joins = mapping.joinColumns(of: entity)
        let rows = try await connection.query(query, logger: logger)
        var result = Deletion()
        guard !joins.isEmpty else {
            for try await row in rows { result.deleted.append(try Self.key(of: row, entity: maps[entity].entity)) }
            return result
        }
        func key(_ text: String, of entity: Int) -> AttributeValue {
            maps[entity].entity.primaryKeyAttribute.type == .integer ? Int64(text).map(AttributeValue.integer) ?? .string(text) : .string(text)
        }
        for try await (side, text) in rows.decode((Int32, String).self) {
            if side < 0 {
                result.deleted.append(key(text, of: entity))
            } else if Int(side) < joins.count {
                let other = joins[Int(side)].other
                result.unlinked[other, default: PrimaryKeys()].append(key(text, of: other))
            }
        }
        return result
    }

    /// The top-level keys staged of `entity`.
    func stagedTopKeys(of entity: Int) -> PrimaryKeys {
        entity < staged.count ? staged[entity].topKeys : PrimaryKeys()
    }

    /// Takes the advisory lock of each entity's table until the transaction ends: one lock per
    /// table, taken in one order by every process, so writers never deadlock and two syncs of
    /// one collection never interleave.
    ///
    /// - Throws: ``LockTimeout`` when the transaction's `lock_timeout` (``limitLockWait(seconds:)``)
    ///   ran out while another writer held a lock.
    func lock(_ entities: [Int], joinTables: [String] = []) async throws {
        // Deleting a row unlinks it: the join tables holding its keys are written too.
        let unlinked = entities.flatMap { mapping.joinColumns(of: $0).map(\.table) }
        let tables = Set(entities.map { maps[$0].entity.tableName } + joinTables + unlinked).sorted()
        let waiting = ContinuousClock.now
        for table in tables {
            do {
                try await execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", [.string("replica:" + table)])
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55P03" {
                throw LockTimeout(waited: waiting.duration(to: .now))
            }
        }
        if lockedSince == nil { lockedSince = ContinuousClock.now }
    }

    /// Bounds this transaction's waits for other writers' locks (`SET LOCAL lock_timeout`);
    /// 0 fails at once (PostgreSQL's own 0 would wait for ever).
    func limitLockWait(seconds: Double) async throws {
        let milliseconds = max(1, min(Int((seconds * 1000).rounded()), Int(Int32.max)))
        try await execute("SET LOCAL lock_timeout = \(milliseconds)")
    }

    /// A table lock another writer held for longer than the transaction's `lock_timeout`.
    struct LockTimeout: Error {
        /// How long the transaction waited for it.
        var waited: Duration
    }

    /// Deletes the row of `entity` with primary key `key` under its table's lock; returns its
    /// key when it was stored. A composite key's tuple matches its parts, all of them.
    func delete(entity: Int, key: AttributeValue, scope: RouteScope? = nil) async throws -> Deletion {
        try await lock([entity])
        let map = maps[entity]
        var (condition, arguments) = map.entity.keyCondition(key)
        // A route's tombstone deletes inside the route's scope only.
        if let scope, !scope.conditions.isEmpty {
            let clause = scope.whereClause
            condition += " AND " + clause.sql
            arguments += clause.arguments
        }
        let sql = "WITH gone (\(Self.keyAliases(map.entity))) AS (DELETE FROM \(map.entity.tableName.quotedIdentifier) WHERE "
            + "\(condition) RETURNING \(Self.keyColumns(map.entity, prefix: ""))"
            + ")" + deletionTail(entity)
        return try await deletion(PostgresSQL.query(sql, arguments), entity: entity)
    }

    /// The quoted key columns of `entity`, each after `prefix` (`t."owner", t."repo"`).
    static func keyColumns(_ entity: Entity, prefix: String) -> String {
        entity.primaryKeyNames.map { prefix + $0.quotedIdentifier }.joined(separator: ", ")
    }

    /// The names a CTE gives the key columns it returns: `k`, or `k0, k1, …` for a composite key
    /// (``deletionTail(_:)`` reads `gone.k`: only single keys are linked).
    static func keyAliases(_ entity: Entity) -> String {
        entity.hasCompositeKey ? entity.primaryKeyNames.indices.map { "k\($0)" }.joined(separator: ", ") : "k"
    }

    /// The key in the first columns of `row`: a single value, or a composite key's tuple.
    static func key(of row: PostgresRow, entity: Entity) throws -> AttributeValue {
        var cells = row.makeIterator()
        var parts: [AttributeValue] = []
        for attribute in entity.primaryKeyAttributes {
            guard let cell = cells.next() else { break }
            parts.append(try PostgresSQL.value(cell, type: attribute.type))
        }
        return parts.count == 1 ? parts[0] : .compositeKey(parts)
    }

    /// One merge statement per set of attributes present (usually one: every row is whole).
    private func upsert(_ entity: Int) async throws -> EntityChanges {
        let map = maps[entity]
        let attributes = map.entity.attributes
        let state = staged[entity]
        let table = map.entity.tableName.quotedIdentifier
        // The conflict target: the key's columns (all parts of a composite key).
        let keyList = Self.keyColumns(map.entity, prefix: "")
        let stagedKeys = Self.keyColumns(map.entity, prefix: "s.")
        let composite = map.entity.hasCompositeKey
        let keyType = map.entity.primaryKeyAttribute.type
        let duplicates = state.keys.hasDuplicates
        var change = EntityChanges()
        for mask in state.masks.sorted() {
            let present = attributes.indices.filter { $0 >= 64 || mask & (1 << UInt64($0)) != 0 }
            let columns = present.map { attributes[$0].name.quotedIdentifier }
            let columnList = columns.joined(separator: ", ")
            var select = "SELECT \(duplicates ? "DISTINCT ON (\(stagedKeys)) " : "")\(present.map { "s." + attributes[$0].name.quotedIdentifier }.joined(separator: ", ")) "
                + "FROM \(Self.stageTable(entity)) s"
            if state.masks.count > 1 { select += " WHERE s.replica_mask = \(Int64(bitPattern: mask))" }
            if duplicates { select += " ORDER BY \(stagedKeys), s.replica_ord DESC" }
            let updated = present.filter { !map.entity.isKeyAttribute(attributes[$0].name) }
            // Numbers first: PostgreSQL stops at the first difference, and they are the cheapest to compare.
            let differs = updated.sorted { Self.comparisonCost(attributes[$0].type) < Self.comparisonCost(attributes[$1].type) }
                .map { "t.\(attributes[$0].name.quotedIdentifier) IS DISTINCT FROM excluded.\(attributes[$0].name.quotedIdentifier)" }
                .joined(separator: " OR ")
            // Objects lacking a required attribute (no default) can only update rows: PostgreSQL checks
            // NOT NULL on the row `INSERT … ON CONFLICT` proposes before it sees the conflict, where
            // SQLite updates. So these merge as an UPDATE of the stored rows, then an INSERT of the
            // others, which fails on the missing value as SQLite's does.
            let lacksRequired = attributes.indices.contains { index in
                let attribute = attributes[index]
                return !present.contains(index) && !attribute.isNullable && (attribute.defaultValue?.isNull ?? true)
            }
            var statements: [String] = []
            if lacksRequired {
                let keyMatch = map.entity.primaryKeyNames.map { "t.\($0.quotedIdentifier) = excluded.\($0.quotedIdentifier)" }
                    .joined(separator: " AND ")
                if !updated.isEmpty {
                    statements.append("UPDATE \(table) AS t SET "
                        + updated.map { "\(attributes[$0].name.quotedIdentifier) = excluded.\(attributes[$0].name.quotedIdentifier)" }
                            .joined(separator: ", ")
                        + " FROM (\(select)) AS excluded WHERE \(keyMatch) AND (\(differs))"
                        + " RETURNING false, \(Self.keyColumns(map.entity, prefix: "t."))")
                }
                statements.append("INSERT INTO \(table) AS t (\(columnList)) SELECT \(columnList) FROM (\(select)) AS excluded "
                    + "WHERE NOT EXISTS (SELECT 1 FROM \(table) AS t WHERE \(keyMatch)) "
                    + "RETURNING true, \(Self.keyColumns(map.entity, prefix: "t."))")
            } else {
                var sql = "INSERT INTO \(table) AS t (\(columnList)) \(select) ON CONFLICT (\(keyList)) "
                if updated.isEmpty {
                    sql += "DO NOTHING"
                } else {
                    sql += "DO UPDATE SET " + updated.map { "\(attributes[$0].name.quotedIdentifier) = excluded.\(attributes[$0].name.quotedIdentifier)" }
                        .joined(separator: ", ")
                    sql += " WHERE " + differs
                }
                statements.append(sql + " RETURNING (t.xmax = 0), \(Self.keyColumns(map.entity, prefix: "t."))")
            }
            for sql in statements {
                if keyType == .integer && !composite {
                    // Integer keys come back as arrays of up to 16,384: a million keys decode in
                    // milliseconds, where a million rows of RETURNING cost a second, and no message
                    // is large enough to weigh on memory.
                    let aggregated = "WITH written (inserted, k) AS (\(sql)) SELECT inserted, array_agg(k) FROM "
                        + "(SELECT k, inserted, (row_number() OVER ()) / 16384 AS part FROM written) AS numbered "
                        + "GROUP BY inserted, part"
                    let rows = try await connection.query(PostgresQuery(unsafeSQL: aggregated), logger: logger)
                    for try await (inserted, keys) in rows.decode((Bool, [Int64]).self) {
                        if inserted { change.inserted.integers += keys } else { change.updated.integers += keys }
                    }
                } else {
                    let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                    for try await row in rows {
                        var cells = row.makeIterator()
                        guard let flag = cells.next() else { continue }
                        var parts: [AttributeValue] = []
                        for attribute in map.entity.primaryKeyAttributes {
                            guard let cell = cells.next() else { break }
                            parts.append(try PostgresSQL.value(cell, type: attribute.type))
                        }
                        let value = composite ? AttributeValue.compositeKey(parts) : parts.first ?? .null
                        if try flag.decode(Bool.self) { change.inserted.append(value) } else { change.updated.append(value) }
                    }
                }
            }
        }
        // RETURNING has no order: keys are reported sorted, so a change set reads the same each time.
        change.inserted.sortKeys()
        change.updated.sortKeys()
        change.inserted.normalize()
        change.updated.normalize(excluding: change.inserted)
        return change
    }

    static func comparisonCost(_ type: AttributeType) -> Int {
        switch type {
        case .integer, .bool, .double, .date: return 0
        case .string: return 1
        case .data, .json: return 2
        }
    }

    /// Deletes the rows of `entity` inside `scope` that no top-level object of the sync listed
    /// and that are not among `keeping` (skipped objects' keys); returns their keys.
    private func deleteStale(_ entity: Int, scope: RouteScope?, keeping: PrimaryKeys) async throws -> Deletion {
        let map = maps[entity]
        let table = map.entity.tableName.quotedIdentifier
        let keyNames = map.entity.primaryKeyNames.map(\.quotedIdentifier)
        let aliases = keyNames.count == 1 ? ["k"] : keyNames.indices.map { "k\($0)" }
        // Whole keys compare: every part of a composite key.
        func matches(_ alias: String, _ columns: [String]) -> String {
            zip(columns, keyNames).map { "\(alias).\($0) = t.\($1)" }.joined(separator: " AND ")
        }
        var conditions: [String] = []
        var arguments: [AttributeValue] = []
        if let scope, !scope.conditions.isEmpty {
            let clause = scope.whereClause
            conditions.append(clause.sql)
            arguments = clause.arguments
        }
        if stageTables.contains(entity) {
            conditions.append("NOT EXISTS (SELECT 1 FROM \(Self.stageTable(entity)) s WHERE s.replica_top AND \(matches("s", keyNames)))")
        }
        if !keeping.isEmpty {
            let columns = zip(aliases, map.entity.primaryKeyAttributes)
                .map { "\($0) \(SQLDialect.postgres.columnType($1.type))" }.joined(separator: ", ")
            try await execute("CREATE TEMPORARY TABLE replica_keep_\(entity) (\(columns)) ON COMMIT DROP")
            let bytes = CopyEncoder.lines(keeping)
            let guarded = CopyWriteGuard(connection: connection, url: url)
            try await connection.copyFrom(table: "replica_keep_\(entity)", logger: logger) { writer in
                try await guarded.write(bytes, to: writer)
            }
            conditions.append("NOT EXISTS (SELECT 1 FROM replica_keep_\(entity) x WHERE \(matches("x", aliases)))")
        }
        let condition = conditions.isEmpty ? "TRUE" : conditions.joined(separator: " AND ")
        let query = PostgresSQL.query("WITH gone (\(aliases.joined(separator: ", "))) AS (DELETE FROM \(table) AS t WHERE \(condition) "
                                      + "RETURNING \(Self.keyColumns(map.entity, prefix: "t.")))"
                                      + deletionTail(entity), arguments)
        return try await deletion(query, entity: entity)
    }
}
