/// A parsed route pattern such as `/api/groups/:gid/messages/:mid`.
///
/// A pattern is a list of segments, each a literal, a variable, or a variable followed by a
/// literal suffix (`:id.json`, Rails' and ApiModel's format extension). `{name}` is a synonym
/// for `:name`; a trailing slash is ignored; literal segments and suffixes are percent-decoded
/// when parsed, so `/caf%C3%A9s` and `/cafés` are the same pattern.
///
/// ```swift
/// let pattern = try RoutePattern("/api/groups/{gid}/messages/:mid/")
/// print(pattern)             // /api/groups/:gid/messages/:mid
/// print(pattern.variables)   // ["gid", "mid"]
/// try RoutePattern("/post/:id.json").segments   // [.literal("post"), .suffixedVariable("id", suffix: ".json")]
/// ```
public struct RoutePattern: Sendable, Hashable, CustomStringConvertible {
    /// One `/`-separated piece of a pattern.
    public enum Segment: Sendable, Hashable {
        /// Matches exactly this text (compared after percent-decoding the request path).
        case literal(String)
        /// Matches any non-empty segment and captures it, percent-decoded, under this name.
        case variable(String)
        /// Matches a segment that ends with `suffix` after a non-empty value, and captures the
        /// value (without the suffix), percent-decoded, under the name: `:id.json` matches
        /// `7.json` with `id` = `7`.
        case suffixedVariable(String, suffix: String)

        /// The variable's name, `nil` for a literal.
        var variableName: String? {
            switch self {
            case .literal: return nil
            case .variable(let name), .suffixedVariable(let name, _): return name
            }
        }
    }

    /// The parsed form, behind one reference so that copying a pattern (into
    /// every route match) costs one retain.
    private final class Storage: Sendable {
        let segments: [Segment]
        let variables: [String]
        let description: String

        init(segments: [Segment], variables: [String]) {
            self.segments = segments
            self.variables = variables
            self.description = RoutePattern.render(segments)
        }
    }

    private let storage: Storage

    /// The segments after the leading `/`; empty for the root pattern `/`.
    ///
    /// ```swift
    /// try RoutePattern("/users/:id").segments   // [.literal("users"), .variable("id")]
    /// ```
    public var segments: [Segment] { storage.segments }

    /// The variable names, in the order they appear.
    ///
    /// ```swift
    /// try RoutePattern("/groups/{gid}/messages/:mid").variables   // ["gid", "mid"]
    /// ```
    public var variables: [String] { storage.variables }

