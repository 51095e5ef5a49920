import Foundation
import Logging
import NIOCore
import PostgresNIO
import ReplicaServer

/// SQL text and value conversions for one resource's PostgreSQL table.
@dynamicMemberLookup
struct PostgresMockSQL: Sendable {
    let naming: MockTableNames

    /// The advisory lock that serializes table creation across servers.
    static let schemaLock: Int64 = 0x5265_706C_4D6F_636B   // "ReplMock"

    init(_ resource: MockResource) { naming = MockTableNames(resource) }

    subscript<T>(dynamicMember path: KeyPath<MockTableNames, T>) -> T { naming[keyPath: path] }

    static func quote(_ identifier: String) -> String { MockTableNames.quote(identifier) }

    static func columnType(_ type: MockPropertyType) -> String {
        switch type {
        case .string, .date, .json: return "text"
        case .integer: return "bigint"
        case .bool: return "boolean"
        case .double: return "double precision"
        case .blob: return "bytea"
        }
    }

    /// `ORDER BY` as SQLite orders: text by its bytes, `NULL` first when ascending, the key last.
    func orderBy(_ sort: [MockQuery.SortKey]) -> String {
        var terms = sort.map { sortKey -> String in
            let type = naming.resource.property(named: sortKey.property)?.type ?? .json
            let collate = Self.columnType(type) == "text" ? " COLLATE \"C\"" : ""
            return Self.quote(sortKey.property) + collate + (sortKey.descending ? " DESC NULLS LAST" : " ASC NULLS FIRST")
        }
        for (column, part) in zip(naming.keyColumns, naming.keyParts) {
            terms.append(column + (Self.columnType(part.type) == "text" ? " COLLATE \"C\"" : "") + " ASC")
        }
        return terms.joined(separator: ", ")
    }

    /// `"owner" = $4 AND "repo" = $5 AND …` for a key, its parts bound after what `bindings` holds;
    /// nil for a value that is no key of the resource (a composite key's array of another length).
    func keyCondition(_ id: JSONValue, into bindings: inout PostgresBindings) throws -> String? {
        guard let parts = naming.resource.primaryKey.values(of: id) else { return nil }
        let first = bindings.count + 1
        for part in parts { try bind(part.value, property: part.property, into: &bindings) }
        return naming.keyCondition { index, _ in "$\(first + index)" }
    }

    /// ` WHERE "a" IS NOT DISTINCT FROM $1 AND …` (null matches null), binding the values.
    func whereClause(_ filters: [MockQuery.Filter], into bindings: inout PostgresBindings) throws -> String {
        guard !filters.isEmpty else { return "" }
        var terms: [String] = []
        for filter in filters {
            let property = naming.resource.property(named: filter.property) ?? MockProperty(filter.property, .json)
            try bind(filter.value, property: property, into: &bindings)
            terms.append("\(Self.quote(filter.property)) IS NOT DISTINCT FROM $\(bindings.count)")
        }
        return " WHERE " + terms.joined(separator: " AND ")
    }

    /// `INSERT … RETURNING` (or an upsert on the key) for harvested values.
    func insert(_ values: JSONObject, upsert: Bool) throws -> PostgresQuery {
        var names: [String] = []
        var bindings = PostgresBindings()
        for property in naming.resource.properties {
            guard let value = values[property.name] else { continue }
            if naming.resource.primaryKey.contains(property.name), value.isNull { continue }
            try bind(value, property: property, into: &bindings)
            names.append(Self.quote(property.name))
        }
        var sql = names.isEmpty
            ? "INSERT INTO \(naming.table) DEFAULT VALUES"
            : "INSERT INTO \(naming.table) (\(names.joined(separator: ", "))) VALUES (\((1...names.count).map { "$\($0)" }.joined(separator: ", ")))"
        if upsert, naming.resource.primaryKey.key(of: values) != nil {
            let target = naming.keyColumns.joined(separator: ", ")
            let updates = names.filter { !naming.keyColumns.contains($0) }.map { "\($0) = excluded.\($0)" }
            sql += updates.isEmpty ? " ON CONFLICT (\(target)) DO NOTHING" : " ON CONFLICT (\(target)) DO UPDATE SET \(updates.joined(separator: ", "))"
        }
        return PostgresQuery(unsafeSQL: sql + " RETURNING \(naming.columns)", binds: bindings)
    }

