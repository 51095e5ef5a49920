/// One writer at a time per object: an update or delete holds its object from the `If-Match` check to
/// the store's answer, so that two writes naming the same `ETag` cannot both pass it.
final class MockObjectLocks: Sendable {
    private struct State: Sendable {
        /// The objects held, each with the writers waiting for it, first come first served.
        var held: [String: [CheckedContinuation<Void, Never>]] = [:]
    }

    private let state = Locked(State())

    /// Runs `body` holding the object named `name`, after the writers that came before it.
    func withObject<T>(_ name: String, _ body: () async throws -> T) async throws -> T {
        await acquire(name)
        do {
            let result = try await body()
            release(name)
            return result
        } catch {
            release(name)
            throw error
        }
    }

    private func acquire(_ name: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let free: Bool = state.withLock { state in
                if state.held[name] == nil {
                    state.held[name] = []
                    return true
                }
                state.held[name, default: []].append(continuation)
                return false
            }
            if free { continuation.resume() }
        }
    }

    private func release(_ name: String) {
        let next: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard var waiting = state.held[name], !waiting.isEmpty else {
                state.held[name] = nil
                return nil
            }
            let first = waiting.removeFirst()
            state.held[name] = waiting
            return first
        }
        next?.resume()
    }
}
