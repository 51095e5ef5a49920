/// Decoding a validated ``JSONString``'s escapes into a Swift `String` or UTF-8 bytes.
extension JSONString {
    /// The decoded string; allocates only what the `String` needs.
    ///
    /// ```swift
    /// if case .string(let s) = try reader.next() { names.append(s.decoded()) }
    /// ```
    ///
    /// - Returns: The string with escapes decoded.
    public func decoded() -> String {
        if !hasEscapes {
            return String(decoding: rawBytes, as: UTF8.self)
        }
        return String(unsafeUninitializedCapacity: rawBytes.count) { buffer in
            decodeEscapes(into: buffer)
        }
    }

    /// The decoded string's UTF-8 bytes.
    ///
    /// ```swift
    /// let bytes = string.decodedUTF8()
    /// ```
    ///
    /// - Returns: The UTF-8 of the string with escapes decoded.
    public func decodedUTF8() -> [UInt8] {
        if !hasEscapes { return Array(rawBytes) }
        return [UInt8](unsafeUninitializedCapacity: rawBytes.count) { buffer, count in
            count = decodeEscapes(into: buffer)
        }
    }

    /// Writes the decoded UTF-8 into `buffer` (at least `rawBytes.count` long); returns its length.
    ///
    /// The bytes were validated by the tokenizer, so every escape is well formed.
    private func decodeEscapes(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        guard let base = rawBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
            let out = buffer.baseAddress
        else { return 0 }
        let count = rawBytes.count
        var i = 0
        var o = 0
        while i < count {
            let byte = base[i]
            guard byte == UInt8(ascii: "\\"), i + 1 < count else {
                out[o] = byte
                o += 1
                i += 1
                continue
            }
            let escape = base[i + 1]
            i += 2
            var scalar: UInt32
            switch escape {
            case UInt8(ascii: "b"): scalar = 0x08
            case UInt8(ascii: "f"): scalar = 0x0C
            case UInt8(ascii: "n"): scalar = 0x0A
            case UInt8(ascii: "r"): scalar = 0x0D
            case UInt8(ascii: "t"): scalar = 0x09
            case UInt8(ascii: "u"):
                guard i + 4 <= count, let unit = jsonHex4(base + i) else { continue }
                i += 4
                scalar = unit
                if (0xD800..<0xDC00).contains(unit), i + 6 <= count, let low = jsonHex4(base + i + 2) {
                    scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
            default: scalar = UInt32(escape)
            }
            o += jsonWriteUTF8(scalar, to: out + o)
        }
        return o
    }
}

/// Writes `scalar` as UTF-8 at `out`; returns the number of bytes written.
@inline(__always)
func jsonWriteUTF8(_ scalar: UInt32, to out: UnsafeMutablePointer<UInt8>) -> Int {
    switch scalar {
    case 0..<0x80:
        out[0] = UInt8(truncatingIfNeeded: scalar)
        return 1
    case 0x80..<0x800:
        out[0] = UInt8(truncatingIfNeeded: 0xC0 | scalar >> 6)
        out[1] = UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F)
        return 2
    case 0x800..<0x10000:
        out[0] = UInt8(truncatingIfNeeded: 0xE0 | scalar >> 12)
        out[1] = UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F)
        out[2] = UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F)
        return 3
    default:
        out[0] = UInt8(truncatingIfNeeded: 0xF0 | scalar >> 18)
        out[1] = UInt8(truncatingIfNeeded: 0x80 | scalar >> 12 & 0x3F)
        out[2] = UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F)
        out[3] = UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F)
        return 4
    }
}
