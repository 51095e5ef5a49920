/// Serialization: a ``JSONValue`` back to JSON text.
///
/// Strings escape `"`, `\` and control characters (`\n`, `\t`, … or
/// `\u00XX`) and keep other characters as UTF-8. Doubles use Swift's
/// shortest round-trip form (`2.0`, `0.1`, `1e+20`); non-finite doubles
/// become `null`; a `.bigInteger` is written as its literal (`null` if it is
/// not a decimal integer). `parse(serialize(v)) == v` for every value without
/// NaN or infinity.
extension JSONValue {
    /// Whether `text` is a JSON integer literal: an optional `-`, then `0` or digits not starting with `0`.
    ///
    /// ```swift
    /// JSONValue.isIntegerLiteral("-12345678901234567890")   // true
    /// JSONValue.isIntegerLiteral("012")                     // false
    /// ```
    public static func isIntegerLiteral(_ text: String) -> Bool {
        var digits = Substring(text).utf8
        if digits.first == UInt8(ascii: "-") { digits = digits.dropFirst() }
        guard let first = digits.first else { return false }
        if first == UInt8(ascii: "0") { return digits.count == 1 }
        return digits.allSatisfy { $0 &- UInt8(ascii: "0") < 10 }
    }

    /// The JSON text of this value.
    ///
    /// ```swift
    /// JSONValue.object(["b": 1, "a": [true, nil]]).serialized(sortedKeys: true)   // {"a":[true,null],"b":1}
    /// ```
    ///
    /// - Parameters:
    ///   - pretty: Indent with two spaces and put each member and element on its own line.
    ///   - sortedKeys: Write object members sorted by key instead of in document order.
    /// - Returns: The JSON text.
    public func serialized(pretty: Bool = false, sortedKeys: Bool = false) -> String {
        String(decoding: serializedBytes(pretty: pretty, sortedKeys: sortedKeys), as: UTF8.self)
    }

    /// The JSON text of this value as UTF-8 bytes.
    ///
    /// ```swift
    /// let body: [UInt8] = value.serializedBytes()
    /// ```
    ///
    /// - Parameters:
    ///   - pretty: Indent with two spaces and put each member and element on its own line.
    ///   - sortedKeys: Write object members sorted by key instead of in document order.
    /// - Returns: The JSON text's UTF-8 bytes.
    public func serializedBytes(pretty: Bool = false, sortedKeys: Bool = false) -> [UInt8] {
        var writer = JSONTextWriter(pretty: pretty, sortedKeys: sortedKeys)
        writer.write(self, indent: 0)
        return writer.output
    }
}

/// Appends JSON text to a byte buffer.
struct JSONTextWriter {
    var output: [UInt8] = []
    let pretty: Bool
    let sortedKeys: Bool

    init(pretty: Bool, sortedKeys: Bool) {
        self.pretty = pretty
        self.sortedKeys = sortedKeys
        output.reserveCapacity(256)
    }

    mutating func write(_ value: JSONValue, indent: Int) {
        switch value {
        case .null: append("null")
        case .bool(let bool): append(bool ? "true" : "false")
        case .int(let int): append(String(int))
        case .double(let double): append(double.isFinite ? double.description : "null")
        case .bigInteger(let literal): append(JSONValue.isIntegerLiteral(literal) ? literal : "null")
        case .string(let string): writeString(string)
        case .array(let array):
            guard !array.isEmpty else { return append("[]") }
            output.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                write(element, indent: indent + 1)
            }
            newline(indent)
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            guard !object.isEmpty else { return append("{}") }
            output.append(UInt8(ascii: "{"))
            let keys = sortedKeys ? object.keys.sorted() : object.keys
            for (index, key) in keys.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                writeString(key)
                output.append(UInt8(ascii: ":"))
                if pretty { output.append(UInt8(ascii: " ")) }
                write(object[key] ?? .null, indent: indent + 1)
            }
            newline(indent)
            output.append(UInt8(ascii: "}"))
        }
    }

    mutating func newline(_ indent: Int) {
        guard pretty else { return }
        output.append(0x0A)
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    mutating func append(_ text: String) {
        output.append(contentsOf: text.utf8)
    }

    mutating func writeString(_ string: String) {
        output.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
