import Foundation

/// Encoded COPY text on its way from the thread that encodes parsed batches to the task that
/// sends it: bounded, so a slow server slows the parser instead of filling memory.
///
/// `@unchecked Sendable`: every stored property is read and written under `condition`.
final class CopyPipe: @unchecked Sendable {
    struct Chunk: Sendable {
        var entity: Int
        var bytes: [UInt8]
    }

    private let condition = NSCondition()
    private var items: [Chunk] = []
    private var closed = false
    private var failure: (any Error)?
    private var waiter: CheckedContinuation<Chunk?, any Error>?
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Appends `chunk`, blocking the calling thread while the pipe is full (`bounded`).
    /// Returns `false` once the pipe was closed by the consumer.
    @discardableResult
    func push(_ chunk: Chunk, bounded: Bool = true) -> Bool {
        condition.lock()
        while bounded && items.count >= capacity && !closed { condition.wait() }
        guard !closed else {
            condition.unlock()
            return false
        }
        if let waiter {
            self.waiter = nil
            condition.unlock()
            waiter.resume(returning: chunk)
            return true
        }
        items.append(chunk)
        condition.unlock()
        return true
    }

    /// Ends the input: `next()` returns `nil` once drained, or throws `error`.
    func finish(throwing error: (any Error)? = nil) {
        condition.lock()
        closed = true
        if failure == nil { failure = error }
        let waiter = items.isEmpty ? self.waiter : nil
        if waiter != nil { self.waiter = nil }
        let failure = self.failure
        condition.broadcast()
        condition.unlock()
        if let waiter {
            if let failure { waiter.resume(throwing: failure) } else { waiter.resume(returning: nil) }
        }
    }

    /// The next chunk, suspending while there is none; `nil` at the end.
    func next() async throws -> Chunk? {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            if !items.isEmpty {
                let chunk = items.removeFirst()
                condition.broadcast()
                condition.unlock()
                continuation.resume(returning: chunk)
            } else if closed {
                let failure = self.failure
                condition.unlock()
                if let failure { continuation.resume(throwing: failure) } else { continuation.resume(returning: nil) }
            } else {
                waiter = continuation
                condition.unlock()
            }
        }
    }
}
