import ReplicaCore

/// The outcome of one client call: the HTTP exchange and what it synced.
public struct CallResult: Sendable {
    /// The status of the first page that did not answer 304 (200, 201, 204 …); 304 when every page did.
    public var status: Int
    /// The response headers of that page.
    public var headers: HeaderFields
    /// What the response(s) changed in the store; for DATA routes the JSON is in `sync.data`.
    public var sync: SyncResult
    /// `true` when every page answered 304: nothing changed, no stale row was deleted; `sync.seenKeys`
    /// then holds the keys those pages held when they last answered 200.
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
    /// With ``ClientConfiguration/unfollowedPages`` `.warn`: the sign on the last page read that
    /// the collection goes on past it (`/has_more: true`); its pages were stored and no stale
    /// row was deleted (``isTruncated`` is `true`).
    public var unfollowedPages: MorePagesSignal?
    /// How the call synced: in full, incrementally (a since-cursor), or in full because the
    /// server no longer knew the cursor.
    public var mode: SyncMode = .full

    /// What changed, entity by entity.
    public var changes: ChangeSet { sync.changes }
    /// The parsed JSON of a DATA route or of an ad-hoc call (a path with no route); `nil` for
    /// routes that sync their response, and for an empty body.
    public var data: JSONValue? { sync.data }
}

/// How a call synced a route (``Route/incremental``).
public enum SyncMode: String, Sendable, Hashable {
    /// The whole collection: the first sync, or a route without an incremental declaration.
    case full
    /// Only what changed since the recorded cursor, with tombstones.
    case incremental
    /// In full, because the server answered the cursor with an expired status (410 Gone).
    case resync
}

/// RSAPI's delegate callbacks, delivered on the queue given with the call.
///
/// ```swift
/// final class Feed: ReplicaClientDelegate {
///     func client(_ client: ReplicaClient, didReturn result: CallResult, forRoute route: String) { print(result.changes) }
///     func client(_ client: ReplicaClient, didFail error: any Error, forRoute route: String) { print(error) }
///     func client(_ client: ReplicaClient, didReturnJSON json: JSONValue?, forRoute route: String) { print(json ?? "empty") }
/// }
/// client.call("/users/:userID/posts", delegate: feed, queue: .main)
/// ```
public protocol ReplicaClientDelegate: AnyObject, Sendable {
    /// The call succeeded and its response was synced.
    func client(_ client: ReplicaClient, didReturn result: CallResult, forRoute route: String)
    /// The call failed; the store is unchanged.
    func client(_ client: ReplicaClient, didFail error: any Error, forRoute route: String)
    /// The JSON a successful call received (RSAPI's `apiDidReturn`), before ``client(_:didReturn:forRoute:)``:
    /// once per page, for every kind of call (routes that sync, DATA routes, paths with no route);
    /// `nil` for an empty body or a 304, or a page larger than ``ClientConfiguration/maxDecodedBodyBytes``.
    /// Optional: the default does nothing.
    func client(_ client: ReplicaClient, didReturnJSON json: JSONValue?, forRoute route: String)
}

extension ReplicaClientDelegate {
    public func client(_ client: ReplicaClient, didReturnJSON json: JSONValue?, forRoute route: String) {}
}
