/// A live result set that cannot do what was asked: what and why.
///
/// Query errors (unknown entity or attribute, SQL that SQLite refuses) are ``StoreError``s.
///
/// ```swift
/// do {
///     _ = try diff.apply(to: staleSnapshot)
/// } catch let error as LiveResultError where error.code == .mismatchedDiff {
///     print(error)
/// }
/// ```
public struct LiveResultError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let rawValue: String
        public var description: String { rawValue }

        /// The query cannot be observed (a DATA or MANY route, a section key the entity lacks).
        public static let invalidQuery = Code(rawValue: "invalidQuery")
        /// The result set was closed.
        public static let closed = Code(rawValue: "closed")
        /// A diff was applied to a snapshot it was not computed from.
        public static let mismatchedDiff = Code(rawValue: "mismatchedDiff")
    }

    /// The kind of problem.
    public var code: Code
    /// What is wrong, in words.
    public var message: String

    /// Creates an error.
    ///
    /// ```swift
    /// throw LiveResultError(.closed, "the live result set was closed")
    /// ```
    ///
    /// - Parameters:
    ///   - code: The kind of problem.
    ///   - message: What is wrong, in words.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
