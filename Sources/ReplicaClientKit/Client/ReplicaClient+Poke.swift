import Foundation
import ReplicaCore

/// The sync loops of a client that a poke can wake (``ReplicaService``'s, by synced path).
final class PokeBoard: Sendable {
    private struct State: Sendable {
        var loops: [UInt64: (path: String, waker: Waker)] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    func register(_ path: String, _ waker: Waker) -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            state.loops[state.nextID] = (path, waker)
            return state.nextID
        }
    }

    func unregister(_ id: UInt64) {
        state.withLock { _ = $0.loops.removeValue(forKey: id) }
    }

    /// Wakes the loops whose path `changed` affects; returns the paths woken.
    func poke(_ changed: String) -> [String] {
        let woken = state.withLock { $0.loops.values.filter { Self.affects(changed, $0.path) } }
        for loop in woken { loop.waker.poke() }
        return woken.map(\.path).sorted()
    }

    /// Whether a change at `changed` (a path, with or without a query) can change what `synced`
    /// lists: the same path, or a member of it (`/people/7` for `/people`). `/` and `*` affect
    /// every path. A nested collection is its own path: `/people/1/cars` changes when a car of
    /// person 1 does, and a server names it (the mock server's events do).
    static func affects(_ changed: String, _ synced: String) -> Bool {
        func clean(_ path: String) -> String {
            var path = String(path.split(separator: "?", maxSplits: 1).first ?? "")
            while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
            return path
        }
        let changed = clean(changed), synced = clean(synced)
        if changed == "/" || changed == "*" || changed.isEmpty { return true }
        guard changed != synced else { return true }
        guard changed.hasPrefix(synced + "/") else { return false }
        return !changed.dropFirst(synced.count + 1).contains("/")
    }
}

extension ReplicaClient {
    /// Starts a sync, now, of every path a running ``ReplicaService`` of this client keeps synced
    /// and `path` affects: the same path, or the collection it is a member of (`/people/7` pokes
    /// `/people`). A service's own webhook handler calls this when the API
    /// says something changed; the sync is incremental when the route declares it. A poke that
    /// comes during a sync starts one more right after it.
    ///
    /// ```swift
    /// router.post("/hooks/people") { _, _ in
    ///     client.poke("/people")
    ///     return HTTPResponse.Status.accepted
    /// }
    /// ```
    ///
    /// - Parameter path: What changed upstream (`/people`, `/people/7`); `/` for everything.
    /// - Returns: The synced paths woken, sorted (none when no service keeps any of them synced).
    @discardableResult
    public func poke(_ path: String) -> [String] {
        pokes.poke(path)
    }
}
