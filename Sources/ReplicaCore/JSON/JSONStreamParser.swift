import Foundation

/// An incremental, validating JSON parser that delivers the values found at
/// chosen paths as soon as each one completes, in bounded memory.
///
/// Feed the input in chunks of any size (a chunk may split a string, an
/// escape, a UTF-8 sequence, a number or a literal). When the value at a path
/// matching one of the ``patterns`` is an array, each element is delivered as
/// a ``JSONElement`` as soon as it is complete and never retained; any other
/// matching value is delivered whole. The outermost match wins. Everything
/// else is validated and kept as the *skeleton* that ``finish(_:)`` returns:
/// the document with streamed arrays replaced by `[]` and objects delivered
/// whole replaced by `{}` (scalars delivered whole stay). ``matches`` lists
/// every match, so a pattern that matched nothing is easy to spot.
///
/// Errors (and values) are exactly those of whole-buffer parsing, whatever
/// the chunking, with offsets, lines and columns counted across chunks.
/// Memory is bounded by the skeleton, the largest delivered value that
/// straddles a chunk boundary (``JSONLimits/maxStreamedValueSize``) and the
/// chunk itself.
///
/// ```swift
/// var parser = JSONStreamParser(patterns: [[.key("data"), .key("posts")]])
/// for chunk in chunks {
///     try parser.feed(chunk) { element in try importPost(element) }
/// }
/// let skeleton = try parser.finish()   // {"data": {"posts": []}, "next_cursor": "abc"}
/// ```
public struct JSONStreamParser {
    /// The paths whose values are delivered.
    public let patterns: [JSONPathPattern]
    /// The bounds in force.
    public let limits: JSONLimits
    /// Every match so far, in document order.
    public internal(set) var matches: [JSONStreamMatch] = []

    var tokenizer: JSONTokenizer
    var frames: [Frame] = []
    var skeleton: JSONValue?
    var pending = Pending.none
    /// The bytes of a token or delivered value that straddles chunk boundaries.
    var carry: [UInt8] = []
    var carryOffset = 0
    var carryLine = 1
    var carryLineStart = 0
    /// The absolute offset of the next chunk's first byte, and its line information.
    var offset = 0
    var line = 1
    var lineStart = 0
    var closed = false

    /// Something cut by a chunk boundary, whose bytes so far are in `carry`.
    enum Pending {
        case none
        case token(TokenCompletion)
        case element(ElementScan)
    }

    /// One open container outside delivered values.
    struct Frame {
        enum Kind { case object, array, streamedArray }
        var kind: Kind
        /// The patterns whose steps so far match this container's path.
        var mask: UInt64
        /// This container's step from its parent (`nil` at the root).
        var component: JSONPointer.Component?
        var array: [JSONValue] = []
        var object = JSONObject()
        var key = ""
        /// Elements seen so far (arrays).
        var count = 0
        /// For a streamed array: its pointer, pattern and entry in `matches`.
        var pointer = JSONPointer.root
        var patternIndex = 0
        var matchIndex = 0
    }

    /// A parser that delivers the values at `patterns`.
    ///
    /// ```swift
    /// var parser = JSONStreamParser()                                  // elements of a top-level array
    /// var many = JSONStreamParser(patterns: [[.anyKey]])               // {"users": [...], "posts": [...]}
    /// ```
    ///
    /// - Parameters:
    ///   - patterns: At most 64 paths; the default `[.root]` streams a top-level array's
    ///     elements and delivers any other top-level value whole.
    ///   - limits: Bounds on depth, strings, document and delivered value sizes.
    public init(patterns: [JSONPathPattern] = [.root], limits: JSONLimits = .default) {
        precondition(patterns.count <= 64, "JSONStreamParser supports at most 64 patterns")
        self.patterns = patterns
        self.limits = limits
        let start = JSONTokenizer.base(of: UnsafeRawBufferPointer(start: nil, count: 0))
        self.tokenizer = JSONTokenizer(start: start, end: start, region: JSONSourceRegion(start: start), limits: limits)
        self.tokenizer.isFinal = false
    }

    /// Indexes of the patterns that matched nothing so far (all of them until the document is read).
    ///
    /// ```swift
    /// let skeleton = try parser.finish()
    /// if !parser.unmatchedPatterns.isEmpty { throw MissingEnvelope() }
    /// ```
    public var unmatchedPatterns: [Int] {
        let matched = Set(matches.map(\.patternIndex))
        return patterns.indices.filter { !matched.contains($0) }
    }

