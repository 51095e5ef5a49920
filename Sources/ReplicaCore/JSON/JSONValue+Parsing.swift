import Foundation

/// Whole-buffer parsing: one JSON text in memory becomes one ``JSONValue``.
///
/// The parser is validating (RFC 8259): it rejects trailing commas, leading
/// zeros, lone surrogates, raw control characters, invalid UTF-8, `NaN`,
/// trailing garbage and empty input. A leading UTF-8 byte order mark is
/// rejected (`.unexpectedCharacter` at byte 0), as RFC 8259 §8.1 says senders
/// must not add one. Any value may be the top-level value.
///
/// Integers that fit `Int64` (including `Int64.min`) become `.int`; integers
/// that do not become `.bigInteger` with their literal; other numbers become
/// correctly rounded `.double`s; `-0` becomes `.double(-0.0)` so its sign
/// survives; a fraction or exponent that overflows `Double` (`1e400`) is a
/// `.numberOutOfRange` error. Parsing uses an explicit stack: nesting deeper
/// than ``JSONLimits/maxDepth`` is a `.tooDeep` error, never a stack overflow.
extension JSONValue {
    /// Parses a JSON text held in a `String`.
    ///
    /// ```swift
    /// let value = try JSONValue(parsing: #"{"id": 1, "tags": ["a"]}"#)
    /// ```
    ///
    /// - Parameters:
    ///   - text: The JSON text.
    ///   - limits: Bounds on depth, string length and size.
    /// - Throws: ``JSONParseError`` with the offset, line and column of the first problem.
    public init(parsing text: String, limits: JSONLimits = .default) throws {
        var text = text
        self = try text.withUTF8 { try JSONValue(parsing: UnsafeRawBufferPointer($0), limits: limits) }
    }

    /// Parses a JSON text from UTF-8 bytes.
    ///
    /// ```swift
    /// let value = try JSONValue(parsing: Array("[1, 2.5, null]".utf8))
    /// ```
    ///
    /// - Parameters:
    ///   - bytes: The JSON text's UTF-8 bytes.
    ///   - limits: Bounds on depth, string length and size.
    /// - Throws: ``JSONParseError`` with the offset, line and column of the first problem.
    public init(parsing bytes: [UInt8], limits: JSONLimits = .default) throws {
        self = try bytes.withUnsafeBytes { try JSONValue(parsing: $0, limits: limits) }
    }

    /// Parses a JSON text from `Data`.
    ///
    /// ```swift
    /// let value = try JSONValue(parsing: try Data(contentsOf: url))
    /// ```
    ///
    /// - Parameters:
    ///   - data: The JSON text's UTF-8 bytes.
    ///   - limits: Bounds on depth, string length and size.
    /// - Throws: ``JSONParseError`` with the offset, line and column of the first problem.
    public init(parsing data: Data, limits: JSONLimits = .default) throws {
        self = try data.withUnsafeBytes { try JSONValue(parsing: $0, limits: limits) }
    }

    /// Parses a JSON text from raw memory, without copying it.
    ///
    /// ```swift
    /// let value = try buffer.withUnsafeBytes { try JSONValue(parsing: $0) }
    /// ```
    ///
    /// - Parameters:
    ///   - buffer: The JSON text's UTF-8 bytes.
    ///   - limits: Bounds on depth, string length and size.
    /// - Throws: ``JSONParseError`` with the offset, line and column of the first problem.
    public init(parsing buffer: UnsafeRawBufferPointer, limits: JSONLimits = .default) throws {
        self = try JSONValueBuilder.parseDocument(buffer, limits: limits)
    }
}
