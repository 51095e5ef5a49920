/// An error thrown when bytes are not valid JSON or exceed a ``JSONLimits`` bound.
///
/// It says what was wrong, what was expected, and where: the 0-based byte
/// offset in the whole input (across all chunks of a stream) and the 1-based
/// line and column. Columns count bytes, so a multi-byte UTF-8 character
/// advances the column by its byte length.
///
/// ```swift
/// do {
///     _ = try JSONValue(parsing: "[1, 2,]")
/// } catch let error as JSONParseError where error.code == .unexpectedCharacter {
///     print(error)   // byte 6 (line 1, column 7): unexpected ']': expected a value after ','
/// }
/// ```
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem was found; compare with the static members.
    ///
    /// ```swift
    /// catch JSONParseError.Code.tooDeep { ... }
    /// ```
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The code's name, e.g. `"tooDeep"`.
        public let rawValue: String
        /// A code with this name; use the static members.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// A byte that cannot appear here (including a leading byte order mark).
        public static let unexpectedCharacter = Code(rawValue: "unexpectedCharacter")
        /// The input ended before the JSON text was complete (also: empty input).
        public static let unexpectedEnd = Code(rawValue: "unexpectedEnd")
        /// A number that breaks the RFC 8259 grammar (`01`, `1.`, `-`, `1e`, `+1`, `.5`).
        public static let invalidNumber = Code(rawValue: "invalidNumber")
        /// A number whose magnitude overflows `Double` (`1e400`).
        public static let numberOutOfRange = Code(rawValue: "numberOutOfRange")
        /// A backslash escape that is not one of `\" \\ \/ \b \f \n \r \t \uXXXX`.
        public static let invalidEscape = Code(rawValue: "invalidEscape")
        /// A `\u` escape that is a lone surrogate (high without low, or low alone).
        public static let invalidUnicode = Code(rawValue: "invalidUnicode")
        /// Bytes inside a string that are not well-formed UTF-8.
        public static let invalidUTF8 = Code(rawValue: "invalidUTF8")
        /// A raw control character (U+0000–U+001F) inside a string.
        public static let controlCharacter = Code(rawValue: "controlCharacter")
        /// Arrays and objects nested deeper than ``JSONLimits/maxDepth``.
        public static let tooDeep = Code(rawValue: "tooDeep")
        /// A string longer than ``JSONLimits/maxStringLength`` bytes.
        public static let stringTooLong = Code(rawValue: "stringTooLong")
        /// Something other than whitespace after the top-level value.
        public static let trailingCharacters = Code(rawValue: "trailingCharacters")
        /// An input longer than ``JSONLimits/maxDocumentSize`` bytes.
        public static let documentTooLarge = Code(rawValue: "documentTooLarge")
        /// A streamed value longer than ``JSONLimits/maxStreamedValueSize`` bytes.
        public static let valueTooLarge = Code(rawValue: "valueTooLarge")
        /// A stream parser used after it finished or failed.
        public static let streamClosed = Code(rawValue: "streamClosed")
    }

    /// What kind of problem was found.
    public let code: Code
    /// The 0-based offset of the offending byte in the whole input.
    public let byteOffset: Int
    /// The 1-based line of the offending byte (lines end with LF).
    public let line: Int
    /// The 1-based column of the offending byte, counted in bytes.
    public let column: Int
    /// What was wrong and what was expected.
    public let message: String

    /// Makes an error; parsers make these, tests may too.
    ///
    /// ```swift
    /// let error = JSONParseError(code: .unexpectedEnd, byteOffset: 0, line: 1, column: 1, message: "expected a value")
    /// ```
    ///
    /// - Parameters:
    ///   - code: The kind of problem.
    ///   - byteOffset: 0-based offset of the offending byte.
    ///   - line: 1-based line.
    ///   - column: 1-based column, in bytes.
    ///   - message: What was wrong and what was expected.
    public init(code: Code, byteOffset: Int, line: Int, column: Int, message: String) {
        self.code = code
        self.byteOffset = byteOffset
        self.line = line
        self.column = column
        self.message = message
    }

    /// `byte 1837 (line 12, column 5): expected ',' or ']' after array element`.
    public var description: String {
        "byte \(byteOffset) (line \(line), column \(column)): \(message)"
    }
}

extension JSONParseError.Code {
    /// Lets `catch JSONParseError.Code.tooDeep` match a thrown ``JSONParseError``.
    ///
    /// ```swift
    /// do { _ = try JSONValue(parsing: text) } catch JSONParseError.Code.unexpectedEnd { print("truncated") }
    /// ```
    ///
    /// - Parameters:
    ///   - code: The code to match.
    ///   - error: A thrown error.
    /// - Returns: Whether `error` is a ``JSONParseError`` with this code.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? JSONParseError)?.code == code
    }
}
