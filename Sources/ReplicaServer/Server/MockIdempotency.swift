/// The responses a mock server keeps for requests carrying an `Idempotency-Key` header, as Stripe keeps
/// them: the first response a key's request produced (status, headers, body), answered again to a repeat
/// with the same method, path and body, for ``MockServerOptions/idempotencyRetention``; at most
/// ``MockServerOptions/idempotencyCapacity`` of them, the least recently used going first.
final class MockIdempotencyCache: Sendable {
    /// What a request's method, path and body were, to tell a repeat from a reuse of its key.
    struct Fingerprint: Sendable, Hashable {
        var method: String
        var path: String
        var body: String
    }

    /// What to do with a request carrying a key.
    enum Decision: Sendable {
        /// The key is new (or expired): run the action, then ``finish(_:with:)`` or ``abandon(_:)``.
        case proceed
        /// The first response to the key, to answer again.
        case replay(MockResponse)
        /// The key was first used with another method, path or body.
        case reused(Fingerprint)
        /// A request with the key is still being handled.
        case inFlight
    }

    private struct Entry: Sendable {
        var fingerprint: Fingerprint
        /// Nil while the first request is being handled.
        var response: MockResponse?
        var stored: ContinuousClock.Instant
        /// The entry's place in `order` (its last use).
        var use: UInt64
    }

    private struct State: Sendable {
        var entries: [String: Entry] = [:]
        /// Kept keys by last use, oldest first; an item whose `use` is no longer its entry's is stale.
        var order: [(key: String, use: UInt64)] = []
        var head = 0
        var uses: UInt64 = 0
        var kept = 0
    }

    private let state = Locked(State())
    let retention: Duration
    let capacity: Int

    init(retention: Duration, capacity: Int) {
        self.retention = retention
        self.capacity = max(1, capacity)
    }

    /// How many responses are kept (not counting requests in flight).
    var count: Int { state.withLock { $0.kept } }

    /// How many uses the eviction order holds, stale ones included: it stays near ``count``.
    var orderLength: Int { state.withLock { $0.order.count - $0.head } }

    /// Claims `key` for a request, or says why not.
    func begin(_ key: String, _ fingerprint: Fingerprint) -> Decision {
        let now = ContinuousClock.now
        return state.withLock { state in
            if let entry = state.entries[key] {
                if entry.response != nil, entry.stored.duration(to: now) >= retention {
                    state.entries[key] = nil
                    state.kept -= 1
                } else if entry.fingerprint != fingerprint {
                    return .reused(entry.fingerprint)
                } else if let response = entry.response {
                    state.uses += 1
                    state.entries[key]?.use = state.uses
                    state.order.append((key: key, use: state.uses))
                    Self.compact(&state)
                    return .replay(response)
                } else {
                    return .inFlight
                }
            }
            state.entries[key] = Entry(fingerprint: fingerprint, response: nil, stored: now, use: 0)
            return .proceed
        }
    }

    /// Keeps the response to a claimed key, evicting expired and least recently used responses past the capacity.
    func finish(_ key: String, with response: MockResponse) {
        let now = ContinuousClock.now
        state.withLock { state in
            guard state.entries[key]?.response == nil, state.entries[key] != nil else { return }
            state.uses += 1
            state.entries[key]?.response = response
            state.entries[key]?.stored = now
            state.entries[key]?.use = state.uses
            state.order.append((key: key, use: state.uses))
            state.kept += 1
            // Oldest first: expired ones, then any beyond the capacity.
            while state.head < state.order.count {
                let item = state.order[state.head]
                guard let entry = state.entries[item.key], entry.use == item.use, entry.response != nil else {
                    state.head += 1
                    continue
                }
                guard state.kept > capacity || entry.stored.duration(to: now) >= retention else { break }
                state.entries[item.key] = nil
                state.kept -= 1
                state.head += 1
            }
            Self.compact(&state)
        }
    }

    /// Releases a claimed key without keeping a response: the next request with it runs the action.
    func abandon(_ key: String) {
        state.withLock { state in
            if state.entries[key]?.response == nil { state.entries[key] = nil }
        }
    }

    /// Drops the consumed front of `order` once it is most of the array, and its stale items once they
    /// outnumber the live ones (replays append without removing), so that `order` stays near `kept` long.
    private static func compact(_ state: inout State) {
        let entries = state.entries
        if state.order.count - state.head > 2 * state.kept + 64 {
            state.order = state.order[state.head...].filter { entries[$0.key]?.use == $0.use }
            state.head = 0
        } else if state.head > 64 && state.head * 2 > state.order.count {
            state.order.removeFirst(state.head)
            state.head = 0
        }
    }
}
