/// A row's place in a live result: section and row, as a list view numbers them.
///
/// Section numbers include the query's section offset.
///
/// ```swift
/// let path = ResultIndexPath(section: 1, row: 0)
/// snapshot.row(at: path)?.primaryKey
/// ```
public struct ResultIndexPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The section index (offset applied).
    public var section: Int
    /// The row index inside the section.
    public var row: Int

    /// Creates an index path.
    ///
    /// ```swift
    /// let path = ResultIndexPath(section: 0, row: 3)
    /// ```
    ///
    /// - Parameters:
    ///   - section: The section index, offset included.
    ///   - row: The row index inside the section.
    public init(section: Int, row: Int) {
        self.section = section
        self.row = row
    }

    public static func < (lhs: ResultIndexPath, rhs: ResultIndexPath) -> Bool {
        (lhs.section, lhs.row) < (rhs.section, rhs.row)
    }

    public var description: String { "[\(section), \(row)]" }
}
