/// The outcome of one client call: the HTTP exchange and what it synced.
public struct CallResult: Sendable {
    /// The status of the first page that did not answer 304 (200, 201, 204 …); 304 when every page did.
    public var status: Int
    /// The response headers of that page.
    public var headers: HeaderFields
    /// What the response(s) changed in the store; for DATA routes the JSON is in `sync.data`.
    public var sync: SyncResult
    /// `true` when every page answered 304: nothing changed, no stale row was deleted.
    public var notModified: Bool
    /// How many pages were requested.
    public var pages: Int
    /// How many of them answered 304 Not Modified (their recorded keys still counted as seen).
    public var unchangedPages: Int
    /// `true` when the call stopped at ``ClientConfiguration/maxPages`` before the last page:
    /// the fetched pages were stored and no stale row was deleted.
    public var isTruncated: Bool
    /// The route the call went through.
    public var route: String

    /// What changed, entity by entity.
    public var changes: ChangeSet { sync.changes }
    /// For DATA routes, the parsed JSON.
    public var data: JSONValue? { sync.data }
}

/// RSAPI's delegate callbacks, delivered on the queue given with the call.
public protocol ReplicaClientDelegate: AnyObject, Sendable {
    /// The call succeeded and its response was synced.
    func client(_ client: ReplicaClient, didReturn result: CallResult, forRoute route: String)
    /// The call failed; the store is unchanged.
    func client(_ client: ReplicaClient, didFail error: any Error, forRoute route: String)
}
