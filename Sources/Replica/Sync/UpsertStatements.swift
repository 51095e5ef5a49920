import Foundation
import GRDB
import GRDBSQLite

/// The prepared statements of one write transaction: one upsert per entity and set of
/// present attributes, reused for every row, with values bound straight onto the statement.
///
/// Not thread-safe: it lives on the writer queue for the length of one transaction.
final class UpsertStatements {
    enum Outcome { case inserted, updated, unchanged }

    /// The statement cache key: the entity and which attributes are present (a bit mask for up
    /// to 64 attributes, so that looking a statement up costs no allocation).
    struct Key: Hashable {
        var entity: Int
        var mask: UInt64
        var wide: [Bool]?

        init(entity: Int, values: [AttributeValue?]) {
            self.entity = entity
            if values.count <= 64 {
                var mask: UInt64 = 0
                for (index, value) in values.enumerated() where value != nil { mask |= 1 << UInt64(index) }
                self.mask = mask
                self.wide = nil
            } else {
                self.mask = 0
                self.wide = values.map { $0 != nil }
            }
        }

        var present: [Bool] {
            wide ?? (0..<64).map { mask & (1 << UInt64($0)) != 0 }
        }
    }

    private let connection: OpaquePointer
    private let maps: [PropertyMap]
    private var upserts: [Key: OpaquePointer] = [:]
    /// For objects lacking a non-null attribute without default: UPDATE, then INSERT if no row.
    private var partialUpdates: [Key: OpaquePointer] = [:]
    private var exists: [Int: OpaquePointer] = [:]
    private var deletes: [Int: OpaquePointer] = [:]
    /// `SQLITE_TRANSIENT`: SQLite copies bound text and blobs.
    private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(db: Database, maps: [PropertyMap]) throws {
        guard let connection = db.sqliteConnection else {
            throw SyncError(.database, "the database connection is closed")
        }
        self.connection = connection
        self.maps = maps
    }

    deinit {
        for statement in upserts.values { sqlite3_finalize(statement) }
        for statement in partialUpdates.values { sqlite3_finalize(statement) }
        for statement in exists.values { sqlite3_finalize(statement) }
        for statement in deletes.values { sqlite3_finalize(statement) }
    }

