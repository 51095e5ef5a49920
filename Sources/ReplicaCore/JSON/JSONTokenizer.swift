/// The validating RFC 8259 tokenizer under every parser in this folder.
///
/// It reads one token at a time from contiguous UTF-8 bytes and keeps all of
/// its state in this value (a container stack, the grammar state), so a stream
/// parser can stop at a token boundary and resume on the next chunk. With
/// `isFinal == false`, running out of bytes inside a token *suspends*: `next()`
/// returns `.end` with `suspended == true` and `p` back at the token start.
@usableFromInline
struct JSONTokenizer {
    /// What the grammar expects next.
    @usableFromInline
    enum State: UInt8 {
        case topLevel, objectValue, arrayValue, firstArrayValue, firstKey, nextKey, colon, commaOrEnd, done
    }

    @usableFromInline var p: UnsafePointer<UInt8>
    @usableFromInline var end: UnsafePointer<UInt8>
    @usableFromInline var region: JSONSourceRegion
    @usableFromInline var state: State = .topLevel
    /// Absolute nesting depth (containers open, counting those outside a sub-document).
    @usableFromInline var depth: Int
    /// The depth at which this tokenizer's top-level value sits.
    @usableFromInline var baseDepth: Int
    @usableFromInline var stack = ContainerStack()
    @usableFromInline let maxDepth: Int
    @usableFromInline let maxStringLength: Int
    @usableFromInline var isFinal = true
    @usableFromInline var suspended = false
    /// The first byte of the last scalar token read.
    @usableFromInline var tokenStart: UnsafePointer<UInt8>
    /// Set to `true` when the top-level value completes (a streamed element was fully read).
    @usableFromInline var completionFlag: UnsafeMutablePointer<Bool>?

    @usableFromInline
    init(start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, region: JSONSourceRegion, baseDepth: Int = 0, limits: JSONLimits) {
        self.p = start
        self.end = end
        self.region = region
        self.depth = baseDepth
        self.baseDepth = baseDepth
        self.maxDepth = limits.maxDepth
        self.maxStringLength = limits.maxStringLength
        self.tokenStart = start
    }

    /// A tokenizer over a whole buffer whose first byte is offset 0, line 1.
    @usableFromInline
    init(bytes: UnsafeRawBufferPointer, limits: JSONLimits) {
        let start = JSONTokenizer.base(of: bytes)
        self.init(start: start, end: start + bytes.count, region: JSONSourceRegion(start: start), limits: limits)
    }

    /// The first byte of `bytes`, or a never-dereferenced sentinel for an empty buffer.
    @usableFromInline
    static func base(of bytes: UnsafeRawBufferPointer) -> UnsafePointer<UInt8> {
        if let base = bytes.baseAddress { return base.assumingMemoryBound(to: UInt8.self) }
        return UnsafePointer<UInt8>(bitPattern: 16).unsafelyUnwrapped
    }

    /// Whether the container at the top of the stack is an object.
    @inlinable
    var inObject: Bool { stack.get(depth &- baseDepth &- 1) }

    /// Whether the grammar expects a value now (possibly an array's closing `]`).
    @inlinable
    var expectsValue: Bool {
        switch state {
        case .topLevel, .objectValue, .arrayValue, .firstArrayValue: return true
        default: return false
        }
    }

    /// Reads the next token; `.end` when the top-level value is complete and only whitespace follows.
    ///
    /// - Throws: ``JSONParseError`` at the first byte that breaks the grammar.
    @inlinable
    mutating func next() throws -> JSONToken {
        while true {
            skipWhitespace()
            if p == end { return try atEnd() }
            let byte = p.pointee
            switch state {
            case .commaOrEnd:
                let object = inObject
                if byte == UInt8(ascii: ",") {
                    p += 1
                    state = object ? .nextKey : .arrayValue
                    continue
                }
                if byte == UInt8(ascii: "}") && object {
                    p += 1
                    pop()
                    return .endObject
                }
                if byte == UInt8(ascii: "]") && !object {
                    p += 1
                    pop()
                    return .endArray
                }
                throw unexpected(byte)
            case .colon:
                guard byte == UInt8(ascii: ":") else { throw unexpected(byte) }
                p += 1
                state = .objectValue
            case .firstKey, .nextKey:
                if byte == UInt8(ascii: "\"") {
                    let string = try scanString()
                    if suspended { return .end }
                    state = .colon
                    return .key(string)
                }
                if byte == UInt8(ascii: "}") && state == .firstKey {
                    p += 1
                    pop()
                    return .endObject
                }
                throw unexpected(byte)
            case .done:
                throw unexpected(byte)
            case .topLevel, .objectValue, .arrayValue, .firstArrayValue:
                return try readValue(byte)
            }
        }
    }

