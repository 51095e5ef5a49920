import Foundation
import GRDB

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

    init(db: Database, maps: [PropertyMap], trackSeen tracked: Set<Int>) throws {
        self.db = db
        self.maps = maps
        self.statements = try UpsertStatements(db: db, maps: maps)
        self.changes = Array(repeating: EntityChanges(), count: maps.count)
        self.seen = Array(repeating: PrimaryKeys(), count: maps.count)
        self.tracked = maps.indices.map { tracked.contains($0) }
        self.keyIndexes = maps.map(\.primaryKeyIndex)
    }

    /// Upserts every row of `batch`, recording inserted and updated keys and, for tracked
    /// entities, the keys of top-level rows.
    func write(_ batch: RowBatch) throws {
        let hasOtherKeys = !batch.otherKeys.isEmpty
        try batch.rows.withUnsafeBufferPointer { rows in
            try batch.cells.withUnsafeBufferPointer { cells in
                try batch.arena.withUnsafeBytes { arena in
                    // The arena always holds at least one byte.
                    guard let base = arena.baseAddress else { return }
                    for index in rows.indices {
                        let row = rows[index]
                        let keyIndex = keyIndexes[row.entity]
                        let keyCell = keyIndex < row.cellCount ? cells[row.firstCell + keyIndex] : RowBatch.Cell.absent
                        let outcome: UpsertStatements.Outcome
                        do {
                            outcome = try statements.upsert(row, cells: cells, arena: base)
                        } catch let failure as UpsertStatements.RowFailure {
                            let key = keyCell.kind == .absent ? "without key" : batch.key(ofRow: index, keyIndex: keyIndex).description
                            throw SyncError(.database, "\(maps[row.entity].entity.name) \(key): \(failure.message)")
                        }
                        let isSeen = row.isTopLevel && tracked[row.entity]
                        guard outcome != .unchanged || isSeen else { continue }
                        let key: AttributeValue = keyCell.kind == .integer && !hasOtherKeys
                            ? .integer(keyCell.payload) : batch.key(ofRow: index, keyIndex: keyIndex)
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

    /// The keys of top-level rows of `entity` written so far (tracked entities only).
    func seenKeys(of entity: Int) -> PrimaryKeys { seen[entity] }

    /// Deletes rows of `entity` inside `scope` whose keys were not seen in this response.
    func deleteStale(entity: Int, scope: RouteScope?) throws {
        try deleteStale(entity: entity, scope: scope, keeping: seen[entity])
    }

    /// Deletes rows of `entity` inside `scope` whose keys are not in `seenKeys`.
    func deleteStale(entity: Int, scope: RouteScope?, keeping seenKeys: PrimaryKeys) throws {
        let map = maps[entity]
        let table = map.entity.tableName.quotedIdentifier
        let keyColumn = map.entity.primaryKey.quotedIdentifier
        let (condition, arguments) = scope?.whereClause ?? ("1", [])
        let seenIntegers = Set(seenKeys.integers)
        let seenStrings = Set(seenKeys.strings)
        var stale: [AttributeValue] = []
        let cursor = try DatabaseValue.fetchCursor(db, sql: "SELECT \(keyColumn) FROM \(table) WHERE \(condition)",
                                                   arguments: StatementArguments(arguments.map(\.databaseValue)))
        while let value = try cursor.next() {
            switch value.storage {
            case .int64(let i): if !seenIntegers.contains(i) { stale.append(.integer(i)) }
            case .string(let s): if !seenStrings.contains(s) { stale.append(.string(s)) }
            default: break
            }
        }
        for key in stale {
            try statements.delete(entity: entity, key: key)
            changes[entity].deleted.append(key)
        }
    }

    /// Deletes one row, recording it when it existed.
    func delete(entity: Int, key: AttributeValue) throws {
        try statements.delete(entity: entity, key: key)
        if db.changesCount > 0 { changes[entity].deleted.append(key) }
    }

    /// The changes by entity name, with duplicate keys folded (inserted then updated is inserted).
    func entityChanges() -> [String: EntityChanges] {
        var result: [String: EntityChanges] = [:]
        for (index, var change) in changes.enumerated() {
            change.inserted.normalize()
            change.updated.normalize(excluding: change.inserted)
            change.deleted.normalize()
            if !change.isEmpty { result[maps[index].entity.name] = change }
        }
        return result
    }
}
