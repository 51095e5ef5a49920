import Foundation
import GRDB
import ReplicaSQLite

/// SQL text and value conversions for one resource's table.
@dynamicMemberLookup
struct SQLiteMockSQL: Sendable {
    let naming: MockTableNames

    init(_ resource: MockResource) { naming = MockTableNames(resource) }

    subscript<T>(dynamicMember path: KeyPath<MockTableNames, T>) -> T { naming[keyPath: path] }

    static func quote(_ identifier: String) -> String { MockTableNames.quote(identifier) }

    static func columnType(_ type: MockPropertyType) -> String {
        switch type {
        case .string, .date, .json: return "TEXT"
        case .integer, .bool: return "INTEGER"
        case .double: return "REAL"
        case .blob: return "BLOB"
        }
    }

    /// ` WHERE "a" IS ? AND "b" IS ?` (IS so that null matches null) and its arguments.
    func whereClause(_ filters: [MockQuery.Filter]) -> (String, StatementArguments) {
        guard !filters.isEmpty else { return ("", StatementArguments()) }
        var arguments = StatementArguments()
        var terms: [String] = []
        for filter in filters {
            let property = naming.resource.property(named: filter.property) ?? MockProperty(filter.property, .json)
            terms.append("\(Self.quote(filter.property)) IS \(Self.mark(property))")
            arguments += [databaseValue(filter.value, property: property)]
        }
        return (" WHERE " + terms.joined(separator: " AND "), arguments)
    }

    /// The statements of one page: its rows in order, and the count of the rows matching its filters.
    struct Page {
        var select: String
        var selectArguments: StatementArguments
        var count: String
        var countArguments: StatementArguments
        /// Neither limit nor offset: the page is every matching row, its count the total.
        var isWhole: Bool

        /// The rows matching the filters, counted unless the page holds them all (`rows` of them).
        func total(_ db: Database, rows: Int) throws -> Int {
            if isWhole { return rows }
            return try Int.fetchOne(db.cachedStatement(sql: count), arguments: countArguments) ?? 0
        }
    }

    /// `SELECT … WHERE … ORDER BY … LIMIT ? OFFSET ?` for a query: sorted as it asks, ties and the rest by key.
    func page(_ query: MockQuery) -> Page {
        let (whereClause, arguments) = whereClause(query.filters)
        var order = query.sort.map { "\(Self.quote($0.property)) \($0.descending ? "DESC" : "ASC")" }
        order += naming.keyColumns.map { "\($0) ASC" }  // ties, and no sort at all, by primary key
        var select = "SELECT \(naming.columns) FROM \(naming.table)\(whereClause) ORDER BY \(order.joined(separator: ", "))"
        var pageArguments = arguments
        let isWhole = query.limit == nil && query.offset == 0
        if !isWhole {
            select += " LIMIT ? OFFSET ?"
            pageArguments += [Int64(query.limit ?? -1), Int64(query.offset)]
        }
        return Page(select: select, selectArguments: pageArguments, count: "SELECT COUNT(*) FROM \(naming.table)\(whereClause)",
                    countArguments: arguments, isWhole: isWhole)
    }

    /// `INSERT … RETURNING` (or an upsert on the key) for harvested values.
    func insert(_ values: JSONObject, upsert: Bool) -> (String, StatementArguments) {
        var names: [String] = []
        var marks: [String] = []
        var arguments = StatementArguments()
        for property in naming.resource.properties {
            guard let value = values[property.name] else { continue }
            if naming.resource.primaryKey.contains(property.name), value.isNull { continue }
            names.append(Self.quote(property.name))
            marks.append(Self.mark(property))
            arguments += [databaseValue(value, property: property)]
        }
        var sql: String
        if names.isEmpty {
            sql = "INSERT INTO \(naming.table) DEFAULT VALUES"
        } else {
            sql = "INSERT INTO \(naming.table) (\(names.joined(separator: ", "))) VALUES (\(marks.joined(separator: ", ")))"
        }
        if upsert, naming.resource.primaryKey.key(of: values) != nil {
            let target = naming.keyColumns.joined(separator: ", ")
            let updates = names.filter { !naming.keyColumns.contains($0) }.map { "\($0) = excluded.\($0)" }
            sql += updates.isEmpty ? " ON CONFLICT(\(target)) DO NOTHING" : " ON CONFLICT(\(target)) DO UPDATE SET \(updates.joined(separator: ", "))"
        }
        return (sql + " RETURNING \(naming.columns)", arguments)
    }

