import Foundation
import NIOCore
import PostgresNIO
import ReplicaCore

/// Turning Replica's SQL (SQLite's `?` placeholders, attribute values) into PostgreSQL's.
enum PostgresSQL {
    /// `sql` with each `?` outside string literals, quoted identifiers and comments numbered
    /// `$first`, `$first+1`, …, and the count of placeholders found.
    ///
    /// ```swift
    /// PostgresSQL.numbered("name = ? AND note <> '?'", from: 1)   // ("name = $1 AND note <> '?'", 1)
    /// ```
    static func numbered(_ sql: String, from first: Int = 1) -> (sql: String, count: Int) {
        var result = ""
        result.reserveCapacity(sql.utf8.count + 8)
        var number = first
        var quote: Character? = nil
        var lineComment = false
        var previous: Character? = nil
        for character in sql {
            if lineComment {
                result.append(character)
                if character == "\n" { lineComment = false }
            } else if let open = quote {
                result.append(character)
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
                result.append(character)
            } else if character == "-" && previous == "-" {
                lineComment = true
                result.append(character)
            } else if character == "?" {
                result += "$\(number)"
                number += 1
            } else {
                result.append(character)
            }
            previous = character
        }
        return (result, number - first)
    }

    /// `predicate` with every bare word that names an attribute (in any case) quoted as that
    /// attribute: SQLite reads identifiers without regard to case, PostgreSQL folds bare ones to
    /// lower case, so a where-clause written for one store reads the same columns on the other.
    ///
    /// ```swift
    /// PostgresSQL.quotingAttributes("numberofkids > ? AND name = 'x'", names: ["name", "numberOfKids"])
    /// // "\"numberOfKids\" > ? AND \"name\" = 'x'"
    /// ```
    static func quotingAttributes(_ predicate: String, names: [String]) -> String {
        var byLowercase: [String: String] = [:]
        for name in names { byLowercase[name.lowercased()] = name }
        let characters = Array(predicate)
        var result = ""
        var index = 0
        func isWordStart(_ c: Character) -> Bool { c == "_" || c.isLetter }
        func isWord(_ c: Character) -> Bool { c == "_" || c.isLetter || c.isNumber || c == "$" }
        while index < characters.count {
            let character = characters[index]
            if character == "'" || character == "\"" {
                // A literal or a quoted identifier, copied as it is ('' and "" escape themselves).
                var end = index + 1
                while end < characters.count && characters[end] != character { end += 1 }
                result += String(characters[index...min(end, characters.count - 1)])
                index = end + 1
            } else if isWordStart(character) && (index == 0 || !isWord(characters[index - 1]) && characters[index - 1] != ".") {
                var end = index
                while end < characters.count && isWord(characters[end]) { end += 1 }
                let word = String(characters[index..<end])
                var next = end
                while next < characters.count && characters[next] == " " { next += 1 }
                let isCall = next < characters.count && characters[next] == "("
                if !isCall, let name = byLowercase[word.lowercased()] {
                    result += name.quotedIdentifier
                } else {
                    result += word
                }
                index = end
            } else {
                result.append(character)
                index += 1
            }
        }
        return result
    }

    /// A where-clause written for SQLite, as PostgreSQL reads it: attribute names quoted
    /// (``quotingAttributes(_:names:)``) and the conditions SQLite writes as numbers, `1` (every
    /// row, ``ReplicaCore/RowPredicate/all``) and `0` (no row, an empty ``ReplicaCore/RowPredicate/in(_:_:)``),
    /// as `TRUE` and `FALSE`, whole or as an operand of `AND`, `OR` and `NOT`.
    ///
    /// ```swift
    /// PostgresSQL.condition("((0) AND (numberofkids > ?))", names: ["numberOfKids"])
    /// // "((FALSE) AND (\"numberOfKids\" > ?))"
    /// ```
    static func condition(_ predicate: String, names: [String]) -> String {
        let quoted = quotingAttributes(predicate, names: names)
        switch quoted.trimmingCharacters(in: .whitespaces) {
        case "1": return "TRUE"
        case "0": return "FALSE"
        default: break
        }
        var result = quoted
        for (number, literal) in [("0", "FALSE"), ("1", "TRUE")] {
            for before in ["(", "AND ", "OR ", "NOT "] {
                result = result.replacingOccurrences(of: "\(before)(\(number))", with: "\(before)(\(literal))")
            }
        }
        return result
    }

