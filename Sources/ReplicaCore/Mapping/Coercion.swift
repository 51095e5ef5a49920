/// The lenient-but-exact conversions from JSON scalars to attribute values.
///
/// Each returns `nil` when the value cannot be converted; callers turn that
/// into a ``MappingError`` that names the value. Text is trimmed of ASCII
/// white space (space, tab, CR, LF) before it is read as a number or a bool.
enum Coercion {
    /// `Int64` from an integer, a double with no fractional part inside `Int64`'s range,
    /// or text that is a decimal integer (`"42"`, `" -7 "`, `"+5"`; not `"4.0"`, `"1e3"`, `"0x10"`).
    static func integer(_ value: JSONValue) -> Int64? {
        switch value {
        case .int(let i): return i
        case .double: return value.int64Value
        case .string(let s): return Int64(trimmed(s))
        default: return nil
        }
    }

    /// Why ``integer(_:)`` failed, for the error message, or `nil` for no particular reason.
    static func integerFailureDetail(_ value: JSONValue) -> String? {
        switch value {
        case .bigInteger:
            return "it is out of the 64-bit integer range"
        case .double(let d):
            if !d.isFinite { return nil }
            return d.rounded() != d ? "it has a fractional part" : "it is out of the 64-bit integer range"
        case .string(let s):
            var digits = Substring(trimmed(s))
            if digits.first == "-" || digits.first == "+" { digits = digits.dropFirst() }
            if !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) {
                return "it is out of the 64-bit integer range"
            }
            return nil
        default: return nil
        }
    }

    /// `Double` from a number, or from text in JSON number syntax (a leading `+`,
    /// a missing integer or fraction part are accepted: `"+1"`, `".5"`, `"1."`);
    /// `nan`, `inf` and hexadecimal text are not numbers here, nor text that overflows.
    static func double(_ value: JSONValue) -> Double? {
        switch value {
        case .int, .double: return value.doubleValue
        case .bigInteger: return value.doubleValue.flatMap { $0.isFinite ? $0 : nil }
        case .string(let s): return decimalText(trimmed(s))
        default: return nil
        }
    }

    /// `Bool` from `true`/`false`, the numbers `1`/`0`, or the text (any case)
    /// `true`/`false`, `yes`/`no`, `1`/`0`.
    static func bool(_ value: JSONValue) -> Bool? {
        switch value {
        case .bool(let b): return b
        case .int(let i): return i == 1 ? true : i == 0 ? false : nil
        case .double(let d): return d == 1 ? true : d == 0 ? false : nil
        case .string(let s):
            switch trimmed(s).lowercased() {
            case "true", "yes", "1": return true
            case "false", "no", "0": return false
            default: return nil
            }
        default: return nil
        }
    }

    /// `String` from text as is, integers in decimal (big ones as written), doubles in Swift's
    /// shortest round-trip form (`1.5`, `2.0`, `1e+20`), bools as `true`/`false`. Arrays and objects fail.
    static func string(_ value: JSONValue) -> String? {
        switch value {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .bigInteger(let literal): return literal
        case .double(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        default: return nil
        }
    }

    /// A fraction from a percentage: `45`, `"45"`, `"45%"`, `"45 %"` → `0.45`.
    static func percentage(_ value: JSONValue) -> Double? {
        switch value {
        case .int, .double, .bigInteger: return double(value).map { $0 / 100 }
        case .string(let s):
            var text = trimmed(s)
            if text.hasSuffix("%") { text = trimmed(String(text.dropLast())) }
            return decimalText(text).map { $0 / 100 }
        default: return nil
        }
    }

    /// Unix seconds from a number or numeric text.
    static func seconds(_ value: JSONValue) -> Double? {
        double(value)
    }

    /// Numbers whose magnitude is at least this are Unix milliseconds when no transform says otherwise.
    ///
    /// 1e11 seconds is the year 5138; 1e11 milliseconds is 1973-03-03. So a
    /// millisecond time before March 1973 reads as seconds: name the
    /// `unixMilliseconds` transform for such data.
    static let millisecondThreshold = 1e11

    /// The text without leading and trailing ASCII white space.
    static func trimmed(_ text: String) -> String {
        let utf8 = text.utf8
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        guard let first = utf8.first, let last = utf8.last, isSpace(first) || isSpace(last) else { return text }
        guard let start = utf8.firstIndex(where: { !isSpace($0) }),
              let end = utf8.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(text[start...end])
    }

    /// A finite double from decimal text: optional sign, digits with an optional `.`, optional exponent.
    static func decimalText(_ text: String) -> Double? {
        var sawDigit = false
        for byte in text.utf8 {
            switch byte {
            case 0x30...0x39: sawDigit = true
            case 0x2B, 0x2D, 0x2E, 0x45, 0x65: break  // + - . E e
            default: return nil
            }
        }
        guard sawDigit, let value = Double(text), value.isFinite else { return nil }
        return value
    }
}
