/// A parsed JSON value.
///
/// Integers that fit in `Int64` stay exact (`.int`); integers written without
/// fraction or exponent that do not fit keep their literal (`.bigInteger`), so a
/// `json` or `string` attribute stores every digit; every other number is a
/// correctly rounded `.double`. Objects keep their keys in document order.
///
/// ```swift
/// let value = try JSONValue(parsing: #"{"id": 3, "name": "Ann", "big": 12345678901234567890}"#)
/// value["name"]?.stringValue   // "Ann"
/// value["big"]                 // .bigInteger("12345678901234567890")
/// ```
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    /// An integer outside `Int64`'s range, as its decimal literal: an optional `-`
    /// and digits without leading zeros, exactly as the JSON text wrote it.
    /// ``doubleValue`` rounds it; serialization writes the literal.
    case bigInteger(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON object: its members in document order, with keyed lookup.
///
/// When a key occurs twice the last value wins and keeps the first position.
///
/// ```swift
/// var object = JSONObject()
/// object["id"] = .int(1)
/// object.keys   // ["id"]
/// ```
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var keys: [String] = []
    private var storage: [String: JSONValue] = [:]
    /// Keys the parsed text gave more than once (the last value is kept); not part of equality.
    public internal(set) var duplicateKeys: [String] = []

    /// An empty object.
    public init() {}

    /// An object with these members, in this order.
    public init(_ members: [(String, JSONValue)]) {
        for (key, value) in members { self[key] = value }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    /// The value for `key`, or `nil`; assigning `nil` removes the member.
    public subscript(key: String) -> JSONValue? {
        get { storage[key] }
        set {
            if let newValue {
                if storage.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if storage.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    /// The number of members.
    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// The members in document order.
    public var members: [(key: String, value: JSONValue)] {
        keys.map { ($0, storage[$0] ?? .null) }
    }

    public func makeIterator() -> AnyIterator<(key: String, value: JSONValue)> {
        var index = 0
        return AnyIterator {
            guard index < keys.count else { return nil }
            defer { index += 1 }
            let key = keys[index]
            return (key, storage[key] ?? .null)
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.storage == rhs.storage
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage)
    }
}

extension JSONValue {
    /// The member `key` of an object, `nil` for other values.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The element at `index` of an array, `nil` for other values or out of range.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    public var isNull: Bool { if case .null = self { return true } else { return false } }
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var objectValue: JSONObject? { if case .object(let o) = self { return o } else { return nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }

    /// The value as an exact integer: `.int`, or a `.double` with no fractional part that fits `Int64`.
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d):
            guard d.rounded() == d, d >= -9.223372036854775808e18, d < 9.223372036854775808e18 else { return nil }
            return Int64(d)
        default: return nil
        }
    }

    /// The value as a `Double`, for `.int`, `.double` and `.bigInteger` (rounded).
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .bigInteger(let literal): return Double(literal)
        default: return nil
        }
    }

    /// The name of the JSON type, as used in error messages: `null`, `boolean`, `number`, `string`, `array`, `object`.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int, .double, .bigInteger: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
}
