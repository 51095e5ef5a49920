import Foundation

/// A query on one entity: where-clause, arguments, order, limit.
///
/// The where-clause is SQL over the entity's attribute names, with `?` placeholders bound to
/// `arguments`; the order always ends with the primary key, so it is total.
///
/// ```swift
/// let query = RowQuery("Post", where: "userID = ? AND published", arguments: [.integer(3)],
///                      sort: [.descending("createdAt")], limit: 20)
/// let posts = try store.rows(query)
/// ```
public struct RowQuery: Sendable, Hashable {
    public var entity: String
    public var predicate: String?
    public var arguments: [AttributeValue]
    public var sort: [SortKey]
    public var limit: Int?
    public var offset: Int?

    public init(_ entity: String, where predicate: String? = nil, arguments: [AttributeValue] = [],
                sort: [SortKey] = [], limit: Int? = nil, offset: Int? = nil) {
        self.entity = entity
        self.predicate = predicate
        self.arguments = arguments
        self.sort = sort
        self.limit = limit
        self.offset = offset
    }
}
