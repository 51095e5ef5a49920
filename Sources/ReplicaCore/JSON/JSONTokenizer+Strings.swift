/// String scanning: finds the closing quote while validating escapes, UTF-8,
/// control characters and the length limit, eight bytes at a time where it can.
extension JSONTokenizer {
    /// Scans the string whose opening quote is at `p`; leaves `p` after the closing quote.
    ///
    /// In a stream, running out of bytes suspends (`p` stays on the quote).
    @usableFromInline
    mutating func scanString() throws -> JSONString {
        let quote = p
        tokenStart = quote
        let contentStart = quote + 1
        var q = contentStart
        var hasEscapes = false
        let limit = maxStringLength
        scan: while true {
            while end - q >= 8 {
                let mask = jsonStringSpecialBytes(UnsafeRawPointer(q).loadUnaligned(as: UInt64.self))
                if mask != 0 {
                    q += mask.trailingZeroBitCount &>> 3
                    break
                }
                q += 8
            }
            guard q < end else { break scan }
            let byte = q.pointee
            if byte == UInt8(ascii: "\"") {
                if q - contentStart > limit { throw stringTooLong(quote) }
                p = q + 1
                return JSONString(rawBytes: UnsafeRawBufferPointer(start: contentStart, count: q - contentStart), hasEscapes: hasEscapes)
            }
            if q - contentStart >= limit { throw stringTooLong(quote) }
            if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                guard let next = try scanEscape(q) else { break scan }
                q = next
            } else if byte >= 0x80 {
                guard let next = try scanUTF8(q) else { break scan }
                q = next
            } else if byte < 0x20 {
                throw region.error(.controlCharacter, at: q, "raw control character \(jsonDescribeByte(byte)) in string: expected it escaped as \\u00\(byte < 0x10 ? "0" : "")\(String(byte, radix: 16, uppercase: true))")
            } else {
                q += 1
            }
        }
        // Ran out of bytes inside the string.
        if end - contentStart > limit { throw stringTooLong(quote) }
        if !isFinal {
            suspended = true
            return JSONString(rawBytes: UnsafeRawBufferPointer(start: nil, count: 0), hasEscapes: false)
        }
        throw region.error(.unexpectedEnd, at: end, "unexpected end of input in the string starting at byte \(region.offset(of: quote)): expected '\"'")
    }

    /// Validates the escape at `q`; returns the byte after it, or `nil` when the bytes run out.
    @inline(__always)
    func scanEscape(_ q: UnsafePointer<UInt8>) throws -> UnsafePointer<UInt8>? {
        guard end - q >= 2 else { return nil }
        switch q[1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
            UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return q + 2
        case UInt8(ascii: "u"):
            guard end - q >= 6 else { return try partialHex(q + 2, escape: q) }
            guard let unit = jsonHex4(q + 2) else {
                throw region.error(.invalidEscape, at: q, "invalid \\u escape: expected 4 hex digits")
            }
            switch unit {
            case 0xD800..<0xDC00:
                guard end - q >= 7 else { return nil }
                guard q[6] == UInt8(ascii: "\\"), end - q == 7 || q[7] == UInt8(ascii: "u") else {
                    throw region.error(.invalidUnicode, at: q, "unpaired high surrogate \\u\(jsonHexString(unit)): expected a \\u escape with a low surrogate after it")
                }
                guard end - q >= 12 else { return end - q <= 8 ? nil : try partialHex(q + 8, escape: q + 6) }
                guard let low = jsonHex4(q + 8) else {
                    throw region.error(.invalidEscape, at: q + 6, "invalid \\u escape: expected 4 hex digits")
                }
                guard (0xDC00..<0xE000).contains(low) else {
                    throw region.error(.invalidUnicode, at: q, "high surrogate \\u\(jsonHexString(unit)) followed by \\u\(jsonHexString(low)): expected a low surrogate (DC00–DFFF)")
                }
                return q + 12
            case 0xDC00..<0xE000:
                throw region.error(.invalidUnicode, at: q, "unpaired low surrogate \\u\(jsonHexString(unit)): expected a high surrogate before it")
            default:
                return q + 6
            }
        default:
            throw invalidEscape(at: q)
        }
    }

    /// The error for a backslash at `q` followed by a byte that starts no escape (the error's
    /// description starts with the backslash's byte offset). A printable byte is quoted with it
    /// (`invalid escape '\x'`); any other is named apart, so that a NUL, a space or a line feed
    /// reads plainly: `invalid escape: '\' followed by byte 0x00`.
    @inline(never)
    func invalidEscape(at q: UnsafePointer<UInt8>) -> JSONParseError {
        let expected = "expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX"
        let byte = q[1]
        if (0x21...0x7E).contains(byte) {
            return region.error(.invalidEscape, at: q, "invalid escape '\\\(Character(Unicode.Scalar(byte)))': \(expected)")
        }
        return region.error(.invalidEscape, at: q, "invalid escape: '\\' followed by \(jsonDescribeByte(byte)); \(expected)")
    }

    /// Checks the hex digits of a `\\u` escape cut short by the end of the bytes: an
    /// invalid one fails now, else the caller must wait for more bytes (`nil`).
    func partialHex(_ digits: UnsafePointer<UInt8>, escape: UnsafePointer<UInt8>) throws -> UnsafePointer<UInt8>? {
        var d = digits
        while d < end {
            guard jsonIsHexDigit(d.pointee) else {
                throw region.error(.invalidEscape, at: escape, "invalid \\u escape: expected 4 hex digits")
            }
            d += 1
        }
        return nil
    }

    /// Validates the UTF-8 sequence whose lead byte is at `q`; returns the byte after it, or `nil` when the bytes run out.
    @inline(__always)
    func scanUTF8(_ q: UnsafePointer<UInt8>) throws -> UnsafePointer<UInt8>? {
        guard let sequence = UTF8Sequence(lead: q.pointee) else { throw invalidUTF8(q) }
        let length = sequence.length
        let available = end - q
        guard available >= 2 else { return nil }
        guard sequence.admitsSecond(q[1]) else { throw invalidUTF8(q) }
        if length >= 3 {
            guard available >= 3 else { return nil }
            if q[2] & 0xC0 != 0x80 { throw invalidUTF8(q) }
        }
        if length == 4 {
            guard available >= 4 else { return nil }
            if q[3] & 0xC0 != 0x80 { throw invalidUTF8(q) }
        }
        return q + length
    }

    @inline(never)
    func invalidUTF8(_ q: UnsafePointer<UInt8>) -> JSONParseError {
        region.error(.invalidUTF8, at: q, "invalid UTF-8 sequence starting with \(jsonDescribeByte(q.pointee)) in string: expected well-formed UTF-8")
    }

    @inline(never)
    func stringTooLong(_ quote: UnsafePointer<UInt8>) -> JSONParseError {
        region.error(.stringTooLong, at: quote, "string longer than the limit of \(maxStringLength) bytes")
    }
}

/// The bits of `word` marking bytes that end a plain run in a string:
/// `"`, `\`, control characters and non-ASCII bytes. The lowest set bit is
/// exact (higher bits may be borrow noise), which is all the scanner uses.
@inline(__always)
func jsonStringSpecialBytes(_ word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    let word = UInt64(littleEndian: word)
    let quote = word ^ (ones &* 0x22)
    let backslash = word ^ (ones &* 0x5C)
    let control = (word &- ones &* 0x20) & ~word
    let zeroQuote = (quote &- ones) & ~quote
    let zeroBackslash = (backslash &- ones) & ~backslash
    return (word | control | zeroQuote | zeroBackslash) & highs
}

@inline(__always)
func jsonIsHexDigit(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): return true
    default: return false
    }
}

/// The value of 4 hex digits at `p`, or `nil`.
@inline(__always)
func jsonHex4(_ p: UnsafePointer<UInt8>) -> UInt32? {
    var value: UInt32 = 0
    for i in 0..<4 {
        let byte = p[i]
        let digit: UInt8
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
        default: return nil
        }
        value = value &<< 4 | UInt32(digit)
    }
    return value
}

func jsonHexString(_ unit: UInt32) -> String {
    let text = String(unit, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - text.count)) + text
}
