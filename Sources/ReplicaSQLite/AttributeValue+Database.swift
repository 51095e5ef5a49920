import Foundation
import GRDB
import GRDBSQLite
import ReplicaCore

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
        switch databaseValue.storage {
        case .null: self = .null
        case .int64(let i): self.init(stored: .integer(i), type: type)
        case .double(let d): self.init(stored: .double(d), type: type)
        case .string(let s): self.init(stored: .string(s), type: type)
        case .blob(let data): self.init(stored: .data([UInt8](data)), type: type)
        }
    }

    /// Reads column `index` of the current row of a stepped statement as an attribute of `type`,
    /// as ``init(databaseValue:type:)`` does, without going through `DatabaseValue`.
    init(column handle: OpaquePointer, at index: Int32, type: AttributeType) {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: self.init(stored: .integer(sqlite3_column_int64(handle, index)), type: type)
        case SQLITE_FLOAT: self.init(stored: .double(sqlite3_column_double(handle, index)), type: type)
        case SQLITE_TEXT:
            // By length: text may hold NUL bytes.
            let count = Int(sqlite3_column_bytes(handle, index))
            let text = sqlite3_column_text(handle, index).map {
                String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
            } ?? ""
            self.init(stored: .string(text), type: type)
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, index))
            let bytes = sqlite3_column_blob(handle, index).map {
                [UInt8](UnsafeRawBufferPointer(start: $0, count: count))
            } ?? []
            self.init(stored: .data(bytes), type: type)
        default:
            self = .null
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
