import NIOCore

/// A 64-bit hash of a body for its ETag, fed in pieces: the same whether the body is hashed whole or chunk by
/// chunk, at any split.
///
/// It takes the body eight bytes at a time (an FxHash step: rotate, xor the word, multiply), keeps the
/// 0 to 7 bytes a piece ends with for the next piece, and ends with the tail, the length and murmur3's
/// 64-bit finalizer. Each step is a bijection of the state for a given word, so two bodies of the same
/// length that differ in one word always hash apart. Byte at a time (FNV-1a), a page of 100,000 people
/// cost 12 ms of the mock server's 20; this reads a word per multiply.
///
/// ```swift
/// var hash = MockFingerprint()
/// hash.add([UInt8]("[1,".utf8)); hash.add([UInt8]("2]".utf8))
/// hash.hex == MockServer.fingerprint(Array("[1,2]".utf8))   // true
/// ```
struct MockFingerprint: Sendable {
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325
    /// The bytes of an unfinished word, the first in the lowest byte.
    private var tail: UInt64 = 0
    private var tailCount = 0
    private var length: UInt64 = 0

    @inline(__always)
    private static func step(_ state: UInt64, _ word: UInt64) -> UInt64 {
        ((state << 5 | state >> 59) ^ word) &* 0x517c_c1b7_2722_0a95
    }

    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let count = bytes.count
        length &+= UInt64(count)
        var offset = 0
        var hash = state
        if tailCount > 0 {
            while tailCount < 8, offset < count {
                tail |= UInt64(base.load(fromByteOffset: offset, as: UInt8.self)) << (8 * UInt64(tailCount))
                tailCount += 1
                offset += 1
            }
            guard tailCount == 8 else { return }
            hash = Self.step(hash, tail)
            tail = 0
            tailCount = 0
        }
        while count - offset >= 8 {
            hash = Self.step(hash, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            offset += 8
        }
        while offset < count {
            tail |= UInt64(base.load(fromByteOffset: offset, as: UInt8.self)) << (8 * UInt64(tailCount))
            tailCount += 1
            offset += 1
        }
        state = hash
    }

    mutating func add(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { add($0) }
    }

    /// The finished hash: the state with the tail and the length folded in, then mixed.
    var value: UInt64 {
        var hash = state
        if tailCount > 0 { hash = Self.step(hash, tail) }
        hash = Self.step(hash, length)
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash = hash &* 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return hash
    }

    /// The hash as 16 lowercase hex digits.
    var hex: String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// A JSON body rendered straight to bytes: chunks ready to send, the ETag's hash taken as each chunk
/// was finished (no second pass over the body).
///
/// ```swift
/// let body = writer.finish()
/// body.count        // bytes of JSON, without the trailing newline the chunks end with
/// body.fingerprint  // "a1b2…", as MockServer.fingerprint of those bytes
/// ```
struct MockRenderedBody: Sendable {
    /// The body as sent: the JSON text, then one newline (as every JSON answer of the server ends).
    var chunks: [ByteBuffer]
    /// The bytes of JSON text, without that newline.
    var count: Int
    /// The hash of the JSON text, in hex (``MockServer/fingerprint(_:)``).
    var fingerprint: String

    /// The JSON text, without the newline (tests, faults).
    var bytes: [UInt8] {
        var all: [UInt8] = []
        all.reserveCapacity(count + 1)
        for chunk in chunks { all.append(contentsOf: chunk.readableBytesView) }
        if all.last == 10 { all.removeLast() }
        return all
    }
}

/// Writes JSON into chunks of bytes, byte for byte as `JSONValue.serializedBytes()` writes it (compact, members in
/// document order, doubles in Swift's shortest round-trip form, non-finite doubles and bad big-integer literals as
/// `null`, strings escaping `"`, `\` and control characters only), hashing each chunk once it is full.
///
/// ```swift
/// var writer = MockPageWriter()
/// writer.write(.array([1, "a\n"]))
/// let body = writer.finish()   // [1,"a\n"] and a newline
/// ```
struct MockPageWriter {
    /// A chunk is handed over once it holds this many bytes (at the next ``flushIfFull()``).
    static let chunkSize = 256 * 1024

    private var buffer: ByteBuffer
    private var chunks: [ByteBuffer] = []
    private var hash = MockFingerprint()
    /// Whether chunks are hashed as they fill: not for a part after the first (``Part``), whose hash
    /// continues the parts before it.
    private let hashing: Bool
    private var written = 0
    private let allocator = ByteBufferAllocator()

    /// - Parameters:
    ///   - hashing: whether chunks are hashed as they fill (false for a part after the first).
    ///   - capacity: the first chunk's starting capacity; it grows as written (a small page stays small).
    init(hashing: Bool = true, capacity: Int = 16 * 1024) {
        self.hashing = hashing
        buffer = allocator.buffer(capacity: min(capacity, Self.chunkSize + 4096))
    }

    /// One part of a body rendered in several at once: its chunks, and their hash if it is the first part.
    struct Part: Sendable {
        var chunks: [ByteBuffer]
        var count: Int
        var hash: MockFingerprint?
    }

    /// The part written, without a newline.
    mutating func finishPart() -> Part {
        flush()
        return Part(chunks: chunks, count: written, hash: hashing ? hash : nil)
    }

