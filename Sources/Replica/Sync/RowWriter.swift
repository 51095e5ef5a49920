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

    init(db: Database, maps: [PropertyMap], trackSeen tracked: Set<Int>) throws {
        self.db = db
        self.maps = maps
        self.statements = try UpsertStatements(db: db, maps: maps)
        self.changes = Array(repeating: EntityChanges(), count: maps.count)
        self.seen = Array(repeating: PrimaryKeys(), count: maps.count)
        self.tracked = maps.indices.map { tracked.contains($0) }
    }

    func write(_ row: PlannedRow) throws {
        let keyIndex = maps[row.entity].primaryKeyIndex
        let key = row.values[keyIndex] ?? .null
        switch try statements.upsert(entity: row.entity, values: row.values) {
        case .inserted: changes[row.entity].inserted.append(key)
        case .updated: changes[row.entity].updated.append(key)
        case .unchanged: break
        }
        if row.isTopLevel && tracked[row.entity] {
            seen[row.entity].append(key)
        }
    }

    /// Deletes rows of `entity` inside `scope` whose keys were not seen in this response.
    func deleteStale(entity: Int, scope: RouteScope?) throws {
        let map = maps[entity]
        let table = map.entity.tableName.quotedIdentifier
        let keyColumn = map.entity.primaryKey.quotedIdentifier
        let (condition, arguments) = scope?.whereClause ?? ("1", [])
        let seenKeys = seen[entity]
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
