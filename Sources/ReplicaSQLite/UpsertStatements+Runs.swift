import Foundation
import GRDB
import GRDBSQLite
import ReplicaCore

/// Runs of rows: many consecutive rows of one entity and shape, read and written with a few
/// statements instead of one each.
///
/// A bulk import or a page of a collection is thousands of objects of one entity whose integer
/// keys lie close together. For such a run, one range scan (`SELECT "id", … WHERE "id" BETWEEN ?
/// AND ?`) reads the stored rows among the run's keys, each is compared with its new row in
/// memory, and only the new and changed rows are written, ``runRowsPerStatement`` to a multi-row
/// upsert (`INSERT … VALUES (…), (…), … ON CONFLICT("id") DO UPDATE SET …`). SQLite's cost per
/// statement (a program started and halted, a cursor opened, positioned from the root and closed)
/// is then paid once per 32 rows; an unchanged row costs one step of the scan instead of a key
/// lookup; and each row's outcome (inserted, updated, unchanged) is what the scan found.
///
/// The comparison decides only what it can decide exactly as the where-differs upsert's
/// `IS NOT` would: equal or different values of the same storage class, and `NULL` against a
/// value. A row with any other pair (a stored value of another type than the new one, which
/// the column's affinity might convert) is written by ``upsert(_:cells:arena:last:)``, one
/// row, as before. A run whose keys repeat, or lie too far apart for a scan to pay, is left to
/// that path whole.
extension UpsertStatements {
    /// A run statement's cache key: the run's shape, and for writes the rows per statement.
    struct RunStatementKey: Hashable {
        var shape: Key
        var rows: Int
    }

    /// Rows per multi-row upsert: past about 32, a longer statement saves nothing more (measured
    /// with SQLite 3.40 on 5 columns), and its text and program grow with it. Fewer when SQLite's
    /// limit on bound parameters would be passed.
    static let runRowsPerStatement = 32

    /// Runs shorter than this go row by row: a scan and a statement of their own would not pay.
    static let minimumRunLength = 16

    /// What the scan found for one row of a run.
    private enum Plan: UInt8 {
        /// No stored row has the key.
        case insert
        /// The stored row differs in a present attribute.
        case update
        /// The stored row holds every present value already.
        case unchanged
        /// The comparison cannot tell as SQLite would: written by the one-row upsert.
        case exact
    }