    @inlinable
    mutating func skipWhitespace() {
        while p < end {
            let byte = p.pointee
            if byte > 0x20 { return }
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            p += 1
        }
    }

    /// Reads the value that starts with `byte` at `p`.
    @inlinable
    mutating func readValue(_ byte: UInt8) throws -> JSONToken {
        switch byte {
        case UInt8(ascii: "{"):
            try push(object: true)
            state = .firstKey
            return .beginObject
        case UInt8(ascii: "["):
            try push(object: false)
            state = .firstArrayValue
            return .beginArray
        case UInt8(ascii: "]") where state == .firstArrayValue:
            p += 1
            pop()
            return .endArray
        case UInt8(ascii: "\""):
            let string = try scanString()
            if suspended { return .end }
            valueDone()
            return .string(string)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let number = try scanNumber()
            if suspended { return .end }
            valueDone()
            return .number(number)
        case UInt8(ascii: "t"):
            try scanLiteral("true")
            if suspended { return .end }
            valueDone()
            return .bool(true)
        case UInt8(ascii: "f"):
            try scanLiteral("false")
            if suspended { return .end }
            valueDone()
            return .bool(false)
        case UInt8(ascii: "n"):
            try scanLiteral("null")
            if suspended { return .end }
            valueDone()
            return .null
        default:
            throw unexpected(byte)
        }
    }

    @inlinable
    mutating func push(object: Bool) throws {
        if depth >= maxDepth { throw tooDeep() }
        stack.set(depth &- baseDepth, object)
        depth &+= 1
        p += 1
    }

    @inlinable
    mutating func pop() {
        depth &-= 1
        valueDone()
    }

    /// Moves the grammar past a complete value.
    @inlinable
    mutating func valueDone() {
        if depth == baseDepth {
            state = .done
            completionFlag?.pointee = true
        } else {
            state = .commaOrEnd
        }
    }

    /// `p` reached `end`: the document is complete, or suspends, or is truncated.
    @inlinable
    mutating func atEnd() throws -> JSONToken {
        if state == .done { return .end }
        if !isFinal {
            suspended = true
            tokenStart = p
            return .end
        }
        throw unexpectedEnd()
    }

    /// Compares the bytes at `p` with a literal; suspends when they run out in a stream.
    @usableFromInline
    mutating func scanLiteral(_ literal: StaticString) throws {
        tokenStart = p
        let count = literal.utf8CodeUnitCount
        let expected = literal.utf8Start
        var i = 1
        while i < count {
            if p + i == end {
                if !isFinal {
                    suspended = true
                    return
                }
                throw region.error(.unexpectedEnd, at: end, "unexpected end of input in literal: expected '\(literal)'")
            }
            let byte = p[i]
            if byte != expected[i] {
                throw region.error(.unexpectedCharacter, at: p + i, "unexpected \(jsonDescribeByte(byte)) in literal: expected '\(literal)'")
            }
            i &+= 1
        }
        p += count
    }
}

/// One bit per open container: set for an object, clear for an array.
@usableFromInline
struct ContainerStack {
    @usableFromInline var low: UInt64 = 0
    @usableFromInline var high: [UInt64] = []

    @usableFromInline
    init() {}

    @inlinable
    func get(_ level: Int) -> Bool {
        if level < 64 { return low & (1 &<< UInt64(level)) != 0 }
        let index = level &- 64
        return high[index >> 6] & (1 &<< UInt64(index & 63)) != 0
    }

    @inlinable
    mutating func set(_ level: Int, _ object: Bool) {
        if level < 64 {
            let bit: UInt64 = 1 &<< UInt64(level)
            low = object ? low | bit : low & ~bit
        } else {
            setHigh(level &- 64, object)
        }
    }

    @usableFromInline
    mutating func setHigh(_ index: Int, _ object: Bool) {
        while high.count <= index >> 6 { high.append(0) }
        let bit: UInt64 = 1 &<< UInt64(index & 63)
        high[index >> 6] = object ? high[index >> 6] | bit : high[index >> 6] & ~bit
    }
}
