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
package enum LiveLoad: Sendable {
    case rows([EntityRow])
    case entries(SnapshotEntries)
}

/// `keys` in chunks of at most 500, each with its `?, ?, …` placeholders: the keys bound per
/// `IN (...)` statement by row sources.
package func liveKeyChunks(_ keys: [AttributeValue]) -> [(keys: [AttributeValue], marks: String)] {
    stride(from: 0, to: keys.count, by: 500).map { start in
        let chunk = Array(keys[start ..< min(keys.count, start + 500)])
        return (chunk, Array(repeating: "?", count: chunk.count).joined(separator: ", "))
    }
}

/// `keys` of `entity` in chunks of at most 500, each as a condition and its arguments: `"id" IN
/// (?, ?, …)` for a single key, `("owner", "repo", "ref") IN (VALUES (?, ?, ?), …)` for a
/// composite key's tuples (row values, which SQLite and PostgreSQL both read).
package func liveKeyChunks(_ keys: [AttributeValue], of entity: Entity) -> [(condition: String, arguments: [AttributeValue])] {
    guard entity.hasCompositeKey else {
        let key = entity.primaryKey.quotedIdentifier
        return liveKeyChunks(keys).map { ("\(key) IN (\($0.marks))", $0.keys) }
    }
    let width = entity.primaryKeyNames.count
    let columns = "(" + entity.primaryKeyNames.map(\.quotedIdentifier).joined(separator: ", ") + ")"
    let tuple = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
    // A key of another shape names no row.
    let tuples = keys.compactMap { $0.compositeKeyParts }.filter { $0.count == width }
    return stride(from: 0, to: tuples.count, by: 500).map { start in
        let chunk = tuples[start ..< min(tuples.count, start + 500)]
        return ("\(columns) IN (VALUES " + Array(repeating: tuple, count: chunk.count).joined(separator: ", ") + ")",
                chunk.flatMap { $0 })
    }
}
