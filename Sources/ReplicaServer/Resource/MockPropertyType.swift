import Foundation

/// The type of one property of a mock resource, checked on every write.
///
/// ```swift
/// let kids = MockProperty("numberOfKids", .integer)
/// ```
public enum MockPropertyType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A JSON string.
    case string
    /// A JSON number without a fractional part that fits in 64 bits.
    case integer
    /// Any JSON number.
    case double
    /// `true` or `false`.
    case bool
    /// Bytes, carried in JSON as a base64 string.
    case blob
    /// An ISO 8601 date (`2024-05-01`) or date-time (`2024-05-01T10:00:00Z`) string.
    case date
    /// Any JSON value, kept as it came.
    case json

    public var description: String { rawValue }

    /// The property type for a Replica schema attribute type.
    ///
    /// ```swift
    /// MockPropertyType(AttributeType.data) // .blob
    /// ```
    /// - Parameters:
    ///   - type: the attribute type of a schema entity.
    /// - Returns: the matching property type.
    public init(_ type: AttributeType) {
        switch type {
        case .string: self = .string
        case .integer: self = .integer
        case .double: self = .double
        case .bool: self = .bool
        case .date: self = .date
        case .data: self = .blob
        case .json: self = .json
        }
    }

    /// What a value of this type must be, as a field error says it ("must be an integer").
    var requirement: String {
        switch self {
        case .string: return "must be a string"
        case .integer: return "must be an integer"
        case .double: return "must be a number"
        case .bool: return "must be a boolean"
        case .blob: return "must be a base64 string"
        case .date: return "must be an ISO 8601 date"
        case .json: return "must be JSON"
        }
    }

    /// Checks a JSON value against this type and returns it in its canonical form, or nil when it does not fit.
    ///
    /// `null` fits every type. Integral doubles (`2.0`) fit `.integer`; integers fit `.double`.
    func validate(_ value: JSONValue) -> JSONValue? {
        if value.isNull { return .null }
        switch self {
        case .string:
            return value.stringValue.map(JSONValue.string)
        case .integer:
            return value.int64Value.map(JSONValue.int)
        case .double:
            if case .int = value { return value }
            return value.doubleValue.flatMap { $0.isFinite ? JSONValue.double($0) : nil }
        case .bool:
            return value.boolValue.map(JSONValue.bool)
        case .blob:
            guard let text = value.stringValue, Data(base64Encoded: text) != nil else { return nil }
            return value
        case .date:
            guard let text = value.stringValue, MockDates.isISO8601(text) else { return nil }
            return value
        case .json:
            return value
        }
    }

    /// Reads a query-string value (`?numberOfKids=2`) as a JSON value of this type; nil when it cannot be one.
    func parseQueryValue(_ text: String) -> JSONValue? {
        if text == "null" { return .null }
        switch self {
        case .string, .blob, .date: return .string(text)
        case .integer: return Int64(text).map(JSONValue.int)
        case .double:
            if let int = Int64(text) { return .int(int) }
            return Double(text).flatMap { $0.isFinite ? JSONValue.double($0) : nil }
        case .bool:
            switch text {
            case "true", "1": return .bool(true)
            case "false", "0": return .bool(false)
            default: return nil
            }
        case .json: return try? JSONValue(parsing: text)
        }
    }
}

/// ISO 8601 checks and HTTP dates, without formatters shared across threads.
enum MockDates {
    /// Whether `text` is `YYYY-MM-DD`, optionally followed by `THH:MM[:SS[.fff]]` and `Z` or `±HH:MM`.
    static func isISO8601(_ text: String) -> Bool {
        let b = Array(text.utf8)
        func digits(_ range: Range<Int>) -> Bool {
            range.upperBound <= b.count && range.allSatisfy { b[$0] >= 48 && b[$0] <= 57 }
        }
        guard b.count >= 10, digits(0..<4), b[4] == 45, digits(5..<7), b[7] == 45, digits(8..<10) else { return false }
        if b.count == 10 { return true }
        guard b[10] == 84 || b[10] == 116 || b[10] == 32, digits(11..<13), b.count > 13, b[13] == 58, digits(14..<16) else {
            return false
        }
        var i = 16
        if i < b.count, b[i] == 58 {
            guard digits(i + 1..<i + 3) else { return false }
            i += 3
            if i < b.count, b[i] == 46 {
                i += 1
                let start = i
                while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }
                if i == start { return false }
            }
        }
        if i == b.count { return true }
        if b[i] == 90 || b[i] == 122 { return i + 1 == b.count }
        guard b[i] == 43 || b[i] == 45, digits(i + 1..<i + 3) else { return false }
        if i + 3 == b.count { return true }
        if b[i + 3] == 58 { return digits(i + 4..<i + 6) && i + 6 == b.count }
        return digits(i + 3..<i + 5) && i + 5 == b.count
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` (RFC 9110 IMF-fixdate) for a Unix time in seconds.
    static func httpDate(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let day = days[Int(parts.tm_wday) % 7]
        let month = months[Int(parts.tm_mon) % 12]
        return "\(day), \(two(parts.tm_mday)) \(month) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// Parses an IMF-fixdate back to Unix seconds; nil for anything else.
    static func parseHTTPDate(_ text: String) -> Int? {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int32(parts[1]),
              let month = months.firstIndex(of: String(parts[2])), let year = Int32(parts[3]) else { return nil }
        let clock = parts[4].split(separator: ":").compactMap { Int32($0) }
        guard clock.count == 3 else { return nil }
        var value = tm()
        value.tm_year = year - 1900
        value.tm_mon = Int32(month)
        value.tm_mday = day
        value.tm_hour = clock[0]
        value.tm_min = clock[1]
        value.tm_sec = clock[2]
        return Int(timegm(&value))
    }
}
