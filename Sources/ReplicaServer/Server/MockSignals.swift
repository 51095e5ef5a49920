import ReplicaCore

/// A value that arrives once (the bound port, or the error that prevented binding), awaited by one task.
final class MockOneShot<Value: Sendable>: Sendable {
    private enum State {
        case waiting([CheckedContinuation<Value, any Error>])
        case done(Result<Value, any Error>)
    }

    private let state = Locked(State.waiting([]))

    /// Delivers the result; later calls are ignored.
    func resolve(_ result: Result<Value, any Error>) {
        let waiters: [CheckedContinuation<Value, any Error>] = state.withLock { state in
            guard case .waiting(let waiters) = state else { return [] }
            state = .done(result)
            return waiters
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    /// Waits for the result.
    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<Value, any Error>? = state.withLock { state in
                switch state {
                case .waiting(var waiters):
                    waiters.append(continuation)
                    state = .waiting(waiters)
                    return nil
                case .done(let result):
                    return result
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}

/// Holds stalled requests until the server stops, `releaseWaiting()` lets them go, or their limit passes.
final class MockStallGate: Sendable {
    private let waiters = Locked<(open: Bool, list: [Int: CheckedContinuation<Void, Never>], next: Int)>((false, [:], 0))

    /// Waits until `open()` or `limit`, whichever comes first.
    func wait(limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: limit) }
            group.addTask { await self.waitOpen() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitOpen() async {
        let id = waiters.withLock { state -> Int in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = waiters.withLock { state -> Bool in
                    if state.open || Task.isCancelled { return true }
                    state.list[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = waiters.withLock { $0.list.removeValue(forKey: id) }
            continuation?.resume()
        }
    }

    /// Releases every stalled request; new ones pass at once until `close()`.
    func open() {
        let list = waiters.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.list = [:] }
            return Array(state.list.values)
        }
        for continuation in list { continuation.resume() }
    }

    /// Releases the requests stalled now; later ones stall as before.
    /// - Returns: how many were released.
    @discardableResult
    func releaseWaiting() -> Int {
        let list = waiters.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.list = [:] }
            return Array(state.list.values)
        }
        for continuation in list { continuation.resume() }
        return list.count
    }

    /// Makes stalls hold again (after a restart).
    func close() {
        waiters.withLock { $0.open = false }
    }
}