    /// The number of bytes fed so far.
    public var byteCount: Int { offset }

    /// Parses the next chunk, calling `body` for each value that completes in it.
    ///
    /// ```swift
    /// try chunk.withUnsafeBytes { try parser.feed($0) { element in print(element.pointer) } }
    /// ```
    ///
    /// - Parameters:
    ///   - chunk: The next bytes of the input, of any length.
    ///   - body: Called with each delivered value, which is valid only during the call.
    ///     It must not use this parser. Errors it throws propagate unchanged.
    /// - Throws: ``JSONParseError`` for invalid JSON or an exceeded limit, or whatever `body`
    ///   throws. After an error the parser is closed.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ body: (borrowing JSONElement) throws -> Void) throws {
        try feed(chunk, direct: { _ in false }, body)
    }

    /// ``feed(_:_:)-(UnsafeRawBufferPointer,_)`` with a decoder that reads streamed objects in
    /// place (see ``Direct``); `body` gets the values it declines and every other value.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, direct: Direct, _ body: Body) throws {
        guard !closed else { throw streamClosed() }
        do {
            try feedChunk(chunk, direct, body)
        } catch {
            closed = true
            throw error
        }
    }

    /// ``finish(_:)`` with a decoder that reads streamed objects in place (see ``Direct``).
    mutating func finish(direct: Direct, _ body: Body) throws -> JSONValue {
        guard !closed else { throw streamClosed() }
        closed = true
        return try finishInput(direct, body)
    }

    /// Parses the next chunk of bytes, like the raw-buffer `feed`.
    ///
    /// ```swift
    /// try parser.feed(Array(#"[{"id":1},"#.utf8)) { print(try $0.value()) }
    /// ```
    ///
    /// - Parameters:
    ///   - chunk: The next bytes of the input.
    ///   - body: Called with each delivered value.
    /// - Throws: ``JSONParseError``, or whatever `body` throws.
    public mutating func feed(_ chunk: [UInt8], _ body: (borrowing JSONElement) throws -> Void) throws {
        try chunk.withUnsafeBytes { try feed($0, body) }
    }

    /// Parses the next chunk of `Data`, like the raw-buffer `feed`.
    ///
    /// ```swift
    /// try parser.feed(data) { element in try store(element) }
    /// ```
    ///
    /// - Parameters:
    ///   - chunk: The next bytes of the input.
    ///   - body: Called with each delivered value.
    /// - Throws: ``JSONParseError``, or whatever `body` throws.
    public mutating func feed(_ chunk: Data, _ body: (borrowing JSONElement) throws -> Void) throws {
        try chunk.withUnsafeBytes { try feed($0, body) }
    }

    /// Ends the input: checks that the document is complete and returns its skeleton.
    ///
    /// A top-level number can only end with the input, so it is delivered here.
    ///
    /// ```swift
    /// let skeleton = try parser.finish { element in try handle(element) }
    /// let cursor = skeleton["next_cursor"]?.stringValue
    /// ```
    ///
    /// - Parameters:
    ///   - body: Called with a value that completes only at the end of the input.
    /// - Returns: The document outside delivered values: streamed arrays as `[]`,
    ///   objects delivered whole as `{}`.
    /// - Throws: ``JSONParseError`` (`.unexpectedEnd` with the end offset for a truncated
    ///   document), or whatever `body` throws. The parser is closed afterwards.
    public mutating func finish(_ body: (borrowing JSONElement) throws -> Void) throws -> JSONValue {
        try finish(direct: { _ in false }, body)
    }

    /// Ends the input: checks that the document is complete and returns its skeleton.
    ///
    /// ```swift
    /// let skeleton = try parser.finish()
    /// ```
    ///
    /// - Returns: The document outside delivered values.
    /// - Throws: ``JSONParseError`` for a truncated or invalid document.
    public mutating func finish() throws -> JSONValue {
        try finish { _ in }
    }

    func streamClosed() -> JSONParseError {
        JSONParseError(code: .streamClosed, byteOffset: offset, line: line, column: offset - lineStart + 1,
                       message: "the stream parser already finished or failed")
    }
}
