import Foundation
import GRDB
import GRDBSQLite
import ReplicaCore

/// The writer side of one response: upserts planned rows inside the transaction, records
/// what changed, and deletes stale rows of complete collections.
final class RowWriter {
    private let db: Database
    private let maps: [PropertyMap]
    private let statements: UpsertStatements
    /// Changes by entity index.
    private var changes: [EntityChanges]
    /// Keys of top-level rows by entity index, for stale-row deletion (only for tracked entities).
    private var seen: [PrimaryKeys]
    private let tracked: [Bool]
    /// The primary key's attribute index by entity index.
    private let keyIndexes: [Int]
    /// The values last written in this transaction of nested rows (children objects) with integer
    /// keys, by entity index and key, in ``content(of:cells:arena:)``'s form; at most
    /// ``nestedMemoLimit`` of them. A top-level row of the same key forgets its entry.
    private var nested: [[Int64: [UInt8]]]
    private var nestedCount = 0
    static let nestedMemoLimit = 65_536

    init(db: Database, mapping: SchemaMapping, trackSeen tracked: Set<Int>) throws {
        let maps = mapping.maps
        self.db = db
        self.maps = maps
        self.statements = try UpsertStatements(db: db, mapping: mapping)
        self.changes = Array(repeating: EntityChanges(), count: maps.count)
        self.seen = Array(repeating: PrimaryKeys(), count: maps.count)
        self.tracked = maps.indices.map { tracked.contains($0) }
        self.keyIndexes = maps.map(\.primaryKeyIndex)
        self.nested = Array(repeating: [:], count: maps.count)
    }

    /// Upserts every row of `batch`, recording inserted and updated keys and, for tracked
    /// entities, the keys of top-level rows.
    func write(_ batch: RowBatch) throws {
        let hasOtherKeys = !batch.otherKeys.isEmpty
        // The per-row state lives in locals for the batch: class properties touched per row
        // would each cost a dynamic exclusivity check.
        var changes: [EntityChanges] = []
        var seen: [PrimaryKeys] = []
        var nested: [[Int64: [UInt8]]] = []
        var nestedCount = self.nestedCount
        swap(&changes, &self.changes)
        swap(&seen, &self.seen)
        swap(&nested, &self.nested)
        defer {
            swap(&changes, &self.changes)
            swap(&seen, &self.seen)
            swap(&nested, &self.nested)
            self.nestedCount = nestedCount
        }
        var last: UpsertStatements.LastUpsert? = nil
        // Rows before this index were found to be no run (or part of a shorter one): row by row.
        var rowByRowUntil = 0
        var outcomes: [UpsertStatements.Outcome] = []
        try batch.rows.withUnsafeBufferPointer { rows in
            try batch.cells.withUnsafeBufferPointer { cells in
                try batch.arena.withUnsafeBytes { arena in
                    // The arena always holds at least one byte.
                    guard let base = arena.baseAddress else { return }
                    var index = rows.startIndex
                    while index < rows.endIndex {
                        defer { index += 1 }
                        let row = rows[index]
                        if index >= rowByRowUntil && !hasOtherKeys, let end = runEnd(rows, from: index, cells: cells) {
                            let written: Bool
                            do {
                                written = try statements.writeRun(rows, index..<end, cells: cells, arena: base, outcomes: &outcomes)
                            } catch let failure as UpsertStatements.RowFailure {
                                let failed = failure.row ?? index
                                let key = batch.key(ofRow: failed, keyIndex: keyIndexes[row.entity]).description
                                throw SyncError(.database, "\(maps[row.entity].entity.name) \(key): \(failure.message)")
                            }
                            if written {
                                let keyIndex = keyIndexes[row.entity]
                                let isSeen = tracked[row.entity]
                                for offset in 0..<(end - index) {
                                    let key = cells[rows[index + offset].firstCell + keyIndex].payload
                                    if !nested[row.entity].isEmpty { nested[row.entity][key] = nil }
                                    switch outcomes[offset] {
                                    case .inserted: changes[row.entity].inserted.integers.append(key)
                                    case .updated: changes[row.entity].updated.integers.append(key)
                                    case .unchanged: break
                                    }
                                    if isSeen { seen[row.entity].integers.append(key) }
                                }
                                index = end - 1
                                continue
                            }
                            rowByRowUntil = end
                        }
                        if row.isLinks {
                            try writeLinks(row, cells: cells, arena: base, batch: batch, changes: &changes)
                            continue
                        }
                        let keyIndex = keyIndexes[row.entity]
                        let keyCell = keyIndex < row.cellCount ? cells[row.firstCell + keyIndex] : RowBatch.Cell.absent
                        // A nested child many parents repeat (a label on every issue): once its very
                        // values are written, the same values again change nothing.
                        var content: [UInt8]?
                        if keyCell.kind == .integer {
                            // Any other write of the key forgets what was remembered of it.
                            if !row.isTopLevel && !hasOtherKeys {
                                let bytes = Self.content(of: row, cells: cells, arena: base)
                                if nested[row.entity][keyCell.payload] == bytes { continue }
                                content = bytes
                            } else if !nested[row.entity].isEmpty {
                                nested[row.entity][keyCell.payload] = nil
                            }
                        }
                        let outcome: UpsertStatements.Outcome
                        do {
                            outcome = try statements.upsert(row, cells: cells, arena: base, last: &last)
                        } catch let failure as UpsertStatements.RowFailure {
                            let key = keyCell.kind == .absent ? "without key" : batch.key(ofRow: index, keyIndex: keyIndex).description
                            throw SyncError(.database, "\(maps[row.entity].entity.name) \(key): \(failure.message)")
                        }
                        if let content {
                            if nestedCount < Self.nestedMemoLimit || nested[row.entity][keyCell.payload] != nil {
                                if nested[row.entity].updateValue(content, forKey: keyCell.payload) == nil { nestedCount += 1 }
                            } else {
                                nested[row.entity][keyCell.payload] = nil
                            }
                        }
                        let isSeen = row.isTopLevel && tracked[row.entity]
                        guard outcome != .unchanged || isSeen else { continue }
                        if keyCell.kind == .integer && !hasOtherKeys {
                            let key = keyCell.payload
                            switch outcome {
                            case .inserted: changes[row.entity].inserted.integers.append(key)
                            case .updated: changes[row.entity].updated.integers.append(key)
                            case .unchanged: break
                            }
                            if isSeen { seen[row.entity].integers.append(key) }
                            continue
                        }
                        let key = batch.key(ofRow: index, keyIndex: keyIndex)
                        switch outcome {
                        case .inserted: changes[row.entity].inserted.append(key)
                        case .updated: changes[row.entity].updated.append(key)
                        case .unchanged: break
                        }
                        if isSeen { seen[row.entity].append(key) }
                    }
                }
            }
        }
    }