    /// Binds a JSON value as the column of `property` stores it.
    ///
    /// - Throws: `MockHTTPError` 422 for a value the column cannot hold (text with a NUL byte,
    ///   a number out of range for an integer column).
    func bind(_ value: JSONValue, property: MockProperty, into bindings: inout PostgresBindings) throws {
        func refuse(_ why: String) -> MockHTTPError {
            MockHTTPError(status: 422, code: "unstorableValue", message: "\(naming.resource.name).\(property.name): \(why)")
        }
        func text(_ string: String) throws -> String {
            guard !string.utf8.contains(0) else { throw refuse("PostgreSQL text cannot hold a NUL byte") }
            return string
        }
        if value.isNull {
            bindings.appendNull()
            return
        }
        switch property.type {
        case .json:
            bindings.append(try text(value.serialized()))
        case .string, .date:
            switch value {
            case .string(let string): bindings.append(try text(string))
            case .bigInteger(let literal): bindings.append(literal)
            default: bindings.append(try text(value.serialized()))
            }
        case .integer:
            switch value {
            case .int(let integer): bindings.append(integer)
            case .double(let double) where Int64(exactly: double) != nil: bindings.append(Int64(exactly: double) ?? 0)
            case .bool(let bool): bindings.append(Int64(bool ? 1 : 0))
            case .string(let string) where Int64(string) != nil: bindings.append(Int64(string) ?? 0)
            default: throw refuse("\(value.serialized()) is not a 64-bit integer")
            }
        case .double:
            switch value {
            case .int(let integer): bindings.append(Double(integer))
            case .double(let double): bindings.append(double)
            case .bigInteger(let literal): bindings.append(Double(literal) ?? .nan)
            default: throw refuse("\(value.serialized()) is not a number")
            }
        case .bool:
            switch value {
            case .bool(let bool): bindings.append(bool)
            case .int(let integer): bindings.append(integer != 0)
            default: throw refuse("\(value.serialized()) is not a boolean")
            }
        case .blob:
            guard case .string(let string) = value else { throw refuse("\(value.serialized()) is not base64 text") }
            let bytes = Data(base64Encoded: string) ?? Data(string.utf8)
            bindings.append(ByteBuffer(bytes: bytes))
        }
    }

    /// The objects a query returns, every property present, in property order.
    func objects(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) async throws -> [JSONObject] {
        var objects: [JSONObject] = []
        for try await row in try await connection.query(query, logger: logger) {
            var object = JSONObject()
            for (property, cell) in zip(naming.resource.properties, row) {
                object[property.name] = try Self.json(cell, type: property.type)
            }
            objects.append(object)
        }
        return objects
    }

    static func json(_ cell: PostgresCell, type: MockPropertyType) throws -> JSONValue {
        guard cell.bytes != nil else { return .null }
        switch type {
        case .integer: return .int(try cell.decode(Int64.self))
        case .double:
            let double = try cell.decode(Double.self)
            return .double(double)
        case .bool: return .bool(try cell.decode(Bool.self))
        case .blob:
            let buffer = try cell.decode(ByteBuffer.self)
            return .string(Data(buffer.readableBytesView).base64EncodedString())
        case .json:
            let text = try cell.decode(String.self)
            return (try? JSONValue(parsing: text)) ?? .string(text)
        case .string, .date:
            if cell.dataType == .int8 { return .string(String(try cell.decode(Int64.self))) }
            return .string(try cell.decode(String.self))
        }
    }
}
