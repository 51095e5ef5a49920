/// The CRUD actions a resource allows; the others answer 405 with an `Allow` header.
///
/// ```swift
/// let readOnly: MockActions = [.index, .show]
/// ```
public struct MockActions: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    /// Creates a set of actions from its bits.
    ///
    /// ```swift
    /// let actions = MockActions(rawValue: 3) // [.index, .show]
    /// ```
    /// - Parameters:
    ///   - rawValue: the bit mask.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `GET /people` (and `GET /parents/:id/people` for a child).
    public static let index = MockActions(rawValue: 1 << 0)
    /// `GET /people/:id`.
    public static let show = MockActions(rawValue: 1 << 1)
    /// `POST /people` (and `POST /parents/:id/people` for a child).
    public static let create = MockActions(rawValue: 1 << 2)
    /// `PUT /people/:id` and `PATCH /people/:id`.
    public static let update = MockActions(rawValue: 1 << 3)
    /// `DELETE /people/:id`.
    public static let destroy = MockActions(rawValue: 1 << 4)
    /// Every action.
    public static let all: MockActions = [.index, .show, .create, .update, .destroy]
    /// `GET` only.
    public static let readOnly: MockActions = [.index, .show]
}
