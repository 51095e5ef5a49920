import Foundation
import ReplicaCore

/// Wakes a sync loop before its timer: a push event or ``ReplicaClient/poke(_:)``. A poke that
/// comes while the loop is syncing is kept, so the loop syncs once more right after.
final class Waker: Sendable {
    private struct State: Sendable {
        /// A poke came while nobody waited: the next wait returns at once.
        var pending = false
        /// The wait under way, resumed by the next poke or by its cancellation.
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())

    /// Wakes the loop now, or when it next waits.
    func poke() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Waits `delay`, or less when poked; returns at once when a poke is pending or the task is cancelled.
    /// - Returns: Whether a poke ended the wait.
    @discardableResult
    func wait(upTo delay: Duration) async -> Bool {
        if state.withLock({ state -> Bool in defer { state.pending = false }; return state.pending }) { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await Task.sleep(for: delay)
                return false
            }
            group.addTask { await self.nextPoke() }
            let poked = await group.next() ?? false
            group.cancelAll()
            return poked
        }
    }

    /// Returns at the next poke (`true`), or when cancelled (`false`).
    private func nextPoke() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Under the lock: a cancellation either came before (the task is marked cancelled
                // before its handler runs, so this sees it) or finds the waiter stored here.
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    if Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            return !Task.isCancelled
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