    /// `"owner" = CAST(? AS TEXT) AND …`: the row of one key, its parts bound by ``keyArguments(_:)``.
    var keyCondition: String { naming.keyCondition { _, property in Self.mark(property) } }

    /// A key's parts as ``keyCondition`` binds them; nil for a value that is no key of the resource
    /// (a composite key's array of another length), which matches no row.
    func keyArguments(_ id: JSONValue) -> StatementArguments? {
        guard let parts = naming.resource.primaryKey.values(of: id) else { return nil }
        return StatementArguments(parts.map { databaseValue($0.value, property: $0.property) })
    }

    /// The placeholder for a value of `property`: text columns take `CAST(? AS TEXT)`, so that
    /// text holding NUL, bound as bytes (GRDB binds strings as C strings), is stored whole.
    static func mark(_ property: MockProperty) -> String {
        columnType(property.type) == "TEXT" ? "CAST(? AS TEXT)" : "?"
    }

    /// A JSON value as the column stores it.
    func databaseValue(_ value: JSONValue, property: MockProperty) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .bool(let b): return property.type == .json ? value.serialized().databaseValue : Int64(b ? 1 : 0).databaseValue
        case .int(let i):
            switch property.type {
            case .double: return Double(i).databaseValue
            case .json, .string: return property.type == .json ? value.serialized().databaseValue : String(i).databaseValue
            default: return i.databaseValue
            }
        case .double(let d): return property.type == .json ? value.serialized().databaseValue : d.databaseValue
        case .bigInteger(let literal):
            switch property.type {
            case .json: return value.serialized().databaseValue
            case .double: return (Double(literal) ?? .nan).databaseValue
            default: return literal.databaseValue
            }
        case .string(let s):
            switch property.type {
            case .blob: return (Data(base64Encoded: s) ?? Data(s.utf8)).databaseValue
            case .json: return value.serialized().databaseValue
            // Bytes, cast back to TEXT by the statement (see `mark`): a bound String would end at the NUL.
            default: return s.utf8.contains(0) ? Data(s.utf8).databaseValue : s.databaseValue
            }
        case .array, .object: return value.serialized().databaseValue
        }
    }

    /// A row of `columns` as a JSON object in property order.
    /// The objects a statement returns, read while each row is the statement's current one, so
    /// that text keeps every byte (NUL included).
    func objects(_ statement: Statement, arguments: StatementArguments) throws -> [JSONObject] {
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        var objects: [JSONObject] = []
        while let row = try rows.next() { objects.append(object(row)) }
        return objects
    }

    func object(_ row: Row) -> JSONObject {
        var object = JSONObject()
        for (index, property) in naming.resource.properties.enumerated() {
            object[property.name] = Self.json(row.fullValue(atIndex: index), type: property.type)
        }
        return object
    }

    static func json(_ value: DatabaseValue, type: MockPropertyType) -> JSONValue {
        switch value.storage {
        case .null: return .null
        case .int64(let i):
            switch type {
            case .bool: return .bool(i != 0)
            case .double: return .double(Double(i))
            case .string, .date: return .string(String(i))
            default: return .int(i)
            }
        case .double(let d):
            if type == .integer, let i = Int64(exactly: d) { return .int(i) }
            return .double(d)
        case .string(let s):
            if type == .json { return (try? JSONValue(parsing: s)) ?? .string(s) }
            return .string(s)
        case .blob(let data):
            return .string(data.base64EncodedString())
        }
    }
}
