import Foundation
import ReplicaCore

/// Every write a mock server makes, in order: each resource's change sequence, behind its
/// collections' `X-Cursor` header, their `?since=CURSOR` answers and the `/events` stream.
///
/// A cursor is `EPOCH.SEQUENCE`: the epoch names this server process, so a cursor from another
/// run is refused rather than misread. The feed keeps the last ``window`` changes of each
/// resource; a cursor older than that (or from another epoch) is expired, and a client must sync
/// in full. A bulk load (``MockServer/load(_:into:)``) expires every cursor of its resource.
///
/// ```swift
/// let cursor = server.changes.cursor(for: "people")           // "k3f9a2.0"
/// // … POST /people, PATCH /people/7, DELETE /people/9 …
/// let since = try server.changes.changes(of: "people", since: cursor)
/// since.changes.map(\.key)                                     // [new id, 7, 9]
/// ```
public final class MockChangeFeed: Sendable {
    /// One write: the object's key, and for a deletion the object as it was (for scoping tombstones).
    public struct Change: Sendable {
        /// The position of the change in the server's sequence.
        public var sequence: UInt64
        /// The resource written.
        public var resource: String
        /// The object's key (an array of its parts for a composite key).
        public var key: JSONValue
        /// The deleted object's stored values; `nil` for a create or update.
        public var deletedObject: JSONObject?
        /// The paths whose answers the change alters: the collection, the object's own path,
        /// and its parents' nested collections (`/cars`, `/cars/10`, `/people/1/cars`).
        public var paths: [String] = []
        /// `key` serialized: the feed's index of the latest change per object (computed once, at record time).
        var keyName: String = ""
    }

    /// What changed in a resource since a cursor: each key once, its latest change, in order.
    public struct Changes: Sendable {
        public var changes: [Change]
        /// The cursor after these changes.
        public var cursor: String
    }

    /// A cursor the feed no longer knows (or never knew).
    public struct ExpiredCursor: Error, CustomStringConvertible {
        public var cursor: String
        public var reason: String
        public var description: String { "cursor '\(cursor)' \(reason)" }
    }

    private struct ResourceLog {
        /// The retained changes, oldest first (`head` is the index of the oldest still retained).
        var entries: [Change] = []
        var head = 0
        /// Cursors before this sequence are expired.
        var floor: UInt64 = 0
        /// The latest sequence of each retained key (its serialized form).
        var latest: [String: UInt64] = [:]

        var retained: ArraySlice<Change> { entries[head...] }

        /// Appends `change` and drops what falls out of the window.
        mutating func append(_ change: Change, window: Int) {
            entries.append(change)
            latest[change.keyName] = change.sequence
            trim(to: window)
        }

        mutating func trim(to window: Int) {
            while entries.count - head > window {
                let dropped = entries[head]
                head += 1
                floor = dropped.sequence
                if latest[dropped.keyName] == dropped.sequence { latest[dropped.keyName] = nil }
            }
            // Compact once the dropped prefix is as large as what is kept.
            if head > 1024 && head * 2 > entries.count {
                entries.removeFirst(head)
                head = 0
            }
        }
    }

    private struct State {
        var sequence: UInt64 = 0
        var logs: [String: ResourceLog] = [:]
        var subscribers: [UInt64: AsyncStream<Change>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        /// Set while the server is stopped: new subscribers get a finished stream, so a client
        /// reconnecting during `stop()` cannot hold the graceful shutdown open forever.
        var closed = false
    }

    /// This server process's epoch: the first part of every cursor.
    public let epoch: String
    /// How many changes of each resource are kept for `?since=` answers.
    public let window: Int
    private let state = Locked(State())

    /// Creates an empty feed.
    ///
    /// ```swift
    /// let feed = MockChangeFeed(window: 10_000)
    /// ```
    ///
    /// - Parameters:
    ///   - window: How many changes of each resource are retained (at least 1).
    ///   - epoch: The cursors' first part; random by default.
    public init(window: Int = 100_000, epoch: String? = nil) {
        self.window = max(1, window)
        self.epoch = epoch ?? String(UInt32.random(in: 0x1000_0000 ... UInt32.max), radix: 36)
    }

    /// The current sequence number (0 before any write).
    public var sequence: UInt64 { state.withLock { $0.sequence } }

    /// The cursor of `resource` as of now: a `?since=` with it answers the changes made after.
    public func cursor(for resource: String) -> String {
        "\(epoch).\(state.withLock { $0.sequence })"
    }

