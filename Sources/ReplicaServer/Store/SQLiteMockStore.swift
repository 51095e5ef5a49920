import Foundation
import GRDB

/// A mock store in an SQLite file that survives restarts: one table per resource, one typed column per
/// property, WAL mode with concurrent readers and one serial writer (GRDB `DatabasePool`).
///
/// Identifiers are quoted with embedded quotes doubled and every value is a bound argument, so resource
/// names, property names and values (SQL included) are stored verbatim.
///
/// ```swift
/// let store = try SQLiteMockStore(path: "/tmp/mock.sqlite")
/// let server = try await MockServer.start(resources: [people], options: .init(store: store))
/// ```
public final class SQLiteMockStore: MockStore {
    /// The database file.
    public let path: String
    private let pool: DatabasePool

    /// Opens (or creates) the database file.
    ///
    /// ```swift
    /// let store = try SQLiteMockStore(path: "mock.sqlite")
    /// ```
    /// - Parameters:
    ///   - path: the SQLite file.
    /// - Throws: `MockServerError` `.storeFailed` when the file cannot be opened as a database.
    public init(path: String) throws {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.maximumReaderCount = 8
        configuration.prepareDatabase { db in
            // WAL with synchronous=NORMAL: durable across process crashes, one fsync per checkpoint.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw MockServerError(code: .storeFailed, message: "\(path): \(error)")
        }
    }

    public func addResource(_ resource: MockResource) async throws {
        try await write(resource) { db in
            let table = SQLiteMockSQL.quote(resource.name)
            if try !db.tableExists(resource.name) {
                let columns = MockTableNames(resource).columnDefinitions(
                    autoIncrementKey: "INTEGER PRIMARY KEY AUTOINCREMENT", textKey: "TEXT PRIMARY KEY NOT NULL",
                    columnType: SQLiteMockSQL.columnType)
                try db.execute(sql: "CREATE TABLE \(table) (\(columns))")
            } else {
                // A table keyed otherwise (the key renamed, made composite) cannot be upserted by this key.
                let stored = try db.primaryKey(resource.name).columns
                let key = resource.primaryKey.parts.map(\.name)
                guard stored == key else { throw MockServerError.keyMismatch(resource, stored: stored, in: self.path) }
                let existing = Set(try db.columns(in: resource.name).map(\.name))
                for property in resource.properties where !existing.contains(property.name) {
                    try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN \(SQLiteMockSQL.quote(property.name)) \(SQLiteMockSQL.columnType(property.type))")
                }
            }
            // Nested routes (`/people/1/cars`) filter on the parent key.
            for parent in resource.parents {
                let index = SQLiteMockSQL.quote("\(resource.name)_\(parent.key)")
                try db.execute(sql: "CREATE INDEX IF NOT EXISTS \(index) ON \(table)(\(SQLiteMockSQL.quote(parent.key)))")
            }
        }
    }

    public func dropResource(_ resource: MockResource) async throws {
        try await write(resource) { db in
            try db.execute(sql: "DROP TABLE IF EXISTS \(SQLiteMockSQL.quote(resource.name))")
        }
    }

    public func count(_ resource: MockResource, query: MockQuery) async throws -> Int {
        let sql = SQLiteMockSQL(resource)
        let (whereClause, arguments) = sql.whereClause(query.filters)
        return try await read(resource) { db in
            try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM \(sql.table)\(whereClause)"),
                             arguments: arguments) ?? 0
        }
    }

    public func object(_ resource: MockResource, id: JSONValue) async throws -> JSONObject? {
        let sql = SQLiteMockSQL(resource)
        guard let arguments = sql.keyArguments(id) else { return nil }
        return try await read(resource) { db in
            let statement = try db.cachedStatement(sql: "SELECT \(sql.columns) FROM \(sql.table) WHERE \(sql.keyCondition)")
            return try sql.objects(statement, arguments: arguments).first
        }
    }

    public func objects(_ resource: MockResource, query: MockQuery) async throws -> MockPage {
        let sql = SQLiteMockSQL(resource)
        let page = sql.page(query)
        return try await read(resource) { db in
            let objects = try sql.objects(db.cachedStatement(sql: page.select), arguments: page.selectArguments)
            return MockPage(objects: objects, total: try page.total(db, rows: objects.count))
        }
    }

    public func create(_ resource: MockResource, values: JSONObject) async throws -> JSONObject {
        let sql = SQLiteMockSQL(resource)
        let (insert, arguments) = sql.insert(try resource.assigningKey(to: values), upsert: false)
        return try await write(resource) { db in
            guard let object = try sql.objects(db.cachedStatement(sql: insert), arguments: arguments).first else {
                throw MockServerError(code: .storeFailed, message: "\(resource.name): insert returned no row")
            }
            return object
        }
    }

    public func modify(_ resource: MockResource, id: JSONValue, values: JSONObject) async throws -> JSONObject? {
        let sql = SQLiteMockSQL(resource)
        var assignments: [String] = []
        var arguments = StatementArguments()
        for (key, value) in values where !resource.primaryKey.contains(key) {
            guard let property = resource.property(named: key) else { continue }
            assignments.append("\(SQLiteMockSQL.quote(key)) = \(SQLiteMockSQL.mark(property))")
            arguments += [sql.databaseValue(value, property: property)]
        }
        guard let keyArguments = sql.keyArguments(id) else { return nil }
        arguments += keyArguments
        let statementArguments = arguments
        let statementSQL = assignments.isEmpty
            ? "SELECT \(sql.columns) FROM \(sql.table) WHERE \(sql.keyCondition)"
            : "UPDATE \(sql.table) SET \(assignments.joined(separator: ", ")) WHERE \(sql.keyCondition) RETURNING \(sql.columns)"
        return try await write(resource) { db in
            try sql.objects(db.cachedStatement(sql: statementSQL), arguments: statementArguments).first
        }
    }

    public func delete(_ resource: MockResource, id: JSONValue) async throws -> Bool {
        let sql = SQLiteMockSQL(resource)
        guard let arguments = sql.keyArguments(id) else { return false }
        return try await write(resource) { db in
            try db.cachedStatement(sql: "DELETE FROM \(sql.table) WHERE \(sql.keyCondition)").execute(arguments: arguments)
            return db.changesCount > 0
        }
    }

    public func upsert(_ resource: MockResource, objects: [JSONObject]) async throws -> Int {
        let sql = SQLiteMockSQL(resource)
        let statements = try objects.map { values in sql.insert(try resource.assigningKey(to: values), upsert: true) }
        return try await write(resource) { db in
            for (insert, arguments) in statements {
                _ = try Row.fetchOne(db.cachedStatement(sql: insert), arguments: arguments)
            }
            return statements.count
        }
    }

    // MARK: Access

    func read<T: Sendable>(_ resource: MockResource, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(body)
        } catch let error as DatabaseError {
            throw MockServerError(code: .storeFailed, message: "\(resource.name): \(error.message ?? error.description)")
        }
    }

    private func write<T: Sendable>(_ resource: MockResource, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write(body)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw MockHTTPError(status: 409, code: "conflict", message: "\(resource.name): \(error.message ?? "constraint failed")")
        } catch let error as DatabaseError {
            throw MockServerError(code: .storeFailed, message: "\(resource.name): \(error.message ?? error.description)")
        }
    }
}
