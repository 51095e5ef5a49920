import Foundation
import GRDB
import GRDBSQLite
import ReplicaCore

/// The prepared statements of one write transaction: one upsert per entity and set of
/// present attributes, reused for every row, with values bound straight onto the statement.
///
/// Not thread-safe: it lives on the writer queue for the length of one transaction.
final class UpsertStatements {
    enum Outcome { case inserted, updated, unchanged }

    /// A row SQLite refused; the caller names the row in the ``SyncError`` it throws.
    struct RowFailure: Error {
        /// SQLite's message.
        var message: String
        /// The index of the failing row in its batch, when a run of rows was written together.
        var row: Int?
        /// Whether the failure was the statement's own (a constraint, a value of the wrong type or
        /// size), which SQLite undoes alone while the transaction goes on. Any other result
        /// (a full disk, an I/O error, no memory, a corrupt file, a busy lock, an interrupt) may
        /// have rolled the whole transaction back: nothing more may be written after it.
        var isStatementOnly = false
    }

    /// The failure SQLite reported for the last step on the connection, with its message and
    /// whether the transaction still stands (``RowFailure/isStatementOnly``).
    func failure() -> RowFailure {
        Self.failure(connection)
    }

    static func failure(_ connection: OpaquePointer) -> RowFailure {
        let code = sqlite3_extended_errcode(connection)
        let primary = code & 0xff
        let ownError = primary == SQLITE_CONSTRAINT || primary == SQLITE_MISMATCH || primary == SQLITE_TOOBIG
            || primary == SQLITE_RANGE
        let transactionStands = sqlite3_get_autocommit(connection) == 0
        return RowFailure(message: String(cString: sqlite3_errmsg(connection)), row: nil,
                          isStatementOnly: ownError && transactionStands)
    }

    /// The statement cache key: the entity and which attributes are present (a bit mask for up
    /// to 64 attributes, so that looking a statement up costs no allocation).
    struct Key: Hashable {
        var entity: Int
        var mask: UInt64
        var wide: [Bool]?

        init(entity: Int, mask: UInt64) {
            self.entity = entity
            self.mask = mask
            self.wide = nil
        }

        /// The key of a row of `cells` (its mask when it has at most 64 attributes).
        init(row: RowBatch.Row, cells: UnsafeBufferPointer<RowBatch.Cell>) {
            self.entity = row.entity
            if row.cellCount <= 64 {
                self.mask = row.mask
                self.wide = nil
            } else {
                self.mask = 0
                self.wide = (0..<row.cellCount).map { cells[row.firstCell + $0].kind != .absent }
            }
        }

        var present: [Bool] {
            wide ?? (0..<64).map { mask & (1 << UInt64($0)) != 0 }
        }
    }

    let connection: OpaquePointer
    let maps: [PropertyMap]
    /// The primary key's attribute index by entity index.
    let keyIndexes: [Int]
    private var upserts: [Key: OpaquePointer] = [:]
    /// Per run shape (``UpsertStatements+Runs.swift``): the range scan reading the stored rows,
    /// and the multi-row upserts writing them, by rows per statement.
    var runScans: [Key: OpaquePointer] = [:]
    var runWrites: [RunStatementKey: OpaquePointer] = [:]
    /// For objects lacking a non-null attribute without default: UPDATE, then INSERT if no row.
    private var partialUpdates: [Key: OpaquePointer] = [:]
    private var exists: [Int: OpaquePointer] = [:]
    private var deletes: [Int: OpaquePointer] = [:]
    /// The last upsert statement used, for rows of the same entity and mask as the previous one.
    /// The caller keeps it in a local variable: a class property read per row would cost a
    /// dynamic exclusivity check.
    struct LastUpsert {
        var entity: Int
        var mask: UInt64
        var statement: OpaquePointer
    }
    /// `SQLITE_TRANSIENT`: SQLite copies bound text and blobs.
    private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// The many-to-many relationships link rows refer to, and the join columns holding keys of
    /// each entity (what deleting one of its rows unlinks).
    let links: [LinkSide]
    private let joinColumns: [[JoinColumn]]
    /// Per link side: its parent's children, one link inserted, one link deleted.
    private var linkReads: [Int: OpaquePointer] = [:]
    private var linkInserts: [Int: OpaquePointer] = [:]
    private var linkDeletes: [Int: OpaquePointer] = [:]
    /// Per link side: the SQL reading a parent's children, deleting and inserting one link.
    private let linkSQL: [(read: String, delete: String, insert: String)]
    /// Per entity: the statements deleting the links of one of its rows.
    private var unlinks: [Int: [OpaquePointer]] = [:]