    /// `ORDER BY` terms for `sort` in the order SQLite gives (and live result sets merge in):
    /// text by its bytes (`COLLATE "C"`), `NULL` first when ascending, the primary key last.
    ///
    /// - Throws: ``ReplicaCore/StoreError`` (`unknownAttribute`) naming `location`.
    static func orderBy(_ sort: [SortKey], for entity: Entity, location: String) throws -> String {
        var terms: [String] = []
        func term(_ attribute: Attribute, ascending: Bool) -> String {
            let collate = attribute.type == .string || attribute.type == .json ? " COLLATE \"C\"" : ""
            return "\(attribute.name.quotedIdentifier)\(collate) \(ascending ? "ASC NULLS FIRST" : "DESC NULLS LAST")"
        }
        for key in sort {
            guard let attribute = entity.attribute(named: key.attribute) else {
                let known = entity.attributes.map(\.name).joined(separator: ", ")
                throw StoreError(.unknownAttribute, "cannot sort by '\(key.attribute)': entity '\(entity.name)' has \(known)",
                                 path: location)
            }
            terms.append(term(attribute, ascending: key.ascending))
        }
        for part in entity.primaryKeyAttributes where !sort.contains(where: { $0.attribute == part.name }) {
            terms.append(term(part, ascending: true))
        }
        return terms.joined(separator: ", ")
    }

    /// Decodes a row of `entity`'s columns, selected in attribute order.
    static func entityRow(_ row: PostgresRow, of entity: Entity, names: [String], types: [AttributeType],
                          keyIndexes: [Int]) throws -> EntityRow {
        var values: [AttributeValue] = []
        values.reserveCapacity(types.count)
        for (index, cell) in row.enumerated() {
            values.append(try value(cell, type: types[index]))
        }
        return EntityRow(entity: entity.name, names: names, values: values, primaryKeyIndexes: keyIndexes)
    }

    /// Appends `value` as PostgreSQL stores it for the column types Replica creates:
    /// booleans as 0 or 1, dates as Unix seconds, JSON as its text (as SQLite stores them).
    static func bind(_ value: AttributeValue, into bindings: inout PostgresBindings) {
        switch value {
        case .null: bindings.appendNull()
        case .integer(let i): bindings.append(i)
        case .double(let d): bindings.append(d)
        case .bool(let b): bindings.append(Int64(b ? 1 : 0))
        case .date(let date): bindings.append(date.timeIntervalSince1970)
        case .string(let s): bindings.append(s)
        case .json(let json): bindings.append(json.serialized())
        case .data(let bytes): bindings.append(ByteBuffer(bytes: bytes))
        }
    }

    /// A query of `sql` (with `?` placeholders) and its arguments.
    static func query(_ sql: String, _ arguments: [AttributeValue] = []) -> PostgresQuery {
        let numbered = numbered(sql)
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments { bind(argument, into: &bindings) }
        return PostgresQuery(unsafeSQL: numbered.sql, binds: bindings)
    }

    /// Reads a cell as an attribute of `type`, as the SQLite store reads its columns.
    static func value(_ cell: PostgresCell, type: AttributeType) throws -> AttributeValue {
        guard cell.bytes != nil else { return .null }
        let stored: AttributeValue
        switch cell.dataType {
        case .int8, .int4, .int2: stored = .integer(try cell.decode(Int64.self))
        case .float8, .float4: stored = .double(try cell.decode(Double.self))
        case .bool: stored = .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .bytea:
            var buffer = try cell.decode(ByteBuffer.self)
            stored = .data(buffer.readBytes(length: buffer.readableBytes) ?? [])
        default: stored = .string(try cell.decode(String.self))
        }
        return AttributeValue(stored: stored, type: type)
    }
}

/// The SQL rewriting of ``PostgresSQL``, for tests.
package enum PostgresSQLProbe {
    package static func numbered(_ sql: String) -> String { PostgresSQL.numbered(sql).sql }
    package static func quoting(_ predicate: String, _ names: [String]) -> String {
        PostgresSQL.quotingAttributes(predicate, names: names)
    }
    package static func condition(_ predicate: String, _ names: [String]) -> String {
        PostgresSQL.condition(predicate, names: names)
    }
}
