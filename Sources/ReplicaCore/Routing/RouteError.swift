/// An error raised while parsing a route pattern, building a route table or
/// building a path from a pattern.
///
/// Match on the code, read the message:
///
/// ```swift
/// do {
///     _ = try RoutePattern("/users/:id/posts/:id")
/// } catch let error where error.code == .invalidPattern {
///     print(error)   // invalid route pattern "/users/:id/posts/:id": variable "id" appears more than once
/// }
/// ```
public struct RouteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem the error reports.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Value: Sendable, Hashable {
            case invalidPattern
            case ambiguousRoutes
            case duplicateRoute
            case missingVariable
            case noRoute
            case invalidVariable
        }

        let value: Value

        init(_ value: Value) { self.value = value }

        /// The pattern text is not a valid route pattern.
        public static let invalidPattern = Code(.invalidPattern)

        /// Two routes for the same method have the same shape but different
        /// variable names (`/users/:id` and `/users/:userID`): no path can tell them apart.
        public static let ambiguousRoutes = Code(.ambiguousRoutes)

        /// The same method and pattern were registered twice.
        public static let duplicateRoute = Code(.duplicateRoute)

        /// Reverse routing was not given a value for one of the pattern's variables.
        public static let missingVariable = Code(.missingVariable)

        /// No route of the table matches the method and path.
        public static let noRoute = Code(.noRoute)

        /// A path variable's value cannot be converted to the type of the attribute it scopes.
        public static let invalidVariable = Code(.invalidVariable)

        /// The code's name, such as `invalidPattern`.
        public var description: String {
            switch value {
            case .invalidPattern: "invalidPattern"
            case .ambiguousRoutes: "ambiguousRoutes"
            case .duplicateRoute: "duplicateRoute"
            case .missingVariable: "missingVariable"
            case .noRoute: "noRoute"
            case .invalidVariable: "invalidVariable"
            }
        }
    }

    /// What kind of problem this is.
    public let code: Code

    /// A readable explanation naming the pattern(s) and the problem.
    public let message: String

    /// The pattern text the error is about (the first one for two-route errors).
    public let pattern: String

    /// The other pattern, for `.ambiguousRoutes` and `.duplicateRoute`.
    public let otherPattern: String?

    /// Creates an error; the message should name what was wrong and where.
    ///
    /// ```swift
    /// throw RouteError(code: .invalidPattern, message: "…", pattern: "/a//b")
    /// ```
    ///
    /// - Parameters:
    ///   - code: The kind of problem.
    ///   - message: The readable explanation.
    ///   - pattern: The pattern text concerned.
    ///   - otherPattern: The second pattern, when two routes conflict.
    public init(code: Code, message: String, pattern: String, otherPattern: String? = nil) {
        self.code = code
        self.message = message
        self.pattern = pattern
        self.otherPattern = otherPattern
    }

    /// The readable message.
    public var description: String { message }
}

extension RouteError {
    static func invalidPattern(_ pattern: String, _ problem: String) -> RouteError {
        RouteError(
            code: .invalidPattern,
            message: "invalid route pattern \"\(pattern)\": \(problem)",
            pattern: pattern
        )
    }
}