    init(db: Database, mapping: SchemaMapping) throws {
        guard let connection = db.sqliteConnection else {
            throw SyncError(.database, "the database connection is closed")
        }
        self.connection = connection
        self.maps = mapping.maps
        self.keyIndexes = mapping.maps.map(\.primaryKeyIndex)
        self.links = mapping.links
        self.joinColumns = mapping.maps.indices.map { mapping.joinColumns(of: $0) }
        self.linkSQL = mapping.links.map { side in
            let table = side.table.quotedIdentifier
            let parent = side.parentColumn.quotedIdentifier
            let child = side.childColumn.quotedIdentifier
            return (read: "SELECT \(child) FROM \(table) WHERE \(parent) = ?",
                    delete: "DELETE FROM \(table) WHERE \(parent) = ? AND \(child) = ?",
                    insert: "INSERT INTO \(table) (\(parent), \(child)) VALUES (?, ?)")
        }
    }

    deinit {
        finalize()
    }

    /// Finalizes every prepared statement. The writer calls it on the connection's own queue when
    /// the transaction is done: the connection is opened without SQLite's mutex, so a statement
    /// finalized wherever the last reference happened to go (a task's thread, after the writer
    /// moved on to the next transaction) would race with the connection's use.
    func finalize() {
        for statement in upserts.values { sqlite3_finalize(statement) }
        for statement in runScans.values { sqlite3_finalize(statement) }
        for statement in runWrites.values { sqlite3_finalize(statement) }
        for statement in partialUpdates.values { sqlite3_finalize(statement) }
        for statement in exists.values { sqlite3_finalize(statement) }
        for statement in deletes.values { sqlite3_finalize(statement) }
        for statement in linkReads.values { sqlite3_finalize(statement) }
        for statement in linkInserts.values { sqlite3_finalize(statement) }
        for statement in linkDeletes.values { sqlite3_finalize(statement) }
        for statement in unlinks.values.joined() { sqlite3_finalize(statement) }
        upserts = [:]
        runScans = [:]
        runWrites = [:]
        partialUpdates = [:]
        exists = [:]
        deletes = [:]
        linkReads = [:]
        linkInserts = [:]
        linkDeletes = [:]
        unlinks = [:]
    }

