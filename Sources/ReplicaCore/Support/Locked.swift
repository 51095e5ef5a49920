import Foundation

/// A value guarded by a lock: Replica's one lock box, as SwiftNIO's `NIOLockedValueBox` and
/// GRDB's `ReadWriteLock` are theirs.
///
/// ```swift
/// let hits = Locked(0)
/// hits.withLock { $0 += 1 }
/// print(hits.value)   // 1
/// ```
package final class Locked<Value> {
    private let lock = NSLock()
    private var stored: Value

    package init(_ value: Value) {
        self.stored = value
    }

    /// Runs `body` with the value while holding the lock; what it returns is returned.
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&stored)
    }

    /// The value now (a copy, read under the lock).
    package var value: Value {
        withLock { $0 }
    }
}

/// `@unchecked Sendable`: the value is only read or written while `lock` is held, and is itself
/// Sendable, so what `withLock` hands out may cross threads.
extension Locked: @unchecked Sendable where Value: Sendable {}

/// A value guarded by a lock that threads can also wait on: ``Locked`` with a condition variable,
/// for the one place that blocks a thread until another changes the value (``BridgeQueue``: a
/// parsing thread waiting for the next chunk, or for room to push one).
///
/// `Locked` cannot offer this: waiting needs the lock to be a condition's, released while the
/// thread sleeps and taken again before it wakes, which `NSLock` is not. Everything else reads as
/// with `Locked`: state changes only inside `withLock`, and every such change wakes the waiters,
/// which check again whether what they wait for has come.
///
/// ```swift
/// let queue = ConditionLocked([Int]())
/// Thread { queue.withLock { $0.append(1) } }.start()
/// let first = queue.withLock(waitingUntil: { !$0.isEmpty }) { $0.removeFirst() }   // 1
/// ```
package final class ConditionLocked<Value> {
    private let condition = NSCondition()
    private var stored: Value

    package init(_ value: Value) {
        self.stored = value
    }

    /// Runs `body` with the value while holding the lock, then wakes every waiting thread (what
    /// `body` changed may be what one waits for); what it returns is returned.
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&stored)
    }

    /// Blocks the calling thread until `ready` holds for the value, or `deadline` (when given)
    /// passes, then runs `body` with the value while still holding the lock (so `body` sees the
    /// value `ready` saw, and checks it again when the wait may have timed out).
    ///
    /// - Parameters:
    ///   - ready: What the thread waits for.
    ///   - deadline: When to stop waiting; `nil` waits as long as it takes.
    ///   - body: Runs under the lock once waiting is over; what it returns is returned.
    package func withLock<T>(waitingUntil ready: (Value) -> Bool, deadline: Date? = nil,
                             _ body: (inout Value) throws -> T) rethrows -> T {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        while !ready(stored) {
            if let deadline {
                if !condition.wait(until: deadline) { break }
            } else {
                condition.wait()
            }
        }
        return try body(&stored)
    }
}

/// `@unchecked Sendable`: the value is only read or written while `condition` is locked, and is
/// itself Sendable.
extension ConditionLocked: @unchecked Sendable where Value: Sendable {}

/// Hands a value that is not `Sendable` (a chunk source, a session's staged rows, an encoder) to
/// the one thread or task that uses it after the hand-over.
///
/// ```swift
/// let source = UncheckedBox(file.next)
/// Thread { while let chunk = try? source.value() { parse(chunk) } }.start()
/// ```
///
/// `@unchecked Sendable`: every use is a hand-over, after which one side at a time touches the
/// value; each place that makes one says which side that is.
package final class UncheckedBox<Value>: @unchecked Sendable {
    package var value: Value

    package init(_ value: Value) {
        self.value = value
    }
}

/// A latch: a flag set once and read from any thread: a sync's cancellation, a live result set's closing.
///
/// ```swift
/// let cancelled = Latch()
/// if cancelled.set() { print("first to cancel") }
/// print(cancelled.isSet)   // true
/// ```
package final class Latch: Sendable {
    private let state = Locked(false)

    package init() {}

    /// Whether the flag is set.
    package var isSet: Bool { state.value }

    /// Sets the flag; `true` when it was not set before.
    @discardableResult
    package func set() -> Bool {
        state.withLock { wasSet in
            defer { wasSet = true }
            return !wasSet
        }
    }
}