    /// `INSERT … ON CONFLICT(pk) DO UPDATE SET … WHERE` some value differs: an unchanged row writes nothing.
    static func upsertSQL(_ entity: Entity, present: [Bool]) -> String {
        let columns = zip(entity.attributes, present).filter(\.1).map(\.0.name)
        let quoted = columns.map(\.quotedIdentifier)
        let key = entity.primaryKey.quotedIdentifier
        var sql = "INSERT INTO \(entity.tableName.quotedIdentifier) (\(quoted.joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ") ON CONFLICT(\(key)) DO "
        let updated = quoted.filter { $0 != key }
        if updated.isEmpty { return sql + "NOTHING" }
        sql += "UPDATE SET " + updated.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        sql += " WHERE " + updated.map { "\($0) IS NOT excluded.\($0)" }.joined(separator: " OR ")
        return sql
    }

    private func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw SyncError(.database, "cannot prepare statement: \(String(cString: sqlite3_errmsg(connection)))")
        }
        return statement
    }

    private var lastUpsert: (key: Key, statement: OpaquePointer)?

    private func upsertStatement(_ key: Key, values: [AttributeValue?]) throws -> OpaquePointer {
        if let cached = upserts[key] { return cached }
        let statement = try prepare(Self.upsertSQL(maps[key.entity].entity, present: Array(key.present.prefix(values.count))))
        upserts[key] = statement
        return statement
    }

    /// `UPDATE … SET present = ? WHERE pk = ? AND` some value differs.
    static func updateSQL(_ entity: Entity, present: [Bool]) -> String? {
        let key = entity.primaryKey
        let columns = zip(entity.attributes, present).filter { $0.1 && $0.0.name != key }.map(\.0.name.quotedIdentifier)
        guard !columns.isEmpty else { return nil }
        return "UPDATE \(entity.tableName.quotedIdentifier) SET " + columns.map { "\($0) = ?" }.joined(separator: ", ")
            + " WHERE \(key.quotedIdentifier) = ? AND (" + columns.map { "\($0) IS NOT ?" }.joined(separator: " OR ") + ")"
    }

    private var lacking: [Key: Bool] = [:]

    /// Whether an insert of these present attributes would break a NOT NULL constraint, so an
    /// existing row must be updated without trying to insert first.
    private func lacksRequired(_ key: Key) -> Bool {
        if let known = lacking[key] { return known }
        let entity = maps[key.entity].entity
        let result = zip(entity.attributes, key.present).contains { attribute, isPresent in
            !isPresent && !attribute.isNullable && (attribute.defaultValue == nil || attribute.defaultValue == .null)
        }
        lacking[key] = result
        return result
    }

    /// Upserts one row; `values[i] == nil` leaves attribute `i` untouched on update.
    func upsert(entity index: Int, values: [AttributeValue?]) throws -> Outcome {
        let key = Key(entity: index, values: values)
        let statement: OpaquePointer
        if let last = lastUpsert, last.key == key {
            // Bulk data repeats the same shape: skip the hash lookups.
            statement = last.statement
        } else {
            if lacksRequired(key), let outcome = try updateExisting(key: key, values: values) {
                return outcome
            }
            statement = try upsertStatement(key, values: values)
            if !lacksRequired(key) { lastUpsert = (key, statement) }
        }
        var position: Int32 = 1
        for value in values {
            guard let value else { continue }
            bind(value, at: position, to: statement)
            position += 1
        }
        // A sentinel rowid tells an insert (which sets the last rowid) from an update (which does not).
        let primaryKey = values[maps[index].primaryKeyIndex]
        let sentinel: Int64 = primaryKey == .integer(Int64.min) ? Int64.max : Int64.min
        sqlite3_set_last_insert_rowid(connection, sentinel)
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        guard code == SQLITE_DONE else {
            let entity = maps[index].entity
            throw SyncError(.database, "\(entity.name) \(primaryKey.map(String.init(describing:)) ?? "without key"): "
                            + String(cString: sqlite3_errmsg(connection)))
        }
        if sqlite3_changes(connection) == 0 { return .unchanged }
        return sqlite3_last_insert_rowid(connection) == sentinel ? .updated : .inserted
    }

    /// Updates an existing row of a partial object; `nil` when there is no such row (insert it).
    private func updateExisting(key: Key, values: [AttributeValue?]) throws -> Outcome? {
        let entity = maps[key.entity].entity
        let primaryKey = values[maps[key.entity].primaryKeyIndex] ?? .null
        if let sql = Self.updateSQL(entity, present: Array(key.present.prefix(values.count))) {
            let statement = try cached(&partialUpdates, key, sql)
            let changed = values.enumerated().compactMap { index, value -> AttributeValue? in
                index == maps[key.entity].primaryKeyIndex ? nil : value
            }
            var position: Int32 = 1
            for value in changed { bind(value, at: position, to: statement); position += 1 }
            bind(primaryKey, at: position, to: statement)
            position += 1
            for value in changed { bind(value, at: position, to: statement); position += 1 }
            try step(statement, entity: entity, key: primaryKey)
            if sqlite3_changes(connection) > 0 { return .updated }
        }
        let probe: OpaquePointer
        if let statement = exists[key.entity] {
            probe = statement
        } else {
            probe = try prepare("SELECT 1 FROM \(entity.tableName.quotedIdentifier) WHERE \(entity.primaryKey.quotedIdentifier) = ?")
            exists[key.entity] = probe
        }
        bind(primaryKey, at: 1, to: probe)
        let found = sqlite3_step(probe) == SQLITE_ROW
        sqlite3_reset(probe)
        return found ? .unchanged : nil
    }

    private func cached(_ cache: inout [Key: OpaquePointer], _ key: Key, _ sql: String) throws -> OpaquePointer {
        if let statement = cache[key] { return statement }
        let statement = try prepare(sql)
        cache[key] = statement
        return statement
    }

    private func step(_ statement: OpaquePointer, entity: Entity, key: AttributeValue) throws {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        guard code == SQLITE_DONE else {
            throw SyncError(.database, "\(entity.name) \(key): " + String(cString: sqlite3_errmsg(connection)))
        }
    }

    /// Deletes the row of entity `index` with primary key `key`.
    func delete(entity index: Int, key: AttributeValue) throws {
        let statement: OpaquePointer
        if let cached = deletes[index] {
            statement = cached
        } else {
            let entity = maps[index].entity
            statement = try prepare("DELETE FROM \(entity.tableName.quotedIdentifier) WHERE \(entity.primaryKey.quotedIdentifier) = ?")
            deletes[index] = statement
        }
        bind(key, at: 1, to: statement)
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else {
            throw SyncError(.database, "cannot delete \(maps[index].entity.name) \(key): \(String(cString: sqlite3_errmsg(connection)))")
        }
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