    /// Writes rows `range` of `rows` (consecutive, of one entity with a single integer key, the
    /// same present attributes, every key an integer cell), setting `outcomes[i]` to the outcome
    /// of row `range.lowerBound + i`.
    ///
    /// - Returns: `false`, having read and written nothing, when the run cannot be written this
    ///   way: a key repeats, the keys span more than four times their count, or the shape lacks
    ///   a required attribute (such rows update without inserting, one by one).
    /// - Throws: ``RowFailure`` with the failing row's index in `rows` when SQLite refuses a
    ///   row; ``SyncError`` when a statement cannot be prepared or the scan fails.
    func writeRun(_ rows: UnsafeBufferPointer<RowBatch.Row>, _ range: Range<Int>, cells: UnsafeBufferPointer<RowBatch.Cell>,
                  arena: UnsafeRawPointer, outcomes: inout [Outcome]) throws -> Bool {
        let first = rows[range.lowerBound]
        let shape = Key(row: first, cells: cells)
        guard shape.wide == nil, !lacksRequired(shape) else { return false }
        let keyIndex = keyIndexes[first.entity]
        let count = range.count
        guard count > 0 else { return false }
        var keys: [Int64] = []
        keys.reserveCapacity(count)
        for index in range { keys.append(cells[rows[index].firstCell + keyIndex].payload) }
        // The run's offsets in key order: as they are when the keys ascend (the usual case).
        var order: [Int] = Array(0..<count)
        if !keys.isStrictlyIncreasing {
            order.sort { keys[$0] < keys[$1] }
            for position in 1..<count where keys[order[position - 1]] == keys[order[position]] { return false }
        }
        guard let low = order.first.map({ keys[$0] }), let high = order.last.map({ keys[$0] }) else { return false }
        let (span, overflow) = high.subtractingReportingOverflow(low)
        guard !overflow, span < 4 * Int64(count) else { return false }

        var plans = [Plan](repeating: .insert, count: count)
        try scan(shape, low: low, high: high, keys: keys, order: order, rows: rows, range: range, cells: cells,
                 arena: arena, plans: &plans)

        if outcomes.count < count { outcomes = [Outcome](repeating: .unchanged, count: count) }
        // Fewer rows a statement where SQLite allows fewer bound parameters (999 before 3.32).
        let present = shape.present.prefix(first.cellCount).filter { $0 }.count
        let limit = Int(sqlite3_limit(connection, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
        let perStatement = Self.rowsPerStatement(present: present, parameterLimit: limit)
        var pending: [Int] = []
        pending.reserveCapacity(perStatement)
        var exact: [Int] = []
        for offset in 0..<count {
            switch plans[offset] {
            case .unchanged:
                outcomes[offset] = .unchanged
            case .exact:
                exact.append(offset)
            case .insert, .update:
                outcomes[offset] = plans[offset] == .insert ? .inserted : .updated
                pending.append(offset)
                if pending.count == perStatement {
                    try write(pending, perStatement: perStatement, shape: shape, rows: rows, range: range, cells: cells, arena: arena)
                    pending.removeAll(keepingCapacity: true)
                }
            }
        }
        if !pending.isEmpty {
            try write(pending, perStatement: perStatement, shape: shape, rows: rows, range: range, cells: cells, arena: arena)
        }
        var last: LastUpsert?
        for offset in exact {
            do {
                outcomes[offset] = try upsert(rows[range.lowerBound + offset], cells: cells, arena: arena, last: &last)
            } catch var failure as RowFailure {
                failure.row = range.lowerBound + offset
                throw failure
            }
        }
        return true
    }

    /// Reads the stored rows with keys from `low` to `high` and plans each of the run's rows.
    private func scan(_ shape: Key, low: Int64, high: Int64, keys: [Int64], order: [Int],
                      rows: UnsafeBufferPointer<RowBatch.Row>, range: Range<Int>, cells: UnsafeBufferPointer<RowBatch.Cell>,
                      arena: UnsafeRawPointer, plans: inout [Plan]) throws {
        let entity = maps[shape.entity].entity
        let compared = Self.comparedAttributes(entity, present: shape.present)
        let statement = try runStatement(&runScans, shape, Self.runScanSQL(entity, compared: compared))
        sqlite3_bind_int64(statement, 1, low)
        sqlite3_bind_int64(statement, 2, high)
        defer { sqlite3_reset(statement) }
        var cursor = 0
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw SyncError(.database, "cannot read the stored rows of \(entity.name): \(String(cString: sqlite3_errmsg(connection)))")
            }
            let stored = sqlite3_column_int64(statement, 0)
            while cursor < order.count && keys[order[cursor]] < stored { cursor += 1 }
            guard cursor < order.count else { break }
            let offset = order[cursor]
            guard keys[offset] == stored, sqlite3_column_type(statement, 0) == SQLITE_INTEGER else { continue }
            cursor += 1
            let row = rows[range.lowerBound + offset]
            // One certain difference decides the row (every present value is written either way);
            // without one, a pair the comparison cannot decide sends it to the one-row upsert.
            var plan = Plan.unchanged
            columns: for (column, attribute) in compared.enumerated() {
                switch Self.same(statement, Int32(column + 1), cells[row.firstCell + attribute], arena: arena) {
                case true?: continue
                case false?:
                    plan = .update
                    break columns
                case nil: plan = .exact
                }
            }
            plans[offset] = plan
        }
    }

    /// Writes the rows at `offsets` of the run with one multi-row upsert of `full` rows (one row
    /// apiece when they are fewer). When SQLite refuses the statement (which it then undoes
    /// whole), the rows are written one by one, so that the error names the row.
    private func write(_ offsets: [Int], perStatement full: Int, shape: Key, rows: UnsafeBufferPointer<RowBatch.Row>,
                       range: Range<Int>, cells: UnsafeBufferPointer<RowBatch.Cell>, arena: UnsafeRawPointer) throws {
        let perStatement = offsets.count == full ? full : 1
        let entity = maps[shape.entity].entity
        let present = shape.present
        let statement = try runStatement(&runWrites, RunStatementKey(shape: shape, rows: perStatement),
                                         Self.multiRowUpsertSQL(entity, present: present, rows: perStatement))
        var start = 0
        while start < offsets.count {
            var position: Int32 = 1
            for offset in offsets[start..<start + perStatement] {
                let row = rows[range.lowerBound + offset]
                for index in row.firstCell..<row.firstCell + row.cellCount where cells[index].kind != .absent {
                    bind(cells[index], at: position, to: statement, arena: arena)
                    position += 1
                }
            }
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE {
                sqlite3_reset(statement)
            } else {
                // Only a row's own failure is retried row by row, to name the row; after any other
                // SQLite may have rolled the transaction back, and a statement more would run
                // (and commit) on its own.
                let failure = failure()
                sqlite3_reset(statement)
                guard failure.isStatementOnly else { throw failure }
                var last: LastUpsert?
                for offset in offsets[start..<start + perStatement] {
                    do {
                        _ = try upsert(rows[range.lowerBound + offset], cells: cells, arena: arena, last: &last)
                    } catch var failure as RowFailure {
                        failure.row = range.lowerBound + offset
                        throw failure
                    }
                }
            }
            start += perStatement
        }
    }

