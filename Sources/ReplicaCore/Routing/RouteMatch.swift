/// The result of matching a request path against a ``RouteTrie``.
///
/// ```swift
/// if let match = trie.match(method: .get, path: "/groups/7/messages/9?since=3") {
///     match.target                 // what the route leads to
///     match.pattern.description    // "/groups/:gid/messages/:mid"
///     match.parameters["mid"]      // "9"
/// }
/// ```
public struct RouteMatch<Target: Sendable>: Sendable {
    /// What the matched route leads to.
    public let target: Target
    /// The method of the matched route.
    public let method: HTTPMethod
    /// The pattern of the matched route.
    public let pattern: RoutePattern
    /// The percent-decoded variable values, in pattern order.
    public let parameters: RouteParameters

    @usableFromInline
    init(entry: RouteEntry<Target>, parameters: RouteParameters) {
        self.target = entry.target
        self.method = entry.method
        self.pattern = entry.pattern
        self.parameters = parameters
    }
}

/// The variables captured by a route match: percent-decoded values in pattern
/// order, looked up by name.
///
/// ```swift
/// let parameters = match.parameters
/// parameters["gid"]            // "7"
/// parameters.int64("gid")      // 7
/// for (name, value) in parameters { print(name, value) }
/// ```
public struct RouteParameters: Sendable, Hashable, RandomAccessCollection, CustomStringConvertible {
    /// The variable names, in pattern order.
    public let names: [String]
    /// The values, in the same order as `names`.
    public let values: [String]

    /// Creates parameters from names and values of the same length.
    ///
    /// ```swift
    /// let parameters = RouteParameters(names: ["id"], values: ["3"])
    /// ```
    ///
    /// - Parameters:
    ///   - names: The variable names.
    ///   - values: The values, one per name; extra names or values are dropped.
    public init(names: [String], values: [String]) {
        if names.count == values.count {
            self.names = names
            self.values = values
        } else {
            let count = Swift.min(names.count, values.count)
            self.names = Array(names.prefix(count))
            self.values = Array(values.prefix(count))
        }
    }

    /// The first position: `0`.
    public var startIndex: Int { 0 }

    /// One past the last position: the number of variables.
    public var endIndex: Int { values.count }

    /// The name and value at `position`, in pattern order.
    ///
    /// ```swift
    /// let (name, value) = match.parameters[0]   // ("gid", "7")
    /// ```
    public subscript(position: Int) -> (name: String, value: String) {
        (names[position], values[position])
    }

    /// The value of the named variable, or `nil` when the pattern has no such variable.
    ///
    /// ```swift
    /// match.parameters["id"]   // "42"
    /// ```
    ///
    /// - Parameters:
    ///   - name: The variable name, as written in the pattern.
    /// - Returns: The percent-decoded value.
    public subscript(name: String) -> String? {
        guard let index = names.firstIndex(of: name) else { return nil }
        return values[index]
    }

    /// The value of the named variable as a 64-bit integer, or `nil` when it is
    /// missing or not a decimal integer.
    ///
    /// ```swift
    /// match.parameters.int64("id")   // 42
    /// ```
    ///
    /// - Parameters:
    ///   - name: The variable name.
    /// - Returns: The parsed value.
    public func int64(_ name: String) -> Int64? {
        self[name].flatMap { Int64($0) }
    }

    /// The parameters as a dictionary from name to value.
    ///
    /// ```swift
    /// match.parameters.dictionary   // ["gid": "7", "mid": "9"]
    /// ```
    public var dictionary: [String: String] {
        Dictionary(uniqueKeysWithValues: zip(names, values))
    }

    /// `[name: value, …]` in pattern order.
    public var description: String {
        guard !isEmpty else { return "[:]" }
        return "[" + indices.map { "\(names[$0]): \(values[$0])" }.joined(separator: ", ") + "]"
    }
}