    /// `INSERT … ON CONFLICT(pk) DO UPDATE SET … WHERE` some value differs: an unchanged row writes
    /// nothing. A composite key is the conflict target as a whole: `ON CONFLICT("owner", "repo", "ref")`.
    static func upsertSQL(_ entity: Entity, present: [Bool]) -> String {
        let columns = zip(entity.attributes, present).filter(\.1).map(\.0.name)
        let quoted = columns.map(\.quotedIdentifier)
        let keys = entity.primaryKeyNames.map(\.quotedIdentifier)
        var sql = "INSERT INTO \(entity.tableName.quotedIdentifier) (\(quoted.joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ") ON CONFLICT(\(keys.joined(separator: ", "))) DO "
        let updated = quoted.filter { !keys.contains($0) }
        if updated.isEmpty { return sql + "NOTHING" }
        sql += "UPDATE SET " + updated.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        sql += " WHERE " + cheapestFirst(entity, present: present).map { "\($0) IS NOT excluded.\($0)" }.joined(separator: " OR ")
        return sql
    }

    /// The quoted non-key columns of the present attributes, cheapest to compare first: numbers,
    /// then text, then blobs and JSON. SQLite stops at the first `IS NOT` that holds, so a
    /// changed row costs the comparisons up to its first differing column; an unchanged row
    /// costs them all, in any order.
    static func cheapestFirst(_ entity: Entity, present: [Bool]) -> [String] {
        func cost(_ type: AttributeType) -> Int {
            switch type {
            case .integer, .double, .bool, .date: 0
            case .string: 1
            case .data, .json: 2
            }
        }
        let columns = zip(entity.attributes, present).filter { $0.1 && !entity.isKeyAttribute($0.0.name) }.map(\.0)
        return columns.enumerated().sorted { (cost($0.element.type), $0.offset) < (cost($1.element.type), $1.offset) }
            .map(\.element.name.quotedIdentifier)
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw SyncError(.database, "cannot prepare statement: \(String(cString: sqlite3_errmsg(connection)))")
        }
        return statement
    }

    private func upsertStatement(_ key: Key, count: Int) throws -> OpaquePointer {
        if let cached = upserts[key] { return cached }
        let statement = try prepare(Self.upsertSQL(maps[key.entity].entity, present: Array(key.present.prefix(count))))
        upserts[key] = statement
        return statement
    }

    /// `UPDATE … SET c1 = ?1, … WHERE pk = ?n AND (c1 IS NOT ?1 OR …)`: the present non-key
    /// values as ?1…, the key (its parts in key order) after them; the differs test compares the
    /// cheapest columns first.
    static func updateSQL(_ entity: Entity, present: [Bool]) -> String? {
        let columns = zip(entity.attributes, present).filter { $0.1 && !entity.isKeyAttribute($0.0.name) }
            .map(\.0.name.quotedIdentifier)
        guard !columns.isEmpty else { return nil }
        let number = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($0.element, $0.offset + 1) })
        let keyMatch = entity.primaryKeyNames.enumerated()
            .map { "\($0.element.quotedIdentifier) = ?\(columns.count + 1 + $0.offset)" }.joined(separator: " AND ")
        return "UPDATE \(entity.tableName.quotedIdentifier) SET "
            + columns.map { "\($0) = ?\(number[$0] ?? 0)" }.joined(separator: ", ")
            + " WHERE \(keyMatch) AND ("
            + cheapestFirst(entity, present: present).map { "\($0) IS NOT ?\(number[$0] ?? 0)" }.joined(separator: " OR ") + ")"
    }

    private var lacking: [Key: Bool] = [:]

    /// Whether an insert of these present attributes would break a NOT NULL constraint, so an
    /// existing row must be updated without trying to insert first.
    func lacksRequired(_ key: Key) -> Bool {
        if let known = lacking[key] { return known }
        let entity = maps[key.entity].entity
        let result = zip(entity.attributes, key.present).contains { attribute, isPresent in
            !isPresent && !attribute.isNullable && (attribute.defaultValue == nil || attribute.defaultValue == .null)
        }
        lacking[key] = result
        return result
    }

    /// Upserts one row of a batch; an absent cell leaves its attribute untouched on update.
    ///
    /// Text and blobs are bound with `SQLITE_STATIC` pointers into `arena`, which must stay
    /// valid until the statement is stepped. Bindings are not cleared afterwards: every
    /// parameter of a statement is bound again before it is stepped again.
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - cells: The batch's cells.
    ///   - arena: The batch's arena (text and blob bytes).
    ///   - last: The statement of the previous row, reused when this row has the same shape; updated.
    /// - Throws: ``RowFailure`` when SQLite refuses the row; ``SyncError`` when a statement cannot be prepared.
    @inline(__always)
    func upsert(_ row: RowBatch.Row, cells: UnsafeBufferPointer<RowBatch.Cell>, arena: UnsafeRawPointer,
                last lastUpsert: inout LastUpsert?) throws -> Outcome {
        let statement: OpaquePointer
        if let last = lastUpsert, last.entity == row.entity, last.mask == row.mask, row.cellCount <= 64 {
            // Bulk data repeats the same shape: skip the hash lookups.
            statement = last.statement
        } else {
            let key = Key(row: row, cells: cells)
            if lacksRequired(key), let outcome = try updateExisting(key: key, row: row, cells: cells, arena: arena) {
                return outcome
            }
            statement = try upsertStatement(key, count: row.cellCount)
            if !lacksRequired(key) && key.wide == nil { lastUpsert = LastUpsert(entity: row.entity, mask: row.mask, statement: statement) }
        }
        var position: Int32 = 1
        for index in row.firstCell..<row.firstCell + row.cellCount {
            let cell = cells[index]
            guard cell.kind != .absent else { continue }
            bind(cell, at: position, to: statement, arena: arena)
            position += 1
        }
        // A sentinel rowid tells an insert (which sets the last rowid) from an update (which does not).
        let keyIndex = keyIndexes[row.entity]
        let keyCell = keyIndex < row.cellCount ? cells[row.firstCell + keyIndex] : RowBatch.Cell.absent
        let sentinel: Int64 = keyCell.kind == .integer && keyCell.payload == Int64.min ? Int64.max : Int64.min
        sqlite3_set_last_insert_rowid(connection, sentinel)
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else { throw failure() }
        if sqlite3_changes(connection) == 0 { return .unchanged }
        return sqlite3_last_insert_rowid(connection) == sentinel ? .updated : .inserted
    }

    /// Updates an existing row of a partial object; `nil` when there is no such row (insert it).
    private func updateExisting(key: Key, row: RowBatch.Row, cells: UnsafeBufferPointer<RowBatch.Cell>,
                                arena: UnsafeRawPointer) throws -> Outcome? {
        let entity = maps[key.entity].entity
        let keyIndexes = maps[key.entity].primaryKeyIndexes
        let keyCells = keyIndexes.map { index in
            let cell = cells[row.firstCell + index]
            return cell.kind == .absent ? RowBatch.Cell(kind: .null, length: 0, payload: 0) : cell
        }
        if let sql = Self.updateSQL(entity, present: Array(key.present.prefix(row.cellCount))) {
            let statement = try cached(&partialUpdates, key, sql)
            // The new values, then the key's parts (the differs test refers to the values by number).
            var position: Int32 = 1
            for index in 0..<row.cellCount where !keyIndexes.contains(index) {
                let cell = cells[row.firstCell + index]
                guard cell.kind != .absent else { continue }
                bind(cell, at: position, to: statement, arena: arena)
                position += 1
            }
            for keyCell in keyCells {
                bind(keyCell, at: position, to: statement, arena: arena)
                position += 1
            }
            let code = sqlite3_step(statement)
            sqlite3_reset(statement)
            guard code == SQLITE_DONE else { throw failure() }
            if sqlite3_changes(connection) > 0 { return .updated }
        }
        let probe: OpaquePointer
        if let statement = exists[key.entity] {
            probe = statement
        } else {
            probe = try prepare("SELECT 1 FROM \(entity.tableName.quotedIdentifier) WHERE \(Self.keyMatch(entity))")
            exists[key.entity] = probe
        }
        for (offset, keyCell) in keyCells.enumerated() { bind(keyCell, at: Int32(offset + 1), to: probe, arena: arena) }
        let code = sqlite3_step(probe)
        sqlite3_reset(probe)
        guard code == SQLITE_ROW || code == SQLITE_DONE else { throw failure() }
        return code == SQLITE_ROW ? .unchanged : nil
    }

    /// `"pk" = ?`, or for a composite key `"owner" = ? AND "repo" = ? AND "ref" = ?` (parts in key order).
    static func keyMatch(_ entity: Entity) -> String {
        entity.primaryKeyNames.map { "\($0.quotedIdentifier) = ?" }.joined(separator: " AND ")
    }

    private func cached(_ cache: inout [Key: OpaquePointer], _ key: Key, _ sql: String) throws -> OpaquePointer {
        if let statement = cache[key] { return statement }
        let statement = try prepare(sql)
        cache[key] = statement
        return statement
    }

    /// Deletes the row of entity `index` with primary key `key`.
    /// What replacing one parent's links changed: nothing, or the children linked and unlinked.
    struct LinkChange {
        var parent: AttributeValue
        var added: [AttributeValue] = []
        var removed: [AttributeValue] = []
        var isEmpty: Bool { added.isEmpty && removed.isEmpty }
    }

    /// Makes the links of a link row's parent exactly its children: reads the stored ones (one
    /// index range), then deletes those it no longer lists and inserts the new ones. Unchanged
    /// links write nothing.
    func replaceLinks(_ row: RowBatch.Row, cells: UnsafeBufferPointer<RowBatch.Cell>,
                      arena: UnsafeRawPointer) throws -> LinkChange {
        let sql = linkSQL[row.entity]
        let read = try cachedLink(&linkReads, row.entity, sql.read)
        let parentCell = cells[row.firstCell]
        bind(parentCell, at: 1, to: read, arena: arena)
        // A parent has a handful of links: arrays searched linearly, in the order stored and
        // listed (so change sets read the same each time), sets only for long lists.
        var stored: [AttributeValue] = []
        while true {
            let code = sqlite3_step(read)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                sqlite3_reset(read)
                throw failure()
            }
            stored.append(Self.column(read, 0))
        }
        sqlite3_reset(read)
        var wanted: [AttributeValue] = []
        wanted.reserveCapacity(row.cellCount - 1)
        for offset in 1..<max(1, row.cellCount) {
            wanted.append(Self.value(cells[row.firstCell + offset], arena: arena))
        }
        var change = LinkChange(parent: Self.value(parentCell, arena: arena))
        if stored.count + wanted.count <= 32 {
            for (index, child) in wanted.enumerated()
            where !wanted[..<index].contains(child) && !stored.contains(child) {
                change.added.append(child)
            }
            change.removed = stored.filter { !wanted.contains($0) }
        } else {
            let storedSet = Set(stored)
            var seen: Set<AttributeValue> = []
            for child in wanted where seen.insert(child).inserted && !storedSet.contains(child) { change.added.append(child) }
            change.removed = stored.filter { !seen.contains($0) }
        }
        guard !change.isEmpty else { return change }
        let delete = try cachedLink(&linkDeletes, row.entity, sql.delete)
        for child in change.removed { try stepLink(delete, change.parent, child) }
        let insert = try cachedLink(&linkInserts, row.entity, sql.insert)
        for child in change.added { try stepLink(insert, change.parent, child) }
        return change
    }

    private func cachedLink(_ cache: inout [Int: OpaquePointer], _ side: Int, _ sql: String) throws -> OpaquePointer {
        if let statement = cache[side] { return statement }
        let statement = try prepare(sql)
        cache[side] = statement
        return statement
    }

    private func stepLink(_ statement: OpaquePointer, _ parent: AttributeValue, _ child: AttributeValue) throws {
        bind(parent, at: 1, to: statement)
        bind(child, at: 2, to: statement)
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else { throw failure() }
    }

    /// A key cell as a value (keys are integers or text).
    private static func value(_ cell: RowBatch.Cell, arena: UnsafeRawPointer) -> AttributeValue {
        switch cell.kind {
        case .integer: return .integer(cell.payload)
        case .text:
            let bytes = UnsafeRawBufferPointer(start: arena + Int(cell.payload), count: Int(cell.length))
            return .string(String(decoding: bytes, as: UTF8.self))
        case .double: return .double(Double(bitPattern: UInt64(bitPattern: cell.payload)))
        case .absent, .null, .blob: return .null
        }
    }

    /// Column `index` of the current row of `statement` as a key value.
    static func column(_ statement: OpaquePointer, _ index: Int32) -> AttributeValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(statement, index))
            return .string(sqlite3_column_text(statement, index).map {
                String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
            } ?? "")
        case SQLITE_FLOAT: return .double(sqlite3_column_double(statement, index))
        default: return .null
        }
    }

    /// Deletes the links of row `key` of entity `index` in every join table holding its keys;
    /// returns the rows at the other end of each link removed (their links changed).
    private func unlink(entity index: Int, key: AttributeValue) throws -> [(entity: Int, key: AttributeValue)] {
        let columns = joinColumns[index]
        guard !columns.isEmpty else { return [] }
        let statements: [OpaquePointer]
        if let cached = unlinks[index] {
            statements = cached
        } else {
            statements = try columns.map {
                try prepare("DELETE FROM \($0.table.quotedIdentifier) WHERE \($0.column.quotedIdentifier) = ? RETURNING \($0.otherColumn.quotedIdentifier)")
            }
            unlinks[index] = statements
        }
        var reached: [(entity: Int, key: AttributeValue)] = []
        for (statement, join) in zip(statements, columns) {
            bind(key, at: 1, to: statement)
            var code = sqlite3_step(statement)
            while code == SQLITE_ROW {
                reached.append((entity: join.other, key: Self.column(statement, 0)))
                code = sqlite3_step(statement)
            }
            sqlite3_reset(statement)
            guard code == SQLITE_DONE else {
                throw SyncError(.database, "cannot unlink \(maps[index].entity.name) \(key): \(String(cString: sqlite3_errmsg(connection)))")
            }
        }
        return reached
    }

    /// Deletes one row and its links; returns the rows at the other end of the links removed.
    @discardableResult
    func delete(entity index: Int, key: AttributeValue) throws -> [(entity: Int, key: AttributeValue)] {
        let reached = try unlink(entity: index, key: key)
        let statement: OpaquePointer
        if let cached = deletes[index] {
            statement = cached
        } else {
            let entity = maps[index].entity
            statement = try prepare("DELETE FROM \(entity.tableName.quotedIdentifier) WHERE \(Self.keyMatch(entity))")
            deletes[index] = statement
        }
        if maps[index].entity.hasCompositeKey {
            // A composite key's tuple: its parts in key order (a value of another shape matches no row).
            let parts = key.compositeKeyParts ?? []
            for position in maps[index].primaryKeyIndexes.indices {
                bind(position < parts.count ? parts[position] : .null, at: Int32(position + 1), to: statement)
            }
        } else {
            bind(key, at: 1, to: statement)
        }
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else {
            throw SyncError(.database, "cannot delete \(maps[index].entity.name) \(key): \(String(cString: sqlite3_errmsg(connection)))")
        }
        return reached
    }

    private func bind(_ value: AttributeValue, at position: Int32, to statement: OpaquePointer) {
        switch value {
        case .null:
            sqlite3_bind_null(statement, position)
        case .integer(let i):
            sqlite3_bind_int64(statement, position, i)
        case .double(let d):
            sqlite3_bind_double(statement, position, d)
        case .bool(let b):
            sqlite3_bind_int64(statement, position, b ? 1 : 0)
        case .date(let date):
            sqlite3_bind_double(statement, position, date.timeIntervalSince1970)
        case .string(let s):
            bindText(s, at: position, to: statement)
        case .json(let json):
            bindText(json.serialized(), at: position, to: statement)
        case .data(let bytes):
            bytes.withUnsafeBytes { buffer in
                if let base = buffer.baseAddress, !buffer.isEmpty {
                    _ = sqlite3_bind_blob(statement, position, base, Int32(buffer.count), transient)
                } else {
                    _ = sqlite3_bind_zeroblob(statement, position, 0)
                }
            }
        }
    }

    /// Binds a cell; text and blobs point into `arena` (`SQLITE_STATIC`: SQLite does not copy them).
    @inline(__always)
    func bind(_ cell: RowBatch.Cell, at position: Int32, to statement: OpaquePointer, arena: UnsafeRawPointer) {
        switch cell.kind {
        case .absent:
            break
        case .null:
            sqlite3_bind_null(statement, position)
        case .integer:
            sqlite3_bind_int64(statement, position, cell.payload)
        case .double:
            sqlite3_bind_double(statement, position, Double(bitPattern: UInt64(bitPattern: cell.payload)))
        case .text:
            // The arena's first byte is always there, so even empty text has a valid pointer
            // (a null pointer would bind NULL).
            let text = (arena + Int(cell.payload)).assumingMemoryBound(to: CChar.self)
            sqlite3_bind_text(statement, position, text, cell.length, nil)
        case .blob:
            if cell.length == 0 {
                sqlite3_bind_zeroblob(statement, position, 0)
            } else {
                sqlite3_bind_blob(statement, position, arena + Int(cell.payload), cell.length, nil)
            }
        }
    }

    private func bindText(_ text: String, at position: Int32, to statement: OpaquePointer) {
        var text = text
        text.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { chars in
                if let base = chars.baseAddress {
                    _ = sqlite3_bind_text(statement, position, base, Int32(chars.count), transient)
                } else {
                    _ = sqlite3_bind_text(statement, position, "", 0, transient)
                }
            }
        }
    }
}
