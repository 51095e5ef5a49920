extension RoutePattern {
    /// Builds a path from this pattern by substituting its variables (reverse routing).
    ///
    /// Each value is percent-encoded as UTF-8: only RFC 3986 unreserved
    /// characters (`A-Z a-z 0-9 - . _ ~`) stay as they are, so `/`, `?`, `#`,
    /// spaces and non-ASCII text stay inside their segment. Literal segments are
    /// encoded as path segments (non-ASCII and reserved characters other than
    /// sub-delimiters, `:` and `@` become `%XX`). Values for names the pattern
    /// does not use are ignored.
    ///
    /// ```swift
    /// let pattern = try RoutePattern("/users/:id/posts")
    /// try pattern.path(with: ["id": "3"])        // "/users/3/posts"
    /// try pattern.path(with: ["id": "a/b c"])    // "/users/a%2Fb%20c/posts"
    /// try RoutePattern("/post/:id.json").path(with: ["id": "7"])   // "/post/7.json"
    /// ```
    ///
    /// - Parameters:
    ///   - values: The value of each variable, by name.
    /// - Returns: The path, starting with `/`.
    /// - Throws: `RouteError` with code `.missingVariable` naming the variable and the
    ///   pattern when a value is missing or empty (an empty segment could not match).
    public func path(with values: [String: String]) throws(RouteError) -> String {
        try path { values[$0] }
    }

    /// Builds a path from this pattern, converting each value with `description`.
    ///
    /// ```swift
    /// let pattern = try RoutePattern("/groups/:gid/messages/:mid")
    /// try pattern.path(with: ["gid": 7, "mid": Int64(9_000_000_000)])   // "/groups/7/messages/9000000000"
    /// ```
    ///
    /// - Parameters:
    ///   - values: The value of each variable, by name; `Int`, `Int64`, `UUID`… all work.
    /// - Returns: The path, starting with `/`.
    /// - Throws: `RouteError` with code `.missingVariable` naming the variable and the
    ///   pattern when a value is missing or empty (an empty segment could not match).
    public func path(with values: [String: any CustomStringConvertible]) throws(RouteError) -> String {
        try path { values[$0]?.description }
    }

    /// Builds a path from this pattern, asking `value` for each variable in turn.
    ///
    /// ```swift
    /// let path = try pattern.path { name in name == "id" ? "3" : nil }
    /// ```
    ///
    /// - Parameters:
    ///   - value: Returns the value of the named variable, or `nil` when it has none.
    /// - Returns: The path, starting with `/`.
    /// - Throws: `RouteError` with code `.missingVariable` naming the variable and the
    ///   pattern when a value is missing or empty (an empty segment could not match).
    public func path(_ value: (String) -> String?) throws(RouteError) -> String {
        guard !segments.isEmpty else { return "/" }
        var text = ""
        for segment in segments {
            text += "/"
            switch segment {
            case .literal(let literal):
                PercentEncoding.encode(literal, allowed: .pathSegment, into: &text)
            case .variable(let name), .suffixedVariable(let name, _):
                guard let variableValue = value(name), !variableValue.isEmpty else {
                    let problem = value(name) == nil ? "no value" : "an empty value"
                    throw RouteError(
                        code: .missingVariable,
                        message: "\(problem) for variable \"\(name)\" of route pattern \"\(self)\"",
                        pattern: description
                    )
                }
                PercentEncoding.encode(variableValue, allowed: .unreserved, into: &text)
                if case .suffixedVariable(_, let suffix) = segment {
                    PercentEncoding.encode(suffix, allowed: .pathSegment, into: &text)
                }
            }
        }
        return text
    }
}
