/// One token read by a ``JSONReader``.
///
/// Strings and keys are borrowed ``JSONString`` views into the reader's bytes:
/// valid only while those bytes are.
///
/// ```swift
/// var reader = JSONReader(bytes: buffer)
/// while case let token = try reader.next(), token != .end { print(token) }
/// ```
public enum JSONToken: Equatable, CustomStringConvertible {
    case beginObject
    case endObject
    case beginArray
    case endArray
    /// An object member name; the member's value follows.
    case key(JSONString)
    case string(JSONString)
    case number(JSONNumber)
    case bool(Bool)
    case null
    /// The end of the input: the top-level value is complete.
    case end

    public var description: String {
        switch self {
        case .beginObject: return "{"
        case .endObject: return "}"
        case .beginArray: return "["
        case .endArray: return "]"
        case .key(let s): return "key \(s.decoded().debugDescription)"
        case .string(let s): return "string \(s.decoded().debugDescription)"
        case .number(.int(let i)): return "number \(i)"
        case .number(.double(let d)): return "number \(d)"
        case .number(.bigInteger(let literal)): return "number \(literal)"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .end: return "end"
        }
    }
}

/// A JSON number: exact `Int64` when the text is an integer that fits, the
/// literal of an integer that does not (`.bigInteger`), else a correctly rounded `Double`.
///
/// ```swift
/// if case .number(let n) = try reader.next() { print(n.doubleValue) }
/// ```
public enum JSONNumber: Sendable, Hashable {
    case int(Int64)
    case double(Double)
    /// An integer (no fraction, no exponent) outside `Int64`'s range, as written.
    case bigInteger(String)

    /// The number as a `Double` (an `Int64` beyond 2^53 and a big integer round).
    public var doubleValue: Double {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .bigInteger(let literal): return Double(literal) ?? .nan
        }
    }

    /// The number as a ``JSONValue``.
    public var jsonValue: JSONValue {
        switch self {
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .bigInteger(let literal): return .bigInteger(literal)
        }
    }
}

/// A borrowed, already validated JSON string: its raw UTF-8 bytes between the quotes.
///
/// When ``hasEscapes`` is `false` the raw bytes *are* the string's UTF-8, so a
/// key can be compared without allocating. Valid only while the parsed bytes are.
///
/// ```swift
/// if case .key(let key) = token, key == "email" { ... }
/// let name = string.decoded()
/// ```
public struct JSONString: Equatable, CustomStringConvertible {
    /// The raw bytes between the quotes, escapes not decoded.
    public let rawBytes: UnsafeRawBufferPointer
    /// Whether the raw bytes contain a backslash escape.
    public let hasEscapes: Bool

    @inlinable
    init(rawBytes: UnsafeRawBufferPointer, hasEscapes: Bool) {
        self.rawBytes = rawBytes
        self.hasEscapes = hasEscapes
    }

    /// The decoded string.
    public var description: String { decoded() }

    /// Whether the decoded string equals `utf8` (the UTF-8 of a key you know).
    ///
    /// ```swift
    /// let emailKey: [UInt8] = Array("email".utf8)
    /// emailKey.withUnsafeBytes { key.equals($0) }
    /// ```
    ///
    /// - Parameters:
    ///   - utf8: UTF-8 bytes to compare with.
    /// - Returns: `true` when the decoded string has exactly these bytes.
    @inlinable
    public func equals(_ utf8: UnsafeRawBufferPointer) -> Bool {
        if !hasEscapes {
            guard utf8.count == rawBytes.count else { return false }
            guard let a = rawBytes.baseAddress, let b = utf8.baseAddress else { return true }
            return jsonBytesEqual(a, b, utf8.count)
        }
        return decodedUTF8().withUnsafeBytes { decoded in
            decoded.count == utf8.count && (decoded.count == 0 || jsonBytesEqual(decoded.baseAddress.unsafelyUnwrapped, utf8.baseAddress.unsafelyUnwrapped, utf8.count))
        }
    }

    /// Compares the decoded string with a string literal, without allocating when there are no escapes.
    ///
    /// ```swift
    /// if key == "id" { ... }
    /// ```
    ///
    /// - Parameters:
    ///   - lhs: A parsed string.
    ///   - rhs: A string literal.
    /// - Returns: Whether they are equal.
    @inlinable
    public static func == (lhs: JSONString, rhs: StaticString) -> Bool {
        if rhs.hasPointerRepresentation {
            return lhs.equals(UnsafeRawBufferPointer(start: rhs.utf8Start, count: rhs.utf8CodeUnitCount))
        }
        return lhs.decoded() == rhs.description
    }

    /// Compares two parsed strings by their decoded contents.
    public static func == (lhs: JSONString, rhs: JSONString) -> Bool {
        if !lhs.hasEscapes { return rhs.equals(lhs.rawBytes) }
        return lhs.decoded() == rhs.decoded()
    }
}

@inlinable
func jsonBytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
    var i = 0
    while i &+ 8 <= count {
        if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
        i &+= 8
    }
    while i < count {
        if a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) { return false }
        i &+= 1
    }
    return true
}