    /// Where the run of rows starting at `start` ends, when it is long enough to be written
    /// together (``UpsertStatements/writeRun(_:_:cells:arena:outcomes:)``): consecutive top-level
    /// rows of one entity with a single integer key, the same attributes present and an integer
    /// key cell each.
    private func runEnd(_ rows: UnsafeBufferPointer<RowBatch.Row>, from start: Int,
                        cells: UnsafeBufferPointer<RowBatch.Cell>) -> Int? {
        let first = rows[start]
        guard first.isTopLevel, !first.isLinks, first.cellCount <= 64, rows.count - start >= UpsertStatements.minimumRunLength,
              !maps[first.entity].entity.hasCompositeKey else { return nil }
        let keyIndex = keyIndexes[first.entity]
        guard keyIndex < first.cellCount else { return nil }
        var end = start
        while end < rows.count {
            let row = rows[end]
            guard row.entity == first.entity, row.mask == first.mask, row.cellCount == first.cellCount, row.isTopLevel,
                  !row.isLinks, cells[row.firstCell + keyIndex].kind == .integer else { break }
            end += 1
        }
        return end - start >= UpsertStatements.minimumRunLength ? end : nil
    }

    /// A row's cells and their text and blob bytes, exactly: equal for rows that write the same values.
    private static func content(of row: RowBatch.Row, cells: UnsafeBufferPointer<RowBatch.Cell>,
                                arena: UnsafeRawPointer) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(row.cellCount * 10)
        for index in row.firstCell..<row.firstCell + row.cellCount {
            let cell = cells[index]
            bytes.append(cell.kind.rawValue)
            switch cell.kind {
            case .absent, .null: break
            case .integer, .double: withUnsafeBytes(of: cell.payload) { bytes.append(contentsOf: $0) }
            case .text, .blob:
                withUnsafeBytes(of: cell.length) { bytes.append(contentsOf: $0) }
                bytes.append(contentsOf: UnsafeRawBufferPointer(start: arena + Int(cell.payload), count: Int(cell.length)))
            }
        }
        return bytes
    }

    /// Replaces the links of a link row's parent. When they change, the parent and each child
    /// linked or unlinked count as updated (as Core Data reports both ends of a changed
    /// relationship): live result sets over either entity look at them again.
    private func writeLinks(_ row: RowBatch.Row, cells: UnsafeBufferPointer<RowBatch.Cell>, arena: UnsafeRawPointer,
                            batch: RowBatch, changes: inout [EntityChanges]) throws {
        let side = statements.links[row.entity]
        let linked: UpsertStatements.LinkChange
        do {
            linked = try statements.replaceLinks(row, cells: cells, arena: arena)
        } catch let failure as UpsertStatements.RowFailure {
            let parent = batch.value(of: cells[row.firstCell]) ?? .null
            throw SyncError(.database, "\(maps[side.parent].entity.name) \(parent), links '\(side.relationship)' "
                            + "(\(side.table)): \(failure.message)")
        }
        guard !linked.isEmpty else { return }
        changes[side.parent].updated.append(linked.parent)
        for child in linked.added { changes[side.child].updated.append(child) }
        for child in linked.removed { changes[side.child].updated.append(child) }
    }

    /// The keys of top-level rows of `entity` written so far (tracked entities only).
    func seenKeys(of entity: Int) -> PrimaryKeys { seen[entity] }

    /// Finalizes the writer's prepared statements: call it on the connection's queue once the
    /// transaction is done (``UpsertStatements/finalize()``).
    func close() {
        statements.finalize()
    }

    /// Deletes rows of `entity` inside `scope` whose keys are not in `seenKeys`.
    ///
    /// When `allStored` says every key of `seenKeys` names a row this transaction wrote (no
    /// keys vouched for by unchanged pages, none of skipped objects), an unscoped collection
    /// has nothing stale when its table holds no other key: when the seen integer keys are a
    /// dense range from the table's smallest key to its largest (two index lookups, whatever
    /// the table's size), or when the table holds exactly as many rows as distinct keys were
    /// seen (a count, which reads every page of the table). Otherwise the scope's keys are
    /// read once and looked up in the sorted seen keys.
    func deleteStale(entity: Int, scope: RouteScope?, keeping seenKeys: PrimaryKeys, allStored: Bool = false) throws {
        let map = maps[entity]
        if map.entity.hasCompositeKey {
            try deleteStaleTuples(entity: entity, scope: scope, keeping: seenKeys)
            return
        }
        let table = map.entity.tableName.quotedIdentifier
        let keyColumn = map.entity.primaryKey.quotedIdentifier
        let (condition, arguments) = scope?.whereClause ?? ("1", [])
        var integers = seenKeys.integers
        // Keys usually arrive in order (pages sorted by id): then they are used as they are, uncopied.
        if !integers.isStrictlyIncreasing {
            integers.sort()
            integers.removeDuplicatesFromSorted()
        }
        let strings = Set(seenKeys.strings)
        if allStored && arguments.isEmpty {
            if strings.isEmpty, let first = integers.first, let last = integers.last,
               case let (span, overflow) = last.subtractingReportingOverflow(first), !overflow, span == integers.count - 1,
               // Two subqueries: SQLite answers a lone min() or max() from the index, but scans the
               // whole table for `SELECT min(k), max(k)`.
               let bounds = try Row.fetchOne(db, sql: "SELECT (SELECT min(\(keyColumn)) FROM \(table)), (SELECT max(\(keyColumn)) FROM \(table))"),
               (bounds[0] as DatabaseValue) == first.databaseValue, (bounds[1] as DatabaseValue) == last.databaseValue {
                return
            }
            let stored = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
            if stored == integers.count + strings.count { return }
        }
        let statement = try db.makeStatement(sql: "SELECT \(keyColumn) FROM \(table) WHERE \(condition)")
        try statement.setArguments(StatementArguments(arguments.map(\.databaseValue)))
        let handle = statement.sqliteStatement
        var stale: [AttributeValue] = []
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw SyncError(.database, "cannot read the keys of \(map.entity.name): \(String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))")
            }
            switch sqlite3_column_type(handle, 0) {
            case SQLITE_INTEGER:
                let key = sqlite3_column_int64(handle, 0)
                if !integers.containsSorted(key) { stale.append(.integer(key)) }
            case SQLITE_TEXT:
                // Read by length: text keys may hold NUL bytes.
                let count = Int(sqlite3_column_bytes(handle, 0))
                let key = sqlite3_column_text(handle, 0).map {
                    String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
                } ?? ""
                if !strings.contains(key) { stale.append(.string(key)) }
            default:
                break
            }
        }
        sqlite3_reset(handle)
        for key in stale {
            record(try statements.delete(entity: entity, key: key))
            changes[entity].deleted.append(key)
        }
    }

    /// ``deleteStale(entity:scope:keeping:allStored:)`` for a composite key: reads the key tuples
    /// inside the scope and deletes those not seen, whole tuples compared.
    private func deleteStaleTuples(entity: Int, scope: RouteScope?, keeping seenKeys: PrimaryKeys) throws {
        let map = maps[entity]
        let columns = map.entity.primaryKeyNames.map(\.quotedIdentifier).joined(separator: ", ")
        let (condition, arguments) = scope?.whereClause ?? ("1", [])
        let seen = Set(seenKeys.tuples)
        let statement = try db.makeStatement(sql: "SELECT \(columns) FROM \(map.entity.tableName.quotedIdentifier) WHERE \(condition)")
        try statement.setArguments(StatementArguments(arguments.map(\.databaseValue)))
        let handle = statement.sqliteStatement
        let width = Int32(map.entity.primaryKeyNames.count)
        var stale: [[AttributeValue]] = []
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw SyncError(.database, "cannot read the keys of \(map.entity.name): \(String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))")
            }
            let parts = (0..<width).map { UpsertStatements.column(handle, $0) }
            if !seen.contains(parts) { stale.append(parts) }
        }
        sqlite3_reset(handle)
        for parts in stale {
            let key = AttributeValue.compositeKey(parts)
            record(try statements.delete(entity: entity, key: key))
            changes[entity].deleted.append(key)
        }
    }

    /// Deletes one row, recording it when it existed.
    func delete(entity: Int, key: AttributeValue) throws {
        let reached = try statements.delete(entity: entity, key: key)
        if db.changesCount > 0 { changes[entity].deleted.append(key) }
        record(reached)
    }

    /// Deletes the rows of `entity` with these keys that lie inside `scope` (tombstones); keys
    /// of rows not stored, or stored under another scope, are passed over.
    func delete(entity: Int, keys: PrimaryKeys, scope: RouteScope?) throws {
        let entityModel = maps[entity].entity
        let (scopeCondition, scopeArguments) = scope?.whereClause ?? ("1", [])
        var inScope: Statement?
        if !scopeArguments.isEmpty {
            let (keyCondition, _) = entityModel.keyCondition(.null)
            inScope = try db.cachedStatement(sql: "SELECT 1 FROM \(entityModel.tableName.quotedIdentifier) WHERE \(keyCondition) AND \(scopeCondition)")
        }
        for key in keys {
            if let inScope {
                let arguments = entityModel.keyCondition(key).arguments + scopeArguments
                guard try Int.fetchOne(inScope, arguments: StatementArguments(arguments.map(\.databaseValue))) != nil else { continue }
            }
            try delete(entity: entity, key: key)
        }
    }

    /// The rows at the other end of the links a deletion removed count as updated (their links
    /// changed), as when a sync unlinks them: live result sets over them look again.
    private func record(_ reached: [(entity: Int, key: AttributeValue)]) {
        for (other, key) in reached { changes[other].updated.append(key) }
    }

    /// The changes by entity name, with duplicate keys folded (inserted then updated is inserted).
    func entityChanges() -> [String: EntityChanges] {
        var result: [String: EntityChanges] = [:]
        for (index, var change) in changes.enumerated() {
            change.inserted.normalize()
            change.deleted.normalize()
            // A row linked or unlinked is updated, unless the transaction inserted or deleted it.
            var excluded = change.inserted
            excluded.formUnion(change.deleted)
            change.updated.normalize(excluding: excluded)
            if !change.isEmpty { result[maps[index].entity.name] = change }
        }
        return result
    }
}

extension Array where Element == Int64 {
    /// Removes adjacent duplicates of a sorted array, in place.
    mutating func removeDuplicatesFromSorted() {
        guard count > 1 else { return }
        var last = 0
        for index in 1..<count where self[index] != self[last] {
            last += 1
            self[last] = self[index]
        }
        removeSubrange((last + 1)...)
    }

    /// Whether every element is greater than the one before it.
    var isStrictlyIncreasing: Bool {
        var index = 1
        while index < count {
            if self[index - 1] >= self[index] { return false }
            index += 1
        }
        return true
    }

    /// Whether a sorted array holds `value` (binary search).
    func containsSorted(_ value: Int64) -> Bool {
        let index = lowerBound(value)
        return index < count && self[index] == value
    }
}