    /// Records a write of `resource` (after the store has it).
    ///
    /// - Parameters:
    ///   - resource: The resource written.
    ///   - key: The object's key.
    ///   - deletedObject: For a deletion, the object as it was.
    ///   - paths: The paths whose answers change (for the `/events` stream).
    public func record(_ resource: String, key: JSONValue, deletedObject: JSONObject? = nil, paths: [String] = []) {
        let (change, subscribers) = state.withLock { state -> (Change, [AsyncStream<Change>.Continuation]) in
            state.sequence += 1
            let change = Change(sequence: state.sequence, resource: resource, key: key, deletedObject: deletedObject, paths: paths,
                                keyName: key.serialized())
            // In place: a copy of the log taken out of the dictionary and stored back would copy
            // its entries and its index of every object on each write.
            state.logs[resource, default: ResourceLog()].append(change, window: window)
            return (change, Array(state.subscribers.values))
        }
        for subscriber in subscribers { subscriber.yield(change) }
    }

    /// Expires every cursor of `resource` given before now (a bulk load the feed does not list).
    public func reset(_ resource: String) {
        state.withLock { state in
            state.sequence += 1
            state.logs[resource] = ResourceLog(entries: [], head: 0, floor: state.sequence, latest: [:])
        }
    }

    /// What changed in `resource` after `cursor`: each key once, at its latest change, in sequence order.
    ///
    /// - Throws: ``ExpiredCursor`` for a cursor of another epoch, a malformed one, one ahead of
    ///   the feed, or one older than the retained window.
    public func changes(of resource: String, since cursor: String) throws(ExpiredCursor) -> Changes {
        let parts = cursor.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, let position = UInt64(parts[1]) else {
            throw ExpiredCursor(cursor: cursor, reason: "is not a cursor of this server (EPOCH.SEQUENCE)")
        }
        guard parts[0] == epoch else {
            throw ExpiredCursor(cursor: cursor, reason: "is from another run of the server; sync in full")
        }
        let answer = state.withLock { state -> Result<Changes, ExpiredCursor> in
            guard position <= state.sequence else {
                return .failure(ExpiredCursor(cursor: cursor, reason: "is ahead of the server's sequence (\(state.sequence))"))
            }
            let log = state.logs[resource] ?? ResourceLog()
            guard position >= log.floor else {
                return .failure(ExpiredCursor(cursor: cursor, reason: "is older than the \(window) changes the server keeps; sync in full"))
            }
            let retained = log.retained
            // The first retained change after `position`: entries are in sequence order.
            var low = retained.startIndex, high = retained.endIndex
            while low < high {
                let middle = (low + high) / 2
                if retained[middle].sequence <= position { low = middle + 1 } else { high = middle }
            }
            let changes = retained[low...].filter { log.latest[$0.keyName] == $0.sequence }
            return .success(Changes(changes: changes, cursor: "\(epoch).\(state.sequence)"))
        }
        return try answer.get()
    }

    /// The retained changes of every resource after sequence `position`, in order (an event
    /// stream's replay after `Last-Event-ID`); `nil` when some were dropped already.
    public func changes(after position: UInt64) -> [Change]? {
        state.withLock { state in
            guard position <= state.sequence else { return nil }
            var all: [Change] = []
            for log in state.logs.values {
                if position < log.floor { return nil }
                all += log.retained.filter { $0.sequence > position }
            }
            return all.sorted { $0.sequence < $1.sequence }
        }
    }

    /// A stream of every change from now on, until the stream's consumer stops or the server
    /// stops (on a stopped server the stream is already finished).
    ///
    /// ```swift
    /// for await change in server.changes.subscribe() { print(change.resource, change.key) }
    /// ```
    public func subscribe() -> AsyncStream<Change> {
        let (stream, continuation) = AsyncStream.makeStream(of: Change.self, bufferingPolicy: .bufferingNewest(window))
        let id: UInt64? = state.withLock { state in
            guard !state.closed else { return nil }
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// How many streams follow the feed (`/events` clients, ``subscribe()`` callers).
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Ends every subscriber's stream and finishes later ones at once (the server stops).
    func close() {
        let subscribers = state.withLock { state in
            state.closed = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// Takes subscribers again (the server starts).
    func open() {
        state.withLock { $0.closed = false }
    }
}
