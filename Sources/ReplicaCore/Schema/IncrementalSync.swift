import Foundation

/// How a route syncs incrementally: a cursor from each response is sent back as a query
/// parameter, and the answer holds only what changed since, with tombstones for what was deleted.
///
/// In a schema file it is the route's `"incremental"` object:
///
/// ```json
/// {"path": "/people", "target": "Person", "stale": "delete",
///  "incremental": {"parameter": "since", "cursor": "header:X-Cursor",
///                  "items": "/items", "deleted": "/deleted", "expiredStatus": [410]}}
/// ```
///
/// The first sync of a path (no cursor yet) is a full sync: the route's usual response, stale
/// rows deleted as the route says, and the cursor recorded. Later syncs send
/// `?since=<cursor>`; their objects are upserted (at `items`, or where the route's responses
/// usually hold them), the keys at `deleted` are deleted inside the route's scope, and the new
/// cursor is recorded, all in one transaction. An answer with an ``expiredStatuses`` status (the
/// server no longer knows the cursor) drops the cursor and runs a full sync in the same call.
///
/// ```swift
/// Route(.get, "/people", target: .entity("Person"), stale: .delete,
///       incremental: IncrementalSync(parameter: "since", cursor: .header("X-Cursor"),
///                                    items: JSONPointer("/items"), deleted: JSONPointer("/deleted")))
/// ```
public struct IncrementalSync: Sendable, Hashable {
    /// Where a response carries the cursor for the next sync: a header (`header:X-Cursor` in a
    /// schema file) or a JSON pointer into the body (`/meta/cursor`).
    ///
    /// ```swift
    /// IncrementalSync.Cursor("header:X-Cursor")   // .header("X-Cursor")
    /// ```
    public typealias Cursor = ResponseValue

    /// The query parameter that carries the cursor (`since`).
    public var parameter: String
    /// Where each response carries the next cursor.
    public var cursor: Cursor
    /// Where an incremental answer holds the changed objects (`/items`); `nil` when it holds them
    /// where the route's full responses do (its envelope or the entity's collection key).
    public var items: JSONPointer?
    /// Where an answer lists the deleted objects: keys (`[7, 9]`), or objects holding a key
    /// (`[{"id": 7}]`, a composite key's parts); `nil` when the API sends no tombstones.
    public var deleted: JSONPointer?
    /// The statuses that mean "cursor expired, sync in full" (410 Gone by default).
    public var expiredStatuses: [Int]

    /// Creates an incremental sync declaration.
    ///
    /// ```swift
    /// IncrementalSync(parameter: "since", cursor: .pointer(JSONPointer("/cursor")!),
    ///                 items: JSONPointer("/items"), deleted: JSONPointer("/deleted"))
    /// ```
    ///
    /// - Parameters:
    ///   - parameter: The query parameter sent with the cursor.
    ///   - cursor: Where responses carry the cursor.
    ///   - items: Where an incremental answer holds the changed objects; `nil` for the route's usual place.
    ///   - deleted: Where an answer lists deleted keys; `nil` for none.
    ///   - expiredStatuses: Statuses answering an expired cursor (a full sync follows).
    public init(parameter: String = "since", cursor: Cursor, items: JSONPointer? = nil, deleted: JSONPointer? = nil,
                expiredStatuses: [Int] = [410]) {
        self.parameter = parameter
        self.cursor = cursor
        self.items = items
        self.deleted = deleted
        self.expiredStatuses = expiredStatuses
    }
}
