import Foundation

/// A typed attribute value, as read from or written to the store.
///
/// ```swift
/// let row: EntityRow = try store.rows("User").first!
/// if case .string(let name) = row["name"] { print(name) }
/// ```
public enum AttributeValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case data([UInt8])
    case json(JSONValue)

    /// `true` for ``null``.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The attribute type this value belongs to, `nil` for ``null``.
    public var type: AttributeType? {
        switch self {
        case .null: return nil
        case .string: return .string
        case .integer: return .integer
        case .double: return .double
        case .bool: return .bool
        case .date: return .date
        case .data: return .data
        case .json: return .json
        }
    }

    /// A human-readable rendering: text as is, dates in ISO 8601, data as base64, JSON compact.
    public var description: String {
        switch self {
        case .null: return "null"
        case .string(let s): return s
        case .integer(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        case .date(let d): return ISO8601.string(from: d)
        case .data(let bytes): return Data(bytes).base64EncodedString()
        case .json(let value): return value.serialized()
        }
    }

    /// The value as JSON, as the CLI and request bodies print it (dates in ISO 8601, data in base64).
    public var jsonValue: JSONValue {
        switch self {
        case .null: return .null
        case .string(let s): return .string(s)
        case .integer(let i): return .int(i)
        case .double(let d): return .double(d)
        case .bool(let b): return .bool(b)
        case .date(let d):
            // A date without an ISO 8601 form stays a number of seconds.
            guard ISO8601.representable.contains(d.timeIntervalSince1970) else { return .double(d.timeIntervalSince1970) }
            return .string(ISO8601.string(from: d))
        case .data(let bytes): return .string(Data(bytes).base64EncodedString())
        case .json(let value): return value
        }
    }
}
