/// RFC 3986 percent-encoding and -decoding over UTF-8 bytes.
///
/// Helpers shared by pattern parsing, matching and reverse routing, and by the
/// mock server's paths and query strings (one encoder and decoder for both).
///
/// ```swift
/// PercentEncoding.encode("a/b c", allowed: .unreserved)              // "a%2Fb%20c"
/// PercentEncoding.decodeString("caf%C3%A9")                          // "café"
/// PercentEncoding.decodeString("a+b%2B", plusIsSpace: true)          // "a b+"
/// ```
package enum PercentEncoding {
    /// Which bytes an encoder leaves as they are.
    package enum Allowed {
        /// RFC 3986 unreserved: `A-Z a-z 0-9 - . _ ~`. Used for variable values.
        case unreserved
        /// RFC 3986 `pchar` minus `%`: unreserved, sub-delims, `:` and `@`.
        /// Used for literal segments written by the developer.
        case pathSegment
        /// Like `.pathSegment`, and non-ASCII bytes stay too. Used by `description`.
        case readableSegment

        @inline(__always)
        func allows(_ byte: UInt8) -> Bool {
            if PercentEncoding.isUnreserved(byte) { return true }
            switch self {
            case .unreserved:
                return false
            case .pathSegment:
                return PercentEncoding.isSubDelimOrColonAt(byte)
            case .readableSegment:
                return byte >= 0x80 || PercentEncoding.isSubDelimOrColonAt(byte)
            }
        }
    }

    @inline(__always)
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    @inline(__always)
    static func isSubDelimOrColonAt(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
             UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"),
             UInt8(ascii: "@"):
            return true
        default:
            return false
        }
    }

    /// The value of one hexadecimal digit, or `nil`.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        default: nil
        }
    }

    /// Writes the percent-decoded bytes of `source` to `output`, which must
    /// have room for `source.count` bytes.
    ///
    /// - Returns: The number of bytes written, or `nil` when `source` holds a
    ///   `%` not followed by two hex digits.
    static func decode(_ source: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        var index = 0
        var written = 0
        let count = source.count
        while index < count {
            let byte = source[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < count,
                      let high = hexValue(source[index + 1]),
                      let low = hexValue(source[index + 2])
                else { return nil }
                output[written] = high << 4 | low
                index += 3
            } else {
                output[written] = byte
                index += 1
            }
            written += 1
        }
        return written
    }

    /// Calls `body` with the percent-decoded bytes of `source` (in temporary
    /// storage), or with `nil` when an escape is malformed.
    static func withDecodedBytes<Result>(
        _ source: UnsafeBufferPointer<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>?) -> Result
    ) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(source.count, 1)) { buffer in
            guard let count = decode(source, into: buffer) else { return body(nil) }
            return body(UnsafeBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    /// Whether `bytes` is well-formed UTF-8 (RFC 3629: no overlong forms,
    /// no surrogates, nothing above U+10FFFF).
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index &+= 1
                continue
            }
            guard let sequence = UTF8Sequence(lead: lead) else { return false }
            let trailing = sequence.length &- 1
            guard index &+ trailing < count else { return false }
            guard sequence.admitsSecond(bytes[index &+ 1]) else { return false }
            var next = index &+ 2
            while next <= index &+ trailing {
                guard bytes[next] & 0xC0 == 0x80 else { return false }
                next &+= 1
            }
            index = next
        }
        return true
    }

    /// The percent-decoded text of `source` (UTF-8 bytes), or `nil` when an
    /// escape is malformed or the decoded bytes are not UTF-8.
    static func decodeString(_ source: UnsafeBufferPointer<UInt8>) -> String? {
        guard source.contains(UInt8(ascii: "%")) else {
            return String(decoding: source, as: UTF8.self)
        }
        return withDecodedBytes(source) { decoded in
            guard let decoded, isValidUTF8(decoded) else { return nil }
            return String(decoding: decoded, as: UTF8.self)
        }
    }

    /// The percent-decoded text of `text`, or `nil` when an escape is
    /// malformed or the decoded bytes are not UTF-8.
    package static func decodeString(_ text: some StringProtocol) -> String? {
        var copy = String(text)
        return copy.withUTF8 { decodeString($0) }
    }

    /// The percent-decoded text of `text`, a raw `+` read as a space when
    /// `plusIsSpace` (query strings and form bodies, where `%2B` is the plus);
    /// `nil` when an escape is malformed or the decoded bytes are not UTF-8.
    ///
    /// ```swift
    /// PercentEncoding.decodeString("red+car%2B1", plusIsSpace: true)   // "red car+1"
    /// ```
    package static func decodeString(_ text: some StringProtocol, plusIsSpace: Bool) -> String? {
        guard plusIsSpace, text.utf8.contains(UInt8(ascii: "+")) else { return decodeString(text) }
        let bytes = text.utf8.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }
        return bytes.withUnsafeBufferPointer { decodeString($0) }
    }

    /// `text` with every byte that `allowed` does not keep percent-encoded (as
    /// UTF-8, upper-case hex).
    ///
    /// ```swift
    /// PercentEncoding.encode("refs/heads/main", allowed: .unreserved)   // "refs%2Fheads%2Fmain"
    /// ```
    package static func encode(_ text: some StringProtocol, allowed: Allowed) -> String {
        var output = ""
        encode(text, allowed: allowed, into: &output)
        return output
    }

    /// Appends `text` to `output`, percent-encoding (as UTF-8, upper-case hex)
    /// every byte that `allowed` does not keep.
    package static func encode(_ text: some StringProtocol, allowed: Allowed, into output: inout String) {
        let hex: StaticString = "0123456789ABCDEF"
        var needsEncoding = false
        for byte in text.utf8 where !allowed.allows(byte) {
            needsEncoding = true
            break
        }
        guard needsEncoding else {
            output += text
            return
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3)
        hex.withUTF8Buffer { digits in
            for byte in text.utf8 {
                if allowed.allows(byte) {
                    bytes.append(byte)
                } else {
                    bytes.append(UInt8(ascii: "%"))
                    bytes.append(digits[Int(byte >> 4)])
                    bytes.append(digits[Int(byte & 0x0F)])
                }
            }
        }
        output += String(decoding: bytes, as: UTF8.self)
    }
}
