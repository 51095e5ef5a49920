import Foundation
import GRDB
import GRDBSQLite
import ReplicaCore

extension Store {
    /// The rows of `entity` matching a where-clause, in order.
    ///
    /// ```swift
    /// let rows = try store.rows("User", where: "email LIKE ?", arguments: [.string("%@example.com")],
    ///                           sort: [.ascending("name")], limit: 10)
    /// ```
    ///
    /// - Parameters:
    ///   - entity: The entity (or table) name.
    ///   - predicate: An SQL where-clause over attribute names, or `nil` for all rows.
    ///   - arguments: Values for the `?` placeholders.
    ///   - sort: The order; the primary key breaks ties.
    ///   - limit: The most rows to return.
    /// - Returns: The rows, as values.
    /// - Throws: ``StoreError`` for an unknown entity or attribute, or SQL that SQLite refuses.
    public func rows(_ entity: String, where predicate: String? = nil, arguments: [AttributeValue] = [],
                     sort: [SortKey] = [], limit: Int? = nil, offset: Int? = nil) throws -> [EntityRow] {
        try rows(RowQuery(entity, where: predicate, arguments: arguments, sort: sort, limit: limit, offset: offset))
    }

    /// The rows a ``RowQuery`` selects.
    ///
    /// - Throws: ``StoreError``.
    public func rows(_ query: RowQuery) throws -> [EntityRow] {
        let (entity, sql) = try selectSQL(query)
        return try read { db in try Self.fetchRows(db, entity: entity, sql: sql, arguments: query.arguments) }
    }

    /// The rows a ``RowQuery`` selects, read without blocking the caller's thread.
    ///
    /// - Throws: ``StoreError``.
    public func rows(_ query: RowQuery) async throws -> [EntityRow] {
        let (entity, sql) = try selectSQL(query)
        do {
            return try await database.read { db in
                try Self.fetchRows(db, entity: entity, sql: sql, arguments: query.arguments)
            }
        } catch var error as StoreError {
            if error.path == nil { error.path = path }
            throw error
        } catch {
            throw StoreError(.sqlite, "query on '\(entity.name)' failed: \(Store.describe(error))", path: path)
        }
    }

    /// The number of rows of `entity` matching a where-clause.
    ///
    /// ```swift
    /// let count = try store.count("Post", where: "userID = ?", arguments: [.integer(3)])
    /// ```
    ///
    /// - Throws: ``StoreError``.
    public func count(_ entity: String, where predicate: String? = nil, arguments: [AttributeValue] = []) throws -> Int {
        let entity = try requireEntity(entity)
        var sql = "SELECT COUNT(*) FROM \(entity.tableName.quotedIdentifier)"
        if let predicate, !predicate.isEmpty { sql += " WHERE \(predicate)" }
        return try read { db in
            try Int.fetchOne(Self.queryStatement(db, sql: sql, arguments: arguments)) ?? 0
        }
    }

    /// The rows of `entity`, decoded into a `Decodable` type whose coding keys are attribute names.
    ///
    /// ```swift
    /// struct User: Decodable { var userID: Int; var name: String; var email: String? }
    /// let users = try store.fetch(User.self, from: "User", sort: [.ascending("name")])
    /// ```
    ///
    /// - Throws: ``StoreError`` (`decoding` names the entity, row and attribute that did not fit).
    public func fetch<T: Decodable>(_ type: T.Type, from entity: String, where predicate: String? = nil,
                                    arguments: [AttributeValue] = [], sort: [SortKey] = [],
                                    limit: Int? = nil) throws -> [T] {
        try rows(entity, where: predicate, arguments: arguments, sort: sort, limit: limit).map { row in
            do {
                return try row.decode(T.self)
            } catch var error as StoreError {
                error.path = path
                throw error
            }
        }
    }

