/// One value delivered by a ``JSONStreamParser``: a borrowed view of its raw bytes.
///
/// It is valid only during the callback that receives it. Read it with
/// ``reader()`` (no allocation per token) or ``value()`` (a ``JSONValue``).
/// If the callback does not read it to the end, the stream parser validates
/// the rest itself before going on, so invalid JSON never passes unreported.
///
/// ```swift
/// try parser.feed(chunk) { element in
///     var reader = element.reader()
///     _ = try reader.next()   // .beginObject
///     ...
/// }
/// ```
public struct JSONElement: ~Copyable {
    /// The value's raw bytes: valid only during the callback.
    public let bytes: UnsafeRawBufferPointer
    /// The absolute offset of the value's first byte in the stream.
    public let byteOffset: Int
    /// The element's index in its streamed array, or `nil` for a value delivered whole.
    public let index: Int?
    /// The index of the pattern that matched, in the parser's `patterns`.
    public let patternIndex: Int
    /// Where the streamed array is (for an element) or the value itself is (delivered whole).
    let basePointer: JSONPointer
    let region: JSONSourceRegion
    let depth: Int
    let limits: JSONLimits
    let completion: UnsafeMutablePointer<Bool>

    init(
        bytes: UnsafeRawBufferPointer, index: Int?, patternIndex: Int, basePointer: JSONPointer,
        region: JSONSourceRegion, depth: Int, limits: JSONLimits, completion: UnsafeMutablePointer<Bool>
    ) {
        self.bytes = bytes
        self.byteOffset = region.offset(of: JSONTokenizer.base(of: bytes))
        self.index = index
        self.patternIndex = patternIndex
        self.basePointer = basePointer
        self.region = region
        self.depth = depth
        self.limits = limits
        self.completion = completion
    }

    /// Where the value is in the document, e.g. `/data/users/17`.
    public var pointer: JSONPointer {
        if let index { return basePointer / index }
        return basePointer
    }

    /// A validating pull reader over the value's bytes, valid only during the callback.
    ///
    /// ```swift
    /// var reader = element.reader()
    /// while case let token = try reader.next(), token != .end { ... }
    /// ```
    ///
    /// - Returns: A reader positioned before the value's first token; its errors carry stream offsets.
    public func reader() -> JSONReader {
        JSONReader(tokenizer: makeTokenizer())
    }

    /// The value as a ``JSONValue``.
    ///
    /// ```swift
    /// let user = try element.value()
    /// ```
    ///
    /// - Returns: The parsed value.
    /// - Throws: ``JSONParseError`` if the value is not valid JSON, with its offset in the stream.
    public func value() throws -> JSONValue {
        var tokenizer = makeTokenizer()
        return try JSONValueBuilder.build(&tokenizer)
    }

    func makeTokenizer() -> JSONTokenizer {
        let start = JSONTokenizer.base(of: bytes)
        var tokenizer = JSONTokenizer(start: start, end: start + bytes.count, region: region, baseDepth: depth, limits: limits)
        tokenizer.completionFlag = completion
        return tokenizer
    }
}
