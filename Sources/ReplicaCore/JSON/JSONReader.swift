/// A validating pull reader over contiguous UTF-8 JSON bytes: one token at a time, no allocation.
///
/// Every byte it passes over is checked against RFC 8259 (grammar, escapes,
/// UTF-8, numbers, limits). Strings come back as borrowed ``JSONString``s, so
/// keys can be matched against known UTF-8 without making a `String`; numbers
/// are converted once, to `Int64` when exact. The reader borrows the bytes: it
/// and its tokens are valid only while the buffer is.
///
/// ```swift
/// try bytes.withUnsafeBytes { buffer in
///     var reader = JSONReader(bytes: buffer)
///     guard try reader.next() == .beginObject else { return }
///     while case .key(let key) = try reader.next() {
///         if key == "id", case .number(.int(let id)) = try reader.next() { print(id) } else { try reader.skipValue() }
///     }
/// }
/// ```
public struct JSONReader: ~Copyable {
    @usableFromInline var tokenizer: JSONTokenizer

    /// A reader over a whole JSON document.
    ///
    /// ```swift
    /// var reader = JSONReader(bytes: buffer, limits: JSONLimits(maxDepth: 16))
    /// ```
    ///
    /// - Parameters:
    ///   - bytes: The document's UTF-8 bytes; must stay valid while the reader is used.
    ///   - limits: Depth and string bounds (``JSONLimits/maxDocumentSize`` is not checked here).
    public init(bytes: UnsafeRawBufferPointer, limits: JSONLimits = .default) {
        self.tokenizer = JSONTokenizer(bytes: bytes, limits: limits)
    }

    @usableFromInline
    init(tokenizer: JSONTokenizer) {
        self.tokenizer = tokenizer
    }

    /// Reads the next token; `.end` once the top-level value is complete and only whitespace remains.
    ///
    /// ```swift
    /// while case let token = try reader.next(), token != .end { ... }
    /// ```
    ///
    /// - Returns: The next token.
    /// - Throws: ``JSONParseError`` at the first byte that is not valid JSON.
    @inlinable
    public mutating func next() throws -> JSONToken {
        try tokenizer.next()
    }

    /// Skips the next value, whatever its size, validating it.
    ///
    /// Call it where a value is expected: after a `.key`, before an array
    /// element, or at the start. If the next token is a key, the key and its
    /// value are skipped; if it closes a container, only that token is consumed.
    ///
    /// ```swift
    /// case .key(let key) where !wanted(key): try reader.skipValue()
    /// ```
    ///
    /// - Throws: ``JSONParseError`` if the skipped bytes are not valid JSON.
    public mutating func skipValue() throws {
        let startDepth = tokenizer.depth
        var token = try tokenizer.next()
        if case .key = token { token = try tokenizer.next() }
        switch token {
        case .beginObject, .beginArray:
            while tokenizer.depth > startDepth {
                if try tokenizer.next() == .end { return }
            }
        default:
            return
        }
    }

    /// Reads the next value whole as a ``JSONValue``.
    ///
    /// ```swift
    /// case .key(let key) where key == "tags": tags = try reader.readValue()
    /// ```
    ///
    /// - Returns: The value (after a key: the member's value).
    /// - Throws: ``JSONParseError`` if the value is not valid JSON, or if the next token closes a container.
    public mutating func readValue() throws -> JSONValue {
        try JSONValueBuilder.build(&tokenizer)
    }

    /// How many arrays and objects are open.
    public var depth: Int { tokenizer.depth - tokenizer.baseDepth }

    /// The absolute offset of the next unread byte.
    public var byteOffset: Int { tokenizer.region.offset(of: tokenizer.p) }
}