    /// The entity named `name`, or a ``StoreError``.
    public func requireEntity(_ name: String) throws -> Entity {
        guard let entity = schema.entity(named: name) else {
            let known = schema.entities.map(\.name).joined(separator: ", ")
            throw StoreError(.unknownEntity, "unknown entity '\(name)' (the schema has: \(known))", path: path)
        }
        return entity
    }

    func selectSQL(_ query: RowQuery) throws -> (Entity, String) {
        let entity = try requireEntity(query.entity)
        let columns = entity.attributes.map(\.name.quotedIdentifier).joined(separator: ", ")
        var sql = "SELECT \(columns) FROM \(entity.tableName.quotedIdentifier)"
        if let predicate = query.predicate, !predicate.isEmpty { sql += " WHERE \(predicate)" }
        sql += " ORDER BY " + (try orderBy(query.sort, for: entity))
        if let limit = query.limit { sql += " LIMIT \(max(0, limit))" }
        if let offset = query.offset {
            if query.limit == nil { sql += " LIMIT -1" }
            sql += " OFFSET \(max(0, offset))"
        }
        return (entity, sql)
    }

    /// `ORDER BY` terms for `sort`, ending with the primary key.
    func orderBy(_ sort: [SortKey], for entity: Entity) throws -> String {
        var terms: [String] = []
        for key in sort {
            guard entity.attribute(named: key.attribute) != nil else {
                let known = entity.attributes.map(\.name).joined(separator: ", ")
                throw StoreError(.unknownAttribute, "cannot sort by '\(key.attribute)': entity '\(entity.name)' has \(known)",
                                 path: path)
            }
            terms.append("\(key.attribute.quotedIdentifier) \(key.ascending ? "ASC" : "DESC")")
        }
        for part in entity.primaryKeyNames where !sort.contains(where: { $0.attribute == part }) {
            terms.append("\(part.quotedIdentifier) ASC")
        }
        return terms.joined(separator: ", ")
    }

    /// The statement of a query holding a caller's where-clause, its values bound: one
    /// statement, and as many values as it has `?` placeholders.
    ///
    /// - Throws: ``StoreError`` saying what does not fit.
    static func queryStatement(_ db: Database, sql: String, arguments: [AttributeValue]) throws -> Statement {
        let statement: Statement
        do {
            statement = try db.makeStatement(sql: sql)
        } catch {
            throw StoreError(.sqlite, describe(error))
        }
        let expected = Int(sqlite3_bind_parameter_count(statement.sqliteStatement))
        guard expected == arguments.count else {
            throw StoreError(.sqlite, "the where-clause has \(expected) ? placeholder\(expected == 1 ? "" : "s") "
                             + "but \(arguments.count) value\(arguments.count == 1 ? " was" : "s were") given")
        }
        try statement.setArguments(StatementArguments(arguments.map(\.databaseValue)))
        return statement
    }

    static func fetchRows(_ db: Database, entity: Entity, sql: String, arguments: [AttributeValue]) throws -> [EntityRow] {
        let names = entity.attributes.map(\.name)
        let types = entity.attributes.map(\.type)
        let keyIndexes = entity.primaryKeyPositions
        let statement = try queryStatement(db, sql: sql, arguments: arguments)
        // Stepped directly: no `Row` or `DatabaseValue` per value.
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        var result: [EntityRow] = []
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw StoreError(.sqlite, "query on '\(entity.name)' failed: \(String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))")
            }
            var values: [AttributeValue] = []
            values.reserveCapacity(types.count)
            for (index, type) in types.enumerated() {
                values.append(AttributeValue(column: handle, at: Int32(index), type: type))
            }
            result.append(EntityRow(entity: entity.name, names: names, values: values, primaryKeyIndexes: keyIndexes))
        }
        return result
    }

    /// Runs a read, turning GRDB errors into ``StoreError``.
    func read<T>(_ block: (Database) throws -> T) throws -> T {
        do {
            return try database.read(block)
        } catch var error as StoreError {
            if error.path == nil { error.path = path }
            throw error
        } catch {
            throw StoreError(.sqlite, Store.describe(error), path: path)
        }
    }
}