    /// Whether two patterns have the same segments (and so the same canonical text).
    public static func == (lhs: RoutePattern, rhs: RoutePattern) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.segments == rhs.storage.segments
    }

    /// Hashes the segments.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.segments)
    }

    /// Parses a pattern.
    ///
    /// ```swift
    /// let pattern = try RoutePattern("/users/:id/posts")
    /// ```
    ///
    /// Rules: the text starts with `/`; segments are separated by `/` and are
    /// never empty (one trailing `/` is ignored); a variable segment is `:name`
    /// or `{name}` where `name` is an identifier (letters, digits and `_`, not
    /// starting with a digit) used once in the pattern; a variable may be
    /// followed by a literal suffix, starting with `.` after `:name`
    /// (`:id.json`) and with anything after `{name}` (`{id}-edit`); `{`, `}`,
    /// `?` and `#` may not appear in literal segments or suffixes; `%XX` escapes
    /// in literals must be valid UTF-8.
    ///
    /// - Parameters:
    ///   - text: The pattern text.
    /// - Throws: `RouteError` with code `.invalidPattern`, naming the pattern and the problem.
    public init(_ text: String) throws(RouteError) {
        guard text.utf8.first == UInt8(ascii: "/") else {
            throw .invalidPattern(text, "a pattern must start with \"/\"")
        }
        if text.utf8.contains(UInt8(ascii: "?")) || text.utf8.contains(UInt8(ascii: "#")) {
            throw .invalidPattern(
                text, "a pattern may not contain \"?\" or \"#\" (patterns match the path only)")
        }
        var body = text.dropFirst()
        if body.utf8.count > 1 && body.hasSuffix("/") { body = body.dropLast() }
        var segments: [Segment] = []
        var variables: [String] = []
        if !body.isEmpty {
            for (offset, part) in body.split(separator: "/", omittingEmptySubsequences: false).enumerated() {
                let segment = try Self.parseSegment(part, number: offset + 1, pattern: text)
                if let name = segment.variableName {
                    if variables.contains(name) {
                        throw .invalidPattern(text, "variable \"\(name)\" appears more than once")
                    }
                    variables.append(name)
                }
                segments.append(segment)
            }
        }
        self.storage = Storage(segments: segments, variables: variables)
    }

    /// Creates a pattern from already-parsed segments.
    ///
    /// ```swift
    /// let pattern = try RoutePattern(segments: [.literal("users"), .variable("id")])
    /// ```
    ///
    /// - Parameters:
    ///   - segments: The segments; literals are taken as they are (not percent-decoded).
    /// - Throws: `RouteError` with code `.invalidPattern` for an empty literal or suffix, an
    ///   invalid variable name or a variable used twice.
    public init(segments: [Segment]) throws(RouteError) {
        var variables: [String] = []
        for (offset, segment) in segments.enumerated() {
            switch segment {
            case .literal(let text):
                if text.isEmpty {
                    throw .invalidPattern(Self.render(segments), "segment \(offset + 1) is empty")
                }
            case .variable(let name), .suffixedVariable(let name, _):
                if case .suffixedVariable(_, let suffix) = segment, suffix.isEmpty {
                    throw .invalidPattern(Self.render(segments), "segment \(offset + 1) has an empty suffix")
                }
                if let problem = Self.problem(withVariableName: name) {
                    throw .invalidPattern(Self.render(segments), problem)
                }
                if variables.contains(name) {
                    throw .invalidPattern(Self.render(segments), "variable \"\(name)\" appears more than once")
                }
                variables.append(name)
            }
        }
        self.storage = Storage(segments: segments, variables: variables)
    }

    /// The canonical text: `:name` variables, no trailing slash, literals
    /// percent-encoded only where needed to parse back to the same pattern.
    public var description: String { storage.description }

    /// The pattern with every variable renamed `_`: two patterns with the same
    /// shape match exactly the same paths.
    ///
    /// ```swift
    /// try RoutePattern("/users/:id").shape   // "/users/:_"
    /// ```
    public var shape: String {
        Self.render(segments.map { segment in
            switch segment {
            case .literal: return segment
            case .variable: return .variable("_")
            case .suffixedVariable(_, let suffix): return .suffixedVariable("_", suffix: suffix)
            }
        })
    }

    static func render(_ segments: [Segment]) -> String {
        guard !segments.isEmpty else { return "/" }
        var text = ""
        for segment in segments {
            text += "/"
            switch segment {
            case .variable(let name):
                text += ":"
                text += name
            case .suffixedVariable(let name, let suffix):
                // `:name` reads up to the first `.`; any other suffix needs the braces.
                text += suffix.utf8.first == UInt8(ascii: ".") ? ":" + name : "{" + name + "}"
                PercentEncoding.encode(suffix, allowed: .readableSegment, into: &text)
            case .literal(let literal):
                if literal.utf8.first == UInt8(ascii: ":") {
                    text += "%3A"
                    let rest = String(decoding: literal.utf8.dropFirst(), as: UTF8.self)
                    PercentEncoding.encode(rest, allowed: .readableSegment, into: &text)
                } else {
                    PercentEncoding.encode(literal, allowed: .readableSegment, into: &text)
                }
            }
        }
        return text
    }

    private static func parseSegment(_ part: Substring, number: Int, pattern: String) throws(RouteError) -> Segment {
        if part.isEmpty {
            throw .invalidPattern(pattern, "segment \(number) is empty (\"//\")")
        }
        var name: Substring?
        var suffix: Substring = ""
        if part.hasPrefix(":") {
            name = part.dropFirst()
            // `:id.json`: the name stops at the first `.` when what precedes it is a valid name.
            if let dot = name?.firstIndex(of: "."), let whole = name {
                let head = whole[..<dot]
                if problem(withVariableName: head) == nil {
                    name = head
                    suffix = whole[dot...]
                }
            }
        } else if part.hasPrefix("{") {
            guard let close = part.firstIndex(of: "}") else {
                throw .invalidPattern(pattern, "segment \(number) \"\(part)\" opens \"{\" without closing it")
            }
            name = part[part.index(after: part.startIndex) ..< close]
            suffix = part[part.index(after: close)...]
        }
        if let name {
            if let problem = problem(withVariableName: name) {
                throw .invalidPattern(pattern, "segment \(number): \(problem)")
            }
            guard !suffix.isEmpty else { return .variable(String(name)) }
            if suffix.contains("{") || suffix.contains("}") {
                throw .invalidPattern(
                    pattern, "segment \(number) \"\(part)\": a variable's suffix may not hold \"{\" or \"}\"")
            }
            guard let decoded = PercentEncoding.decodeString(suffix) else {
                throw .invalidPattern(pattern, "segment \(number) \"\(part)\" has an invalid percent escape")
            }
            return .suffixedVariable(String(name), suffix: decoded)
        }
        if part.contains("{") || part.contains("}") {
            throw .invalidPattern(
                pattern, "segment \(number) \"\(part)\": \"{name}\" must start its segment")
        }
        guard let literal = PercentEncoding.decodeString(part) else {
            throw .invalidPattern(
                pattern, "segment \(number) \"\(part)\" has an invalid percent escape")
        }
        return .literal(literal)
    }

    /// Why `name` is not a valid variable name, or `nil` when it is.
    static func problem(withVariableName name: some StringProtocol) -> String? {
        guard let first = name.unicodeScalars.first else {
            return "a variable name is empty"
        }
        let valid = !isASCIIDigit(first) && name.unicodeScalars.allSatisfy { scalar in
            scalar == "_" || isASCIIDigit(scalar) || scalar.properties.isAlphabetic
        }
        if valid { return nil }
        return "variable name \"\(name)\" is not an identifier (letters, digits and \"_\", not starting with a digit)"
    }

    private static func isASCIIDigit(_ scalar: Unicode.Scalar) -> Bool {
        scalar >= "0" && scalar <= "9"
    }
}
