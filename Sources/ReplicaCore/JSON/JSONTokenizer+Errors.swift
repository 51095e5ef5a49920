/// The tokenizer's error messages: each says what was found and what was expected.
extension JSONTokenizer {
    /// What the grammar expects in the current state, for messages.
    var expectation: String {
        switch state {
        case .topLevel: return "a JSON value"
        case .objectValue: return "a value after ':'"
        case .arrayValue: return "a value after ','"
        case .firstArrayValue: return "a value or ']'"
        case .firstKey: return "a string key or '}'"
        case .nextKey: return "a string key after ','"
        case .colon: return "':' after object key"
        case .commaOrEnd: return inObject ? "',' or '}' after object member" : "',' or ']' after array element"
        case .done: return "end of input after the top-level value"
        }
    }

    /// The error for an unexpected `byte` at `p`.
    @usableFromInline
    @inline(never)
    func unexpected(_ byte: UInt8) -> JSONParseError {
        if state == .done {
            return region.error(.trailingCharacters, at: p, "unexpected \(jsonDescribeByte(byte)) after the top-level value: expected end of input")
        }
        if expectsValue {
            switch byte {
            case UInt8(ascii: "+"):
                return region.error(.invalidNumber, at: p, "unexpected '+': a number cannot start with '+'")
            case UInt8(ascii: "."):
                return region.error(.invalidNumber, at: p, "unexpected '.': a number needs a digit before '.'")
            case 0xEF where region.offset(of: p) == 0:
                return region.error(.unexpectedCharacter, at: p, "unexpected byte order mark (U+FEFF): JSON text must not start with one; expected a JSON value")
            case UInt8(ascii: "]") where state == .arrayValue:
                return region.error(.unexpectedCharacter, at: p, "unexpected ']': expected a value after ',' (trailing commas are not allowed)")
            default: break
            }
        }
        if state == .nextKey && byte == UInt8(ascii: "}") {
            return region.error(.unexpectedCharacter, at: p, "unexpected '}': expected a string key after ',' (trailing commas are not allowed)")
        }
        return region.error(.unexpectedCharacter, at: p, "unexpected \(jsonDescribeByte(byte)): expected \(expectation)")
    }

    /// The error for input that ends before the document is complete.
    @usableFromInline
    @inline(never)
    func unexpectedEnd() -> JSONParseError {
        if state == .topLevel && region.offset(of: p) == 0 {
            return region.error(.unexpectedEnd, at: p, "empty input: expected a JSON value")
        }
        return region.error(.unexpectedEnd, at: p, "unexpected end of input: expected \(expectation)")
    }

    @usableFromInline
    @inline(never)
    func tooDeep() -> JSONParseError {
        region.error(.tooDeep, at: p, "arrays and objects nested deeper than \(maxDepth) levels")
    }
}
