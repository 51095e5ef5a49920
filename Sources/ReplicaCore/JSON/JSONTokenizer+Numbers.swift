/// Number scanning: validates the RFC 8259 grammar and converts to an exact
/// `Int64`, the literal of a larger integer, or a correctly rounded `Double`.
///
/// Integers of up to 19 digits that fit `Int64` are exact; an integer (no
/// fraction, no exponent) that does not fit is kept as its literal
/// (`.bigInteger`), whatever its size. Other numbers use
/// the exact fast path (mantissa ≤ 2^53 and a power of ten ≤ 10^22, where one
/// IEEE multiplication or division is correctly rounded) or else the
/// standard library's correctly rounded decimal conversion. `-0` becomes
/// `.double(-0.0)` so that the sign survives a round trip.
extension JSONTokenizer {
    /// Scans the number at `p`; leaves `p` after it. Suspends in a stream when the bytes run out.
    @usableFromInline
    mutating func scanNumber() throws -> JSONNumber {
        let start = p
        tokenStart = start
        var q = p
        let negative = q.pointee == UInt8(ascii: "-")
        if negative { q += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        var exponent = 0
        var isInteger = true

        guard q < end else { return try numberEnd(q) }
        if q.pointee == UInt8(ascii: "0") {
            q += 1
            digits = 1
            if q < end && jsonIsDigit(q.pointee) {
                throw region.error(.invalidNumber, at: q, "invalid number: leading zeros are not allowed; expected '.', 'e' or the end of the number after 0")
            }
        } else if jsonIsDigit(q.pointee) {
            while q < end {
                let digit = q.pointee &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(digit) }
                digits &+= 1
                q += 1
            }
        } else {
            throw region.error(.invalidNumber, at: q, "invalid number: expected a digit after '-', found \(jsonDescribeByte(q.pointee))")
        }

        if q < end && q.pointee == UInt8(ascii: ".") {
            isInteger = false
            q += 1
            guard q < end else { return try numberEnd(q) }
            guard jsonIsDigit(q.pointee) else {
                throw region.error(.invalidNumber, at: q, "invalid number: expected a digit after '.', found \(jsonDescribeByte(q.pointee))")
            }
            while q < end {
                let digit = q.pointee &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(digit) }
                digits &+= 1
                fractionDigits &+= 1
                q += 1
            }
        }

        if q < end && q.pointee | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            q += 1
            guard q < end else { return try numberEnd(q) }
            var exponentNegative = false
            if q.pointee == UInt8(ascii: "+") || q.pointee == UInt8(ascii: "-") {
                exponentNegative = q.pointee == UInt8(ascii: "-")
                q += 1
                guard q < end else { return try numberEnd(q) }
            }
            guard jsonIsDigit(q.pointee) else {
                throw region.error(.invalidNumber, at: q, "invalid number: expected a digit in the exponent, found \(jsonDescribeByte(q.pointee))")
            }
            while q < end {
                let digit = q.pointee &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                if exponent < 1_000_000 { exponent = exponent &* 10 &+ Int(digit) }
                q += 1
            }
            if exponentNegative { exponent = -exponent }
        }

        if q == end {
            if !isFinal {
                suspended = true
                return .int(0)
            }
        } else if jsonIsNumberByte(q.pointee) {
            throw region.error(.invalidNumber, at: q, "invalid number: unexpected \(jsonDescribeByte(q.pointee)) after \(String(decoding: UnsafeBufferPointer(start: start, count: q - start), as: UTF8.self))")
        }
        p = q

        if isInteger {
            if digits <= 19 {
                if negative {
                    if mantissa == 0 { return .double(-0.0) }
                    if mantissa <= UInt64(Int64.max) &+ 1 { return .int(Int64(bitPattern: 0 &- mantissa)) }
                } else if mantissa <= UInt64(Int64.max) {
                    return .int(Int64(mantissa))
                }
            }
            return bigInteger(start, q)
        }
        if digits <= 19 {
            if mantissa == 0 { return .double(negative ? -0.0 : 0.0) }
            let power = exponent &- fractionDigits
            if mantissa <= 1 << 53 && power >= -22 && power <= 22 {
                var value = Double(mantissa)
                let scale = jsonPowerOfTen(power < 0 ? -power : power)
                value = power < 0 ? value / scale : value * scale
                return .double(negative ? -value : value)
            }
        }
        return try slowNumber(start, q)
    }

    /// The bytes ran out inside a number: suspend in a stream, else fail.
    @inline(never)
    mutating func numberEnd(_ q: UnsafePointer<UInt8>) throws -> JSONNumber {
        if !isFinal {
            suspended = true
            return .int(0)
        }
        throw region.error(.unexpectedEnd, at: q, "unexpected end of input in number: expected a digit")
    }

    /// An integer literal outside `Int64`'s range, kept as written.
    @inline(never)
    func bigInteger(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> JSONNumber {
        .bigInteger(String(decoding: UnsafeBufferPointer(start: start, count: end - start), as: UTF8.self))
    }

    /// Correctly rounded conversion of a long or large-exponent number by the standard library.
    @inline(never)
    func slowNumber(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) throws -> JSONNumber {
        let text = String(decoding: UnsafeBufferPointer(start: start, count: end - start), as: UTF8.self)
        guard let value = Double(text) else {
            throw region.error(.invalidNumber, at: start, "invalid number \(text)")
        }
        guard value.isFinite else {
            throw region.error(.numberOutOfRange, at: start, "number \(text.count > 40 ? String(text.prefix(40)) + "…" : text) is out of the range of a double")
        }
        return .double(value)
    }
}

@inline(__always)
func jsonIsDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

/// Bytes that may continue a number token: a number followed by one of them is malformed.
@inline(__always)
func jsonIsNumberByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"),
        UInt8(ascii: "+"), UInt8(ascii: "-"):
        return true
    default:
        return false
    }
}

/// 10^n for 0 ≤ n ≤ 22, all exactly representable.
@inline(__always)
func jsonPowerOfTen(_ n: Int) -> Double {
    switch n {
    case 0: return 1e0
    case 1: return 1e1
    case 2: return 1e2
    case 3: return 1e3
    case 4: return 1e4
    case 5: return 1e5
    case 6: return 1e6
    case 7: return 1e7
    case 8: return 1e8
    case 9: return 1e9
    case 10: return 1e10
    case 11: return 1e11
    case 12: return 1e12
    case 13: return 1e13
    case 14: return 1e14
    case 15: return 1e15
    case 16: return 1e16
    case 17: return 1e17
    case 18: return 1e18
    case 19: return 1e19
    case 20: return 1e20
    case 21: return 1e21
    default: return 1e22
    }
}
