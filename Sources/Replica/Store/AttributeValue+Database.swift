import Foundation
import GRDB

extension AttributeValue {
    /// The value as SQLite stores it (see ``AttributeType`` for the storage of each type).
    public var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .string(let s): return s.databaseValue
        case .integer(let i): return i.databaseValue
        case .double(let d): return d.databaseValue
        case .bool(let b): return (b ? 1 : 0 as Int64).databaseValue
        case .date(let d): return d.timeIntervalSince1970.databaseValue
        case .data(let bytes): return Data(bytes).databaseValue
        case .json(let json): return json.serialized().databaseValue
        }
    }

    /// Reads a stored value as an attribute of `type`. Values written by other programs
    /// with another storage class are converted when that is lossless, else kept as they are.
    public init(databaseValue: DatabaseValue, type: AttributeType) {
        switch (databaseValue.storage, type) {
        case (.null, _): self = .null
        case (.string(let s), .string): self = .string(s)
        case (.int64(let i), .integer): self = .integer(i)
        case (.double(let d), .integer):
            if let i = Int64(exactly: d) { self = .integer(i) } else { self = .double(d) }
        case (.double(let d), .double): self = .double(d)
        case (.int64(let i), .double): self = .double(Double(i))
        case (.int64(let i), .bool): self = .bool(i != 0)
        case (.double(let d), .date): self = .date(Date(timeIntervalSince1970: d))
        case (.int64(let i), .date): self = .date(Date(timeIntervalSince1970: Double(i)))
        case (.string(let s), .date):
            if let date = ISO8601.date(from: s) { self = .date(date) } else { self = .string(s) }
        case (.blob(let data), .data): self = .data([UInt8](data))
        case (.string(let s), .json):
            if let json = try? JSONValue(parsing: s) { self = .json(json) } else { self = .string(s) }
        case (.string(let s), _): self = .string(s)
        case (.int64(let i), _): self = .integer(i)
        case (.double(let d), _): self = .double(d)
        case (.blob(let data), _): self = .data([UInt8](data))
        }
    }
}

extension AttributeValue: DatabaseValueConvertible {
    /// Converts without a known attribute type: integers, doubles, text and blobs as they are.
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> AttributeValue? {
        switch dbValue.storage {
        case .null: return .null
        case .int64(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .blob(let data): return .data([UInt8](data))
        }
    }
}
