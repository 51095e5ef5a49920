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

/// Counts the line feeds in `[from, to)` and finds the last one. Eight bytes at a time, without
/// a branch per word: each `\n` byte becomes a 1 in its byte lane, lanes are added for up to 255
/// words and then summed; the last one is found by searching back from `to`.
func jsonCountLineFeeds(_ from: UnsafePointer<UInt8>, _ to: UnsafePointer<UInt8>) -> (count: Int, last: UnsafePointer<UInt8>?) {
    var p = from
    var count = 0
    let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
    let evenBytes: UInt64 = 0x00FF_00FF_00FF_00FF
    while to - p >= 8 {
        var lanes: UInt64 = 0
        var rounds = 0
        while rounds < 255 && to - p >= 8 {
            let word = UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)) ^ 0x0A0A_0A0A_0A0A_0A0A
            // 0x80 in exactly the bytes that were 0x0A (no borrow crosses a byte), moved to 0x01.
            lanes &+= ~(((word & lows) &+ lows) | word | lows) &>> 7
            p += 8
            rounds &+= 1
        }
        let pairs = (lanes & evenBytes) &+ ((lanes &>> 8) & evenBytes)
        count &+= Int((pairs &* 0x0001_0001_0001_0001) &>> 48)
    }
    while p < to {
        if p.pointee == 0x0A { count &+= 1 }
        p += 1
    }
    return (count, count == 0 ? nil : jsonLastLineFeed(from, to))
}

/// The last line feed in `[from, to)`, searched backwards from `to` (lines are short).
func jsonLastLineFeed(_ from: UnsafePointer<UInt8>, _ to: UnsafePointer<UInt8>) -> UnsafePointer<UInt8>? {
    var p = to
    while p > from {
        p -= 1
        if p.pointee == 0x0A { return p }
    }
    return nil
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
