/// The stream parser's resumable scanners: one finds where a delivered
/// array or object ends (tracking depth, strings and escapes only), the other
/// finds where a token cut by a chunk boundary ends. Neither validates: the
/// tokenizer does that on the bytes they delimit.
extension JSONStreamParser {
    /// Progress of the boundary scan over a delivered array or object.
    struct ElementScan {
        var depth = 0
        var inString = false
        var escaped = false
        /// Where the array holding the element is, or where the value itself is.
        var basePointer: JSONPointer
        var index: Int?
        var patternIndex: Int
        /// The tokenizer depth of the element's container (the element's own brackets are one deeper).
        var parentDepth: Int
    }

    enum ScanResult {
        /// The value ends just before this byte.
        case complete(UnsafePointer<UInt8>)
        case incomplete
        /// This bracket nests deeper than the limit allows.
        case tooDeep(UnsafePointer<UInt8>)
    }

    /// Continues the boundary scan over `[from, end)`.
    static func scanElement(_ scan: inout ElementScan, from: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>, maxDepth: Int) -> ScanResult {
        var q = from
        var depth = scan.depth
        var inString = scan.inString
        let depthLimit = maxDepth &- scan.parentDepth
        defer {
            scan.depth = depth
            scan.inString = inString
        }
        if scan.escaped && q < end {
            scan.escaped = false
            q += 1
        }
        while q < end {
            if inString {
                while end - q >= 8 {
                    let mask = jsonQuoteOrBackslashBytes(UnsafeRawPointer(q).loadUnaligned(as: UInt64.self))
                    if mask != 0 {
                        q += mask.trailingZeroBitCount &>> 3
                        break
                    }
                    q += 8
                }
                while q < end {
                    let byte = q.pointee
                    if byte == UInt8(ascii: "\"") {
                        inString = false
                        q += 1
                        break
                    }
                    if byte == UInt8(ascii: "\\") {
                        if end - q < 2 {
                            scan.escaped = true
                            return .incomplete
                        }
                        q += 2
                        break
                    }
                    q += 1
                }
            } else {
                let byte = q.pointee
                q += 1
                switch byte {
                case UInt8(ascii: "\""):
                    inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth &+= 1
                    if depth > depthLimit { return .tooDeep(q - 1) }
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth &-= 1
                    if depth == 0 { return .complete(q) }
                default:
                    break
                }
            }
        }
        return .incomplete
    }

    /// Progress of the search for the end of a token cut by a chunk boundary.
    struct TokenCompletion {
        enum Kind { case string, number, literal(missing: Int) }
        var kind: Kind
        var escaped = false

        /// The state after the partial token `bytes` (which starts with the token's first byte).
        init(partial bytes: UnsafeRawBufferPointer) {
            let first = bytes.first ?? 0
            switch first {
            case UInt8(ascii: "\""):
                kind = .string
                var escaped = false
                for byte in bytes.dropFirst() {
                    if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true }
                }
                self.escaped = escaped
            case UInt8(ascii: "t"), UInt8(ascii: "n"):
                kind = .literal(missing: max(1, 4 - bytes.count))
            case UInt8(ascii: "f"):
                kind = .literal(missing: max(1, 5 - bytes.count))
            default:
                kind = .number
            }
        }

        /// How many bytes of `[from, end)` complete the token (a number takes the byte after it too), or `nil` if all of them belong to it.
        mutating func advance(from: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>) -> Int? {
            var q = from
            switch kind {
            case .string:
                while q < end {
                    let byte = q.pointee
                    q += 1
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        return q - from
                    }
                }
                return nil
            case .number:
                while q < end {
                    if !jsonIsNumberByte(q.pointee) { return q - from + 1 }
                    q += 1
                }
                return nil
            case .literal(let missing):
                let available = end - from
                if available >= missing { return missing }
                kind = .literal(missing: missing - available)
                return nil
            }
        }
    }
}

/// The bits of `word` marking `"` and `\` bytes; the lowest set bit is exact.
@inline(__always)
func jsonQuoteOrBackslashBytes(_ word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    let word = UInt64(littleEndian: word)
    let quote = word ^ (ones &* 0x22)
    let backslash = word ^ (ones &* 0x5C)
    return ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash) & highs
}
