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
