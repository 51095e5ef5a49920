import Foundation

/// Wakes a sync loop before its timer: a push event or ``ReplicaClient/poke(_:)``. A poke that
/// comes while the loop is syncing is kept, so the loop syncs once more right after.
/// `@unchecked Sendable`: its members are read and written under `lock` only.
final class Waker: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = false
    private var waiter: CheckedContinuation<Void, Never>?

    /// Wakes the loop now, or when it next waits.
    func poke() {
        let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard let waiter = self.waiter else {
                pending = true
                return nil
            }
            self.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Waits `delay`, or less when poked; returns at once when a poke is pending or the task is cancelled.
    /// - Returns: Whether a poke ended the wait.
    @discardableResult
    func wait(upTo delay: Duration) async -> Bool {
        if lock.withLock({ () -> Bool in defer { pending = false }; return pending }) { return true }
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
                let resumeNow = lock.withLock { () -> Bool in
                    if pending {
                        pending = false
                        return true
                    }
                    if Task.isCancelled { return true }
                    waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            return !Task.isCancelled
        } onCancel: {
            let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                defer { self.waiter = nil }
                return self.waiter
            }
            waiter?.resume()
        }
    }
}
