/// Bounds that protect a parser from hostile or broken input.
///
/// Exceeding a bound is a ``JSONParseError``, never a crash or a stack overflow.
///
/// ```swift
/// var limits = JSONLimits()
/// limits.maxDepth = 64
/// let value = try JSONValue(parsing: text, limits: limits)
/// ```
public struct JSONLimits: Sendable, Hashable {
    /// The deepest nesting of arrays and objects allowed (`[[1]]` has depth 2). Default 512.
    public var maxDepth: Int
    /// The longest string allowed, in encoded bytes between the quotes. Default 64 MiB.
    public var maxStringLength: Int
    /// The longest input allowed, in bytes. Default: unlimited.
    public var maxDocumentSize: Int
    /// For ``JSONStreamParser``: the longest single delivered value (one array
    /// element, or one value delivered whole), which is the most the parser
    /// buffers when a value straddles chunks. Default 256 MiB.
    public var maxStreamedValueSize: Int

    /// Limits with the given bounds; every argument has a safe default.
    ///
    /// ```swift
    /// let strict = JSONLimits(maxDepth: 32, maxStringLength: 4096)
    /// ```
    ///
    /// - Parameters:
    ///   - maxDepth: Deepest nesting of containers.
    ///   - maxStringLength: Longest string, in encoded bytes.
    ///   - maxDocumentSize: Longest input, in bytes.
    ///   - maxStreamedValueSize: Longest value a stream parser delivers.
    public init(
        maxDepth: Int = 512,
        maxStringLength: Int = 64 << 20,
        maxDocumentSize: Int = .max,
        maxStreamedValueSize: Int = 256 << 20
    ) {
        self.maxDepth = maxDepth
        self.maxStringLength = maxStringLength
        self.maxDocumentSize = maxDocumentSize
        self.maxStreamedValueSize = maxStreamedValueSize
    }

    /// The default limits.
    public static let `default` = JSONLimits()
}
