/// What a well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, nothing above
/// U+10FFFF) looks like after its lead byte: its length, and the range its second byte must fall
/// in (the bytes after that are all `0x80...0xBF`). The JSON tokenizer and percent-decoding both
/// validate with it.
///
/// ```swift
/// UTF8Sequence(lead: 0xE0)   // length 3, second byte 0xA0...0xBF
/// UTF8Sequence(lead: 0xC0)   // nil: an overlong form
/// ```
struct UTF8Sequence {
    /// The bytes of the sequence, its lead included (2 to 4).
    let length: Int
    let secondLow: UInt8
    let secondHigh: UInt8

    /// The sequence `lead` starts, or `nil` for a byte that starts none (ASCII, a continuation
    /// byte, an overlong or out-of-range lead).
    @inline(__always)
    init?(lead: UInt8) {
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: return nil
        }
        secondLow = low
        secondHigh = high
    }

    /// Whether `byte` may stand second in the sequence.
    @inline(__always)
    func admitsSecond(_ byte: UInt8) -> Bool {
        byte >= secondLow && byte <= secondHigh
    }
}
