import Foundation

/// The sync loops of a client that a poke can wake (``ReplicaService``'s, by synced path).
/// `@unchecked Sendable`: its members are read and written under `lock` only.
final class PokeBoard: @unchecked Sendable {
    private let lock = NSLock()
    private var loops: [UInt64: (path: String, waker: Waker)] = [:]
    private var nextID: UInt64 = 0

    func register(_ path: String, _ waker: Waker) -> UInt64 {
        lock.withLock {
            nextID += 1
            loops[nextID] = (path, waker)
            return nextID
        }
    }

    func unregister(_ id: UInt64) {
        lock.withLock { _ = loops.removeValue(forKey: id) }
    }

    /// Wakes the loops whose path `changed` affects; returns the paths woken.
    func poke(_ changed: String) -> [String] {
        let woken = lock.withLock { loops.values.filter { Self.affects(changed, $0.path) } }
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