    /// The body of parts in order (the first hashed as it was written, the rest hashed here), with its newline.
    static func join(_ parts: [Part]) -> MockRenderedBody {
        var hash = parts.first?.hash ?? MockFingerprint()
        var chunks: [ByteBuffer] = []
        var count = 0
        for (index, part) in parts.enumerated() {
            if index > 0 || part.hash == nil {
                for chunk in part.chunks { chunk.withUnsafeReadableBytes { hash.add($0) } }
            }
            chunks += part.chunks
            count += part.count
        }
        var newline = ByteBuffer()
        newline.writeInteger(UInt8(10))
        chunks.append(newline)
        return MockRenderedBody(chunks: chunks, count: count, fingerprint: hash.hex)
    }

    /// Ends the current chunk when it is full; call between values (rows).
    @inline(__always)
    mutating func flushIfFull() {
        if buffer.readableBytes >= Self.chunkSize { flush() }
    }

    private mutating func flush() {
        guard buffer.readableBytes > 0 else { return }
        if hashing { buffer.withUnsafeReadableBytes { hash.add($0) } }
        written += buffer.readableBytes
        chunks.append(buffer)
        buffer = allocator.buffer(capacity: Self.chunkSize + 4096)
    }

    /// The rendered body, its newline appended after the hash.
    mutating func finish() -> MockRenderedBody {
        precondition(hashing, "a part is finished with finishPart()")
        buffer.withUnsafeReadableBytes { hash.add($0) }
        written += buffer.readableBytes
        buffer.writeInteger(UInt8(10))
        chunks.append(buffer)
        return MockRenderedBody(chunks: chunks, count: written, fingerprint: hash.hex)
    }

    // MARK: Bytes

    @inline(__always)
    mutating func byte(_ byte: UInt8) {
        buffer.writeInteger(byte)
    }

    /// Bytes written as they are (pre-rendered keys, punctuation).
    @inline(__always)
    mutating func raw(_ bytes: [UInt8]) {
        buffer.writeBytes(bytes)
    }

    /// Bytes already rendered (rows a store keeps as bytes), in as few copies as the chunks allow: a run
    /// longer than the current chunk's room is split across chunks, which end exactly at ``chunkSize``.
    ///
    /// ```swift
    /// rows.withUnsafeBytes { writer.rendered($0) }
    /// ```
    mutating func rendered(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        while !rest.isEmpty {
            let room = Self.chunkSize - buffer.readableBytes
            if room <= 0 {
                flush()
                continue
            }
            let count = min(room, rest.count)
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: rest[..<count]))
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
        }
    }

    // MARK: Scratch

    /// Forgets what was written, keeping the current chunk's memory: a writer reused for one value at a time.
    ///
    /// ```swift
    /// scratch.clear()
    /// scratch.write(value)
    /// scratch.withUnsentBytes { bytes in arena.append(bytes) }
    /// ```
    mutating func clear() {
        buffer.clear()
        chunks = []
        written = 0
        hash = MockFingerprint()
    }

    /// The bytes written since ``clear()`` (or since the writer was made); never flushed, as long as
    /// ``flushIfFull()`` was not called.
    func withUnsentBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        precondition(chunks.isEmpty, "a scratch writer is never flushed")
        return try buffer.withUnsafeReadableBytes(body)
    }

    // MARK: Values

    /// Any JSON value, as `JSONTextWriter` writes it without `pretty` and `sortedKeys`.
    mutating func write(_ value: JSONValue) {
        switch value {
        case .null: raw(Self.null)
        case .bool(let bool): raw(bool ? Self.true : Self.false)
        case .int(let int): integer(int)
        case .double(let double): self.double(double)
        case .bigInteger(let literal):
            if JSONValue.isIntegerLiteral(literal) { buffer.writeString(literal) } else { raw(Self.null) }
        case .string(let string): self.string(string)
        case .array(let array):
            byte(UInt8(ascii: "["))
            var first = true
            for element in array {
                if !first { byte(UInt8(ascii: ",")) }
                first = false
                write(element)
            }
            byte(UInt8(ascii: "]"))
        case .object(let object):
            byte(UInt8(ascii: "{"))
            var first = true
            for key in object.keys {
                if !first { byte(UInt8(ascii: ",")) }
                first = false
                string(key)
                byte(UInt8(ascii: ":"))
                write(object[key] ?? .null)
            }
            byte(UInt8(ascii: "}"))
        }
    }

    static let null = Array("null".utf8)
    static let `true` = Array("true".utf8)
    static let `false` = Array("false".utf8)

    /// Decimal digits, as `String(int)`.
    mutating func integer(_ value: Int64) {
        if value >= 0 && value < 10 {
            byte(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        // The magnitude as unsigned, so that Int64.min has one too.
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var index = 20
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { byte(UInt8(ascii: "-")) }
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(digits)[index...]))
        }
    }

    /// `double.description`, or `null` when it is not finite.
    mutating func double(_ value: Double) {
        guard value.isFinite else { return raw(Self.null) }
        buffer.writeString(value.description)
    }

    /// A quoted string: `"`, `\` and control characters escaped, every other byte as it is.
    mutating func string(_ string: String) {
        byte(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var start = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if index > start { buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start..<index])) }
                escape(byte)
                start = index + 1
            }
            if start < bytes.count { buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start...])) }
        }
        byte(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): raw([UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): raw([UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x0A: raw([UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: raw([UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: raw([UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0x08: raw([UInt8(ascii: "\\"), UInt8(ascii: "b")])
        case 0x0C: raw([UInt8(ascii: "\\"), UInt8(ascii: "f")])
        default:
            raw([UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                 Self.hexDigits[Int(byte >> 4)], Self.hexDigits[Int(byte & 0xF)]])
        }
    }
}
