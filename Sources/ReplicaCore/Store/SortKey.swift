import Foundation

/// One level of ordering: an attribute, ascending or descending.
///
/// ```swift
/// let sort: [SortKey] = [.descending("createdAt"), .ascending("title")]
/// let parsed = try SortKey.parseList("name,-age")   // [.ascending("name"), .descending("age")]
/// ```
public struct SortKey: Sendable, Hashable, CustomStringConvertible {
    /// The attribute to order by.
    public var attribute: String
    /// `true` for ascending order.
    public var ascending: Bool

    public init(_ attribute: String, ascending: Bool = true) {
        self.attribute = attribute
        self.ascending = ascending
    }

    public static func ascending(_ attribute: String) -> SortKey { SortKey(attribute, ascending: true) }
    public static func descending(_ attribute: String) -> SortKey { SortKey(attribute, ascending: false) }

    /// `name` or `-name`.
    public var description: String { ascending ? attribute : "-" + attribute }

    /// Parses a comma-separated list where `-` marks descending order: `name,-age`.
    ///
    /// - Throws: ``StoreError/Code/unknownAttribute`` for an empty component.
    public static func parseList(_ text: String) throws -> [SortKey] {
        try text.split(separator: ",", omittingEmptySubsequences: false).map { part in
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            let descending = trimmed.hasPrefix("-")
            let name = descending || trimmed.hasPrefix("+") ? String(trimmed.dropFirst()) : trimmed
            guard !name.isEmpty else {
                throw StoreError(.unknownAttribute, "empty attribute name in sort '\(text)'")
            }
            return SortKey(name, ascending: !descending)
        }
    }
}