    /// Rows per multi-row upsert of `present` attributes under SQLite's `parameterLimit`
    /// (`SQLITE_LIMIT_VARIABLE_NUMBER`): ``runRowsPerStatement``, fewer for wide rows, at least one.
    ///
    /// ```swift
    /// UpsertStatements.rowsPerStatement(present: 8, parameterLimit: 999)   // 32
    /// UpsertStatements.rowsPerStatement(present: 64, parameterLimit: 999)  // 15
    /// ```
    static func rowsPerStatement(present: Int, parameterLimit: Int) -> Int {
        max(1, min(runRowsPerStatement, parameterLimit / max(1, present)))
    }

    private func runStatement<K: Hashable>(_ cache: inout [K: OpaquePointer], _ key: K, _ sql: @autoclosure () -> String) throws -> OpaquePointer {
        if let statement = cache[key] { return statement }
        let statement = try prepare(sql())
        cache[key] = statement
        return statement
    }

    /// The present attributes other than the key, by index: what a run compares and updates.
    static func comparedAttributes(_ entity: Entity, present: [Bool]) -> [Int] {
        entity.attributes.indices.filter { $0 < present.count && present[$0] && !entity.isKeyAttribute(entity.attributes[$0].name) }
    }

    /// `SELECT "id", "name", … FROM "people" WHERE "id" BETWEEN ?1 AND ?2 ORDER BY "id"`: the key,
    /// then the compared attributes in `compared`'s order.
    static func runScanSQL(_ entity: Entity, compared: [Int]) -> String {
        let key = entity.primaryKey.quotedIdentifier
        let columns = [key] + compared.map { entity.attributes[$0].name.quotedIdentifier }
        return "SELECT \(columns.joined(separator: ", ")) FROM \(entity.tableName.quotedIdentifier) "
            + "WHERE \(key) BETWEEN ?1 AND ?2 ORDER BY \(key)"
    }

    /// `INSERT INTO "people" ("id", "name") VALUES (?, ?), (?, ?) ON CONFLICT("id") DO UPDATE SET
    /// "name" = excluded."name"`: `rows` rows of the present attributes, every value written (the
    /// scan has found that the row is new or differs).
    static func multiRowUpsertSQL(_ entity: Entity, present: [Bool], rows: Int) -> String {
        let columns = zip(entity.attributes, present).filter(\.1).map(\.0.name.quotedIdentifier)
        let keys = entity.primaryKeyNames.map(\.quotedIdentifier)
        let tuple = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let updated = columns.filter { !keys.contains($0) }
        return "INSERT INTO \(entity.tableName.quotedIdentifier) (\(columns.joined(separator: ", "))) VALUES "
            + Array(repeating: tuple, count: rows).joined(separator: ", ")
            + " ON CONFLICT(\(keys.joined(separator: ", "))) DO "
            + (updated.isEmpty ? "NOTHING" : "UPDATE SET " + updated.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
    }

    /// Whether stored column `column` of the scan's current row holds `cell`'s value, as
    /// `stored IS NOT new` would decide it: `true` or `false` when the two are of one storage
    /// class or one is `NULL`; `nil` when SQLite's affinity might make them equal (an integer
    /// stored where a double comes, text where a number comes).
    @inline(__always)
    static func same(_ statement: OpaquePointer, _ column: Int32, _ cell: RowBatch.Cell, arena: UnsafeRawPointer) -> Bool? {
        let type = sqlite3_column_type(statement, column)
        switch cell.kind {
        case .absent:
            return true
        case .null:
            return type == SQLITE_NULL
        case .integer:
            if type == SQLITE_INTEGER { return sqlite3_column_int64(statement, column) == cell.payload }
            return type == SQLITE_NULL ? false : nil
        case .double:
            let value = Double(bitPattern: UInt64(bitPattern: cell.payload))
            // SQLite binds NaN as NULL.
            if value.isNaN { return nil }
            if type == SQLITE_FLOAT { return sqlite3_column_double(statement, column) == value }
            return type == SQLITE_NULL ? false : nil
        case .text, .blob:
            let expected = cell.kind == .text ? SQLITE_TEXT : SQLITE_BLOB
            guard type == expected else { return type == SQLITE_NULL ? false : nil }
            let bytes = expected == SQLITE_TEXT ? UnsafeRawPointer(sqlite3_column_text(statement, column))
                : sqlite3_column_blob(statement, column)
            let length = Int(sqlite3_column_bytes(statement, column))
            guard length == Int(cell.length) else { return false }
            guard length > 0, let bytes else { return true }
            return memcmp(bytes, arena + Int(cell.payload), length) == 0
        }
    }
}
