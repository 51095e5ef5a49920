import Foundation

/// The SQL a store speaks, where SQLite and PostgreSQL differ (column types, literals).
package enum SQLDialect: Sendable {
    case sqlite
    case postgres

    /// The column type of `type`. Both stores keep the same values: booleans as integers 0 or 1,
    /// dates as Unix seconds, JSON as its compact text (see ``AttributeType``).
    package func columnType(_ type: AttributeType) -> String {
        switch self {
        case .sqlite: return type.sqlType
        case .postgres:
            switch type {
            case .string, .json: return "text"
            case .integer, .bool: return "bigint"
            case .double, .date: return "double precision"
            case .data: return "bytea"
            }
        }
    }
}

/// SQL text for tables, columns and indexes of a schema. Every identifier is quoted.
package enum SchemaDDL {
    /// `CREATE TABLE`: a single key is its column's `PRIMARY KEY`; a composite key is a table
    /// constraint, `PRIMARY KEY ("owner", "repo", "ref")`.
    package static func createTable(_ entity: Entity, dialect: SQLDialect = .sqlite) -> String {
        let single = entity.hasCompositeKey ? nil : entity.primaryKey
        var columns = entity.attributes.map { column($0, isPrimaryKey: $0.name == single, dialect: dialect) }
        if entity.hasCompositeKey {
            columns.append("PRIMARY KEY (\(entity.primaryKeyNames.map(\.quotedIdentifier).joined(separator: ", ")))")
        }
        return "CREATE TABLE \(entity.tableName.quotedIdentifier) (\(columns.joined(separator: ", ")))"
    }

    static func column(_ attribute: Attribute, isPrimaryKey: Bool, dialect: SQLDialect = .sqlite) -> String {
        var sql = "\(attribute.name.quotedIdentifier) \(dialect.columnType(attribute.type))"
        if !attribute.isNullable { sql += " NOT NULL" }
        if isPrimaryKey { sql += " PRIMARY KEY" }
        if let value = attribute.defaultValue, !value.isNull { sql += " DEFAULT \(literal(value, dialect: dialect))" }
        return sql
    }

    static func addColumn(_ attribute: Attribute, to entity: Entity, dialect: SQLDialect = .sqlite) -> String {
        "ALTER TABLE \(entity.tableName.quotedIdentifier) ADD COLUMN \(column(attribute, isPrimaryKey: false, dialect: dialect))"
    }

    /// The indexes a table gets: the declared ones plus one per to-one foreign key
    /// (scoped queries and stale-row deletion filter on it).
    static func indexes(of entity: Entity) -> [Index] {
        var result = entity.indexes
        for relationship in entity.relationships where relationship.kind == .toOne {
            guard let foreignKey = relationship.foreignKey,
                  !result.contains(where: { $0.attributes.first == foreignKey })
            else { continue }
            result.append(Index([foreignKey]))
        }
        return result
    }

    /// The statements creating a join table: its two key columns, the pair its primary key
    /// (links from the first entity's side), and an index on the second column then the first
    /// (links from the other side).
    static func createJoinTable(_ join: JoinTable, dialect: SQLDialect = .sqlite) -> [String] {
        let columns = zip(join.columns, join.types).map { "\($0.quotedIdentifier) \(dialect.columnType($1)) NOT NULL" }
        let key = join.columns.map(\.quotedIdentifier).joined(separator: ", ")
        // SQLite: the links are the primary key's b-tree itself, with no rowid table beside it.
        let rowid = dialect == .sqlite ? " WITHOUT ROWID" : ""
        return [
            "CREATE TABLE \(join.name.quotedIdentifier) (\(columns.joined(separator: ", ")), PRIMARY KEY (\(key)))\(rowid)",
            "CREATE INDEX \(joinIndexName(join).quotedIdentifier) ON \(join.name.quotedIdentifier) "
                + "(\(join.columns[1].quotedIdentifier), \(join.columns[0].quotedIdentifier))",
        ]
    }

    /// The name of a join table's index on its second column.
    static func joinIndexName(_ join: JoinTable) -> String { Identifier.fitted("\(join.name)_\(join.columns[1])_index") }

    static func createIndex(_ index: Index, on entity: Entity) -> String {
        let columns = index.attributes.map(\.quotedIdentifier).joined(separator: ", ")
        return "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(index.sqlName(table: entity.tableName).quotedIdentifier) "
            + "ON \(entity.tableName.quotedIdentifier) (\(columns))"
    }

    static func dropIndex(_ index: Index, on entity: Entity) -> String {
        "DROP INDEX IF EXISTS \(index.sqlName(table: entity.tableName).quotedIdentifier)"
    }

    /// A SQL literal for a default value.
    static func literal(_ value: AttributeValue, dialect: SQLDialect = .sqlite) -> String {
        switch value {
        case .null: return "NULL"
        case .string(let s): return quote(s)
        case .integer(let i): return String(i)
        case .double(let d): return d.isFinite ? "\(d)" : "NULL"
        case .bool(let b): return b ? "1" : "0"
        case .date(let d): return "\(d.timeIntervalSince1970)"
        case .data(let bytes):
            let hex = bytes.map { String(format: "%02X", $0) }.joined()
            return dialect == .postgres ? "'\\x\(hex)'::bytea" : "X'\(hex)'"
        case .json(let json): return quote(json.serialized())
        }
    }

    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
