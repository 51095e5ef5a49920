import Foundation

/// The rows a route's response speaks for: "posts whose userID is 3" for `/users/3/posts`.
///
/// The sync engine fills these attributes into objects that lack them and deletes stale
/// rows only inside the scope; live result sets can be opened on it.
///
/// ```swift
/// let resolution = try table.resolve(.get, "/users/3/posts")
/// resolution.scope.conditions          // [userID = 3]
/// resolution.scope.whereClause.sql     // "\"userID\" = ?"
/// ```
public struct RouteScope: Sendable, Hashable, CustomStringConvertible {
    /// One `attribute = value` condition.
    public struct Condition: Sendable, Hashable, CustomStringConvertible {
        public var attribute: String
        public var value: AttributeValue
        public var description: String { "\(attribute) = \(value)" }
    }

    /// The entity the scope selects rows of.
    public var entity: String
    /// The conditions, all of which hold (in pattern order).
    public var conditions: [Condition]
    /// `true` when the conditions include the primary key: the route names one object.
    public var isSingleObject: Bool

    /// `true` when the scope is the whole entity.
    public var isEmpty: Bool { conditions.isEmpty }

    /// The value the scope sets for `attribute`, or `nil`.
    public func value(of attribute: String) -> AttributeValue? {
        conditions.first { $0.attribute == attribute }?.value
    }

    /// The primary key of `entity` the scope sets (every part of a composite key), or `nil`.
    ///
    /// ```swift
    /// try table.resolve(.get, "/repos/octocat/Hello-World/git/refs/refs%2Fheads%2Fmain").scope.primaryKey(of: ref)
    /// // .compositeKey([.string("octocat"), .string("Hello-World"), .string("refs/heads/main")])
    /// ```
    public func primaryKey(of entity: Entity) -> AttributeValue? {
        entity.key(from: value(of:))
    }

    /// The conditions as SQL (`"userID" = ? AND ...`, or `1` when empty) with their arguments.
    public var whereClause: (sql: String, arguments: [AttributeValue]) {
        guard !conditions.isEmpty else { return ("1", []) }
        return (conditions.map { "\($0.attribute.quotedIdentifier) = ?" }.joined(separator: " AND "),
                conditions.map(\.value))
    }

    public var description: String {
        conditions.isEmpty ? "all \(entity)" : "\(entity) where " + conditions.map(\.description).joined(separator: " and ")
    }
}

extension AttributeValue {
    /// Converts the text of a path variable or query value to an attribute of `type`:
    /// integers and doubles in decimal, bools as `true`/`false`/`1`/`0`, dates in ISO 8601
    /// or Unix seconds, data in base64, JSON as JSON text.
    ///
    /// - Returns: `nil` when the text is not a value of that type.
    public init?(text: String, type: AttributeType) {
        switch type {
        case .string:
            self = .string(text)
        case .integer:
            guard let value = Int64(text) else { return nil }
            self = .integer(value)
        case .double:
            guard let value = Double(text), value.isFinite else { return nil }
            self = .double(value)
        case .bool:
            switch text.lowercased() {
            case "true", "1": self = .bool(true)
            case "false", "0": self = .bool(false)
            default: return nil
            }
        case .date:
            if let seconds = Double(text), seconds.isFinite {
                self = .date(Date(timeIntervalSince1970: seconds))
            } else if let date = ISO8601.date(from: text) {
                self = .date(date)
            } else {
                return nil
            }
        case .data:
            guard let data = Data(base64Encoded: text) else { return nil }
            self = .data([UInt8](data))
        case .json:
            guard let value = try? JSONValue(parsing: text) else { return nil }
            self = .json(value)
        }
    }
}
