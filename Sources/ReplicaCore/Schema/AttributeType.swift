/// The type of an entity attribute, and how it is stored in SQLite.
///
/// | type      | Swift value            | SQLite storage |
/// |-----------|------------------------|----------------|
/// | `string`  | `String`               | `TEXT` |
/// | `integer` | `Int64`                | `INTEGER` |
/// | `double`  | `Double`               | `REAL` |
/// | `bool`    | `Bool`                 | `INTEGER` 0 or 1 |
/// | `date`    | `Date`                 | `REAL`: seconds since 1970-01-01T00:00:00Z (Unix time, fractional) |
/// | `data`    | `[UInt8]` / `Data`     | `BLOB` |
/// | `json`    | ``JSONValue``          | `TEXT`: compact JSON |
///
/// Dates are stored as Unix time so that they sort and compare numerically in
/// SQL (`WHERE createdAt > ?` with a `Date` or a number of seconds) and import
/// without formatting text.
///
/// ```swift
/// let type = AttributeType(rawValue: "integer")   // .integer
/// ```
public enum AttributeType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case string
    case integer
    case double
    case bool
    case date
    case data
    case json

    /// The SQLite column type used in `CREATE TABLE`.
    public var sqlType: String {
        switch self {
        case .string, .json: return "TEXT"
        case .integer, .bool: return "INTEGER"
        case .double, .date: return "REAL"
        case .data: return "BLOB"
        }
    }

    public var description: String { rawValue }
}
