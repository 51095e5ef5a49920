import Foundation

/// Where a live result set reads its rows: the SQLite ``Store``, or a store of another module
/// (the PostgreSQL replica). Reads are synchronous: they run on the live result set's queue, or
/// on the thread reading a large snapshot's rows.
package protocol LiveRowSource: Sendable {
    /// The entity named `name`, or a ``StoreError``.
    func requireEntity(_ name: String) throws -> Entity

    /// Runs a live query in one consistent read: every matching row (in order) when at most
    /// `request.residentLimit` rows match or the query's limit is at most that; else, in order,
    /// only the entries (key and sort values) of the matching rows.
    ///
    /// - Throws: ``StoreError`` for an unknown attribute or a where-clause the store refuses.
    func loadLive(_ request: LiveLoadRequest) throws -> LiveLoad

    /// The current rows among `keys` that match `predicate`, in any order.
    ///
    /// - Throws: ``StoreError`` when the read fails.
    func liveRows(of entity: Entity, keys: [AttributeValue], predicate: RowPredicate) throws -> [EntityRow]
}

/// What ``LiveRowSource/loadLive(_:)`` reads.
package struct LiveLoadRequest: Sendable {
    package let entity: Entity
    package let predicate: RowPredicate
    package let sort: [SortKey]
    package let limit: Int?
    /// The most rows loaded whole.
    package let residentLimit: Int
    /// The attribute positions an entry keeps: its sort attributes, in order (after the key).
    package let sortAttributes: [Int]
}

/// The result of a live query: its rows, or for a large one its entries.
package enum LiveLoad {
    case rows([EntityRow])
    case entries([SnapshotEntry])
}

/// `keys` in chunks of at most 500, each with its `?, ?, …` placeholders: the keys bound per
/// `IN (...)` statement by row sources.
package func liveKeyChunks(_ keys: [AttributeValue]) -> [(keys: [AttributeValue], marks: String)] {
    stride(from: 0, to: keys.count, by: 500).map { start in
        let chunk = Array(keys[start ..< min(keys.count, start + 500)])
        return (chunk, Array(repeating: "?", count: chunk.count).joined(separator: ", "))
    }
}
