/// A stretch of contiguous input whose first byte's position in the whole
/// input is known, so any pointer into it maps to an offset, line and column.
///
/// Line and column are computed only when an error is made, by counting line
/// feeds from the region start: the happy path pays nothing.
@usableFromInline
struct JSONSourceRegion {
    /// First byte of the region.
    @usableFromInline var start: UnsafePointer<UInt8>
    /// Absolute offset of `start` in the whole input.
    @usableFromInline var offset: Int
    /// 1-based line of `start`.
    @usableFromInline var line: Int
    /// Absolute offset of the first byte of `start`'s line.
    @usableFromInline var lineStart: Int

    @inlinable
    init(start: UnsafePointer<UInt8>, offset: Int = 0, line: Int = 1, lineStart: Int = 0) {
        self.start = start
        self.offset = offset
        self.line = line
        self.lineStart = lineStart
    }

    /// The absolute offset of `pointer`.
    @inlinable
    func offset(of pointer: UnsafePointer<UInt8>) -> Int { offset &+ (pointer - start) }

    /// The region that starts at `pointer`, with its line information.
    func subregion(at pointer: UnsafePointer<UInt8>) -> JSONSourceRegion {
        let (line, lineStart) = location(of: pointer)
        return JSONSourceRegion(start: pointer, offset: offset(of: pointer), line: line, lineStart: lineStart)
    }

    /// The line of `pointer` and the absolute offset where that line starts.
    func location(of pointer: UnsafePointer<UInt8>) -> (line: Int, lineStart: Int) {
        let (count, last) = jsonCountLineFeeds(start, pointer)
        if let last { return (line + count, offset(of: last) + 1) }
        return (line, lineStart)
    }

    /// Makes the error for the byte at `pointer`.
    @usableFromInline
    @inline(never)
    func error(_ code: JSONParseError.Code, at pointer: UnsafePointer<UInt8>, _ message: String) -> JSONParseError {
        let (line, lineStart) = location(of: pointer)
        let offset = offset(of: pointer)
        return JSONParseError(code: code, byteOffset: offset, line: line, column: offset - lineStart + 1, message: message)
    }
}

/// Counts the line feeds in `[from, to)` and finds the last one, eight bytes at a time.
func jsonCountLineFeeds(_ from: UnsafePointer<UInt8>, _ to: UnsafePointer<UInt8>) -> (count: Int, last: UnsafePointer<UInt8>?) {
    var p = from
    var count = 0
    var last: UnsafePointer<UInt8>? = nil
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    while to - p >= 8 {
        let word = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self) ^ (ones &* 0x0A)
        if (word &- ones) & ~word & highs != 0 {
            for i in 0..<8 where p[i] == 0x0A {
                count &+= 1
                last = p + i
            }
        }
        p += 8
    }
    while p < to {
        if p.pointee == 0x0A {
            count &+= 1
            last = p
        }
        p += 1
    }
    return (count, last)
}

/// A short human description of the byte at `pointer` for error messages.
func jsonDescribeByte(_ byte: UInt8) -> String {
    switch byte {
    case 0x22: return "'\"'"
    case 0x21...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
    case 0x20: return "space"
    case 0x0A: return "line feed"
    case 0x0D: return "carriage return"
    case 0x09: return "tab"
    default:
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x\(hex.count == 1 ? "0" + hex : hex)"
    }
}
