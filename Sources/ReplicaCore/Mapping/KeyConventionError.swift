/// An error raised while building a ``KeyConvention/Table``.
///
/// ```swift
/// do {
///     _ = try KeyConvention.snakeCase.table(attributes: ["userID", "userId"])
/// } catch let error where error.code == .collidingKeys {
///     print(error)   // attributes "userID" and "userId" both map to JSON key "user_id" (snakeCase)
/// }
/// ```
public struct KeyConventionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem the error reports.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Value: Sendable, Hashable {
            case collidingKeys
        }

        let value: Value

        /// Two attributes have the same JSON key under the convention.
        public static let collidingKeys = Code(value: .collidingKeys)

        /// The code's name, such as `collidingKeys`.
        public var description: String {
            switch value {
            case .collidingKeys: "collidingKeys"
            }
        }
    }

    /// What kind of problem this is.
    public let code: Code

    /// A readable explanation naming the attributes and the key.
    public let message: String

    /// The attributes involved.
    public let attributes: [String]

    /// The JSON key involved.
    public let jsonKey: String

    /// Creates an error; the message should name what was wrong and where.
    ///
    /// ```swift
    /// KeyConventionError(code: .collidingKeys, message: "…", attributes: ["a", "b"], jsonKey: "a")
    /// ```
    ///
    /// - Parameters:
    ///   - code: The kind of problem.
    ///   - message: The readable explanation.
    ///   - attributes: The attributes involved.
    ///   - jsonKey: The JSON key involved.
    public init(code: Code, message: String, attributes: [String], jsonKey: String) {
        self.code = code
        self.message = message
        self.attributes = attributes
        self.jsonKey = jsonKey
    }

    /// The readable message.
    public var description: String { message }
}
