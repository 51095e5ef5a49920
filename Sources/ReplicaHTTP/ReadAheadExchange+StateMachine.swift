import NIOCore
import NIOHTTP1

extension ReadAheadExchange {
    /// An exchange's state as a value: the head, the chunks read and not yet taken, the body's
    /// end or failure, who waits for what, and the timers. Its mutating methods are the events of
    /// an exchange (the head arrived, a chunk, the consumer asks for the next one, a failure, a
    /// timer fired); each returns what the exchange must then do, which ``ReadAheadExchange``
    /// does after letting go of its lock: resume a continuation, complete a promise, cancel a
    /// timer or the producer. Nothing here does I/O or resumes anything, as AsyncHTTPClient's
    /// `Transaction.StateMachine`.
    ///
    /// ```swift
    /// var state = ReadAheadExchange.StateMachine(limit: 1 << 20, maxBytes: 1 << 30, idleTimeout: .seconds(60))
    /// _ = state.receive([1, 2, 3], now: .now(), on: loop)   // .buffered
    /// _ = state.next(waiting: nil, now: .now())             // .deliver([1, 2, 3], resumeReading: nil)
    /// ```
    struct StateMachine: Sendable {
        /// Where the response head is.
        enum Head: Sendable {
            /// Not arrived; the continuation, once ``ReadAheadExchange/start(_:on:timeout:)`` waits for it.
            case pending(CheckedContinuation<HTTPResponseHead, any Error>?)
            case arrived
        }

        /// Where the body is. Chunks read before a failure are still delivered before it.
        enum Body: Sendable {
            case streaming
            /// The body ended (chunks may still wait to be taken).
            case finished
            /// The exchange failed: the first failure is the one reported.
            case failed(any Error)
        }

        /// What produces the body: AsyncHTTPClient's task, or the task relaying its async body.
        enum Producer: Sendable {
            case unattached
            /// Running: this cancels it.
            case attached(@Sendable () -> Void)
            /// The caller gave up: a producer attached from now on is cancelled at once.
            case cancelled
        }

        /// What ``waitForHead(_:)`` asks for.
        enum StartAction {
            /// Send the request: the continuation waits for the head.
            case execute
            /// The exchange failed before it began: fail the continuation.
            case fail(CheckedContinuation<HTTPResponseHead, any Error>, any Error)
        }

        /// What ``headArrived(_:)`` asks for.
        enum HeadAction {
            case none
            /// Resume the waiting caller with the head.
            case resume(CheckedContinuation<HTTPResponseHead, any Error>)
        }

        /// What ``attach(_:)`` asks for.
        enum AttachAction {
            case none
            /// The caller gave up before the producer came: cancel it.
            case cancel(@Sendable () -> Void)
        }

        /// What ``next(waiting:now:)`` found.
        enum NextAction {
            /// The next chunk; and the reading to resume, when taking it made room.
            case deliver([UInt8], resumeReading: EventLoopPromise<Void>?)
            /// The body's end.
            case end
            /// The exchange's failure.
            case fail(any Error)
            /// Nothing yet: the continuation, when one was given, waits (the producer resumes it).
            case wait
        }

        /// What ``receive(_:now:on:)`` asks for.
        enum ReceiveAction {
            /// The exchange failed: drop the chunk, let the connection read on (to its end).
            case drop
            /// Hand the chunk to the waiting consumer; read on.
            case deliver(CheckedContinuation<[UInt8]?, any Error>)
            /// Buffered; read on when the future completes (at once while there is room).
            case buffered(EventLoopFuture<Void>)
            /// Past the maximum size: fail the exchange with the size error.
            case tooLarge(received: Int64, encoding: String?)
        }

        /// What ending the exchange (``fail(_:)``, ``finish()``) leaves to do.
        struct EndAction {
            /// Timers to cancel.
            var timers: [Scheduled<Void>] = []
            /// The producer to cancel.
            var cancelProducer: (@Sendable () -> Void)?
            /// The caller waiting for the head, to fail.
            var headWaiter: CheckedContinuation<HTTPResponseHead, any Error>?
            /// The consumer waiting for a chunk: it gets `failure`, or the end.
            var bodyWaiter: CheckedContinuation<[UInt8]?, any Error>?
            /// The reading held for room: failed with `failure`, or let go.
            var room: EventLoopPromise<Void>?
            /// What the waiters get; `nil` when the body had ended (the consumer gets the end).
            var failure: (any Error)?

            /// Nothing to do.
            static let none = EndAction()
        }

        /// What arming a timer asks for.
        enum ArmAction {
            /// The timer stays; the exchange is under way.
            case armed
            /// The exchange has ended: cancel the timer.
            case cancel(Scheduled<Void>)
        }

        /// What an idle check found.
        enum IdleAction {
            /// The exchange has ended: no more checks.
            case none
            /// Idle for the idle timeout: fail with the idle error, after `received` bytes.
            case fail(received: Int64)
            /// Check again at `due`.
            case check(at: NIODeadline)
        }

        /// The most bytes read and not yet taken before the connection stops reading.
        let limit: Int
        /// The body's maximum size.
        let maxBytes: Int64
        /// The longest the body may go without a byte while the connection reads.
        let idleTimeout: TimeAmount

        private(set) var head = Head.pending(nil)
        private(set) var body = Body.streaming
        private(set) var producer = Producer.unattached
        private var chunks = CircularBuffer<[UInt8]>()
        /// The bytes of `chunks`.
        private(set) var bufferedBytes = 0
        /// The consumer waiting for the next chunk.
        private var bodyWaiter: CheckedContinuation<[UInt8]?, any Error>?
        /// The event loop waiting for room before it reads on.
        private var room: EventLoopPromise<Void>?
        /// The body's bytes so far, and when the last came (or reading resumed).
        private(set) var received: Int64 = 0
        private(set) var lastProgress: NIODeadline
        /// The body's `Content-Encoding`, for the size error of a decompressed body.
        private(set) var encoding: String?
        private var deadlineTimer: Scheduled<Void>?
        private var idleTimer: Scheduled<Void>?

        init(limit: Int, maxBytes: Int64, idleTimeout: TimeAmount, now: NIODeadline = .now()) {
            self.limit = max(1, limit)
            self.maxBytes = maxBytes
            self.idleTimeout = idleTimeout
            self.lastProgress = now
        }

        /// Whether the body has ended or the exchange failed.
        var isDone: Bool {
            if case .streaming = body { return false }
            return true
        }

        /// Whether the connection waits for room before it reads on (back-pressure).
        var isHoldingReading: Bool { room != nil }

        // MARK: The head

        /// The caller waits for the head (`continuation`), unless the exchange already failed.
        mutating func waitForHead(_ continuation: CheckedContinuation<HTTPResponseHead, any Error>) -> StartAction {
            if case .failed(let failure) = body { return .fail(continuation, failure) }
            head = .pending(continuation)
            return .execute
        }

        /// The response head arrived.
        mutating func headArrived(_ responseHead: HTTPResponseHead) -> HeadAction {
            encoding = responseHead.headers.first(name: "Content-Encoding")
            guard case .pending(let waiter?) = head else {
                head = .arrived
                return .none
            }
            head = .arrived
            return .resume(waiter)
        }

        /// The deadline to the head passed: the exchange fails unless its head has arrived (the
        /// body may take longer).
        mutating func deadlineBeforeHead(_ error: any Error) -> EndAction {
            if case .arrived = head { return .none }
            return fail(error)
        }

        // MARK: The producer

        /// The producer began: `cancel` cancels it.
        mutating func attach(_ cancel: @escaping @Sendable () -> Void) -> AttachAction {
            if case .cancelled = producer { return .cancel(cancel) }
            producer = .attached(cancel)
            return .none
        }

        /// One chunk of the body: to the waiting consumer, else into the buffer, past `limit`
        /// bytes with a promise (made on `loop`) that the consumer completes once there is room.
        mutating func receive(_ chunk: [UInt8], now: NIODeadline, on loop: any EventLoop) -> ReceiveAction {
            if case .failed = body { return .drop }
            received += Int64(chunk.count)
            lastProgress = now
            if received > maxBytes { return .tooLarge(received: received, encoding: encoding) }
            if let waiter = bodyWaiter {
                bodyWaiter = nil
                return .deliver(waiter)
            }
            chunks.append(chunk)
            bufferedBytes += chunk.count
            guard bufferedBytes >= limit else { return .buffered(loop.makeSucceededVoidFuture()) }
            let promise = loop.makePromise(of: Void.self)
            room = promise
            return .buffered(promise.futureResult)
        }

        /// The body ended: the waiting consumer gets the end (unless the exchange failed), and
        /// the timers go.
        mutating func finish() -> EndAction {
            var action = EndAction()
            if case .streaming = body {
                body = .finished
                action.bodyWaiter = bodyWaiter
                bodyWaiter = nil
            }
            action.timers = takeTimers()
            return action
        }

        /// Ends the exchange with `error` (a timeout, a limit, cancellation), unless it had ended:
        /// whoever waits gets the exchange's failure, or the end of a body that had ended; the
        /// producer is cancelled, and the timers.
        mutating func fail(_ error: any Error) -> EndAction {
            if case .streaming = body { body = .failed(error) }
            var action = EndAction()
            if case .attached(let cancel) = producer { action.cancelProducer = cancel }
            producer = .cancelled
            if case .pending(let waiter?) = head {
                action.headWaiter = waiter
                head = .pending(nil)
            }
            action.bodyWaiter = bodyWaiter
            bodyWaiter = nil
            action.room = room
            room = nil
            if case .failed(let failure) = body { action.failure = failure }
            action.timers = takeTimers()
            return action
        }

        /// The body was dropped before its end: an exchange still under way fails (cancelled).
        mutating func abandon() -> EndAction {
            isDone ? .none : fail(CancellationError())
        }

        // MARK: The consumer

        /// Takes the first waiting chunk, or the body's end, or its failure; with nothing there,
        /// keeps `continuation` (when given) for the producer to resume. Lets the connection read
        /// on once there is room again.
        mutating func next(waiting continuation: CheckedContinuation<[UInt8]?, any Error>?, now: NIODeadline) -> NextAction {
            if let chunk = chunks.popFirst() {
                bufferedBytes -= chunk.count
                var reading: EventLoopPromise<Void>?
                if bufferedBytes < limit, let waiting = room {
                    reading = waiting
                    room = nil
                    lastProgress = now
                }
                return .deliver(chunk, resumeReading: reading)
            }
            switch body {
            case .failed(let failure): return .fail(failure)
            case .finished: return .end
            case .streaming:
                if let continuation { bodyWaiter = continuation }
                return .wait
            }
        }

        // MARK: The limits in time

        /// The deadline timer was scheduled, counting from now: it stays unless the exchange has ended.
        mutating func deadlineArmed(_ timer: Scheduled<Void>, now: NIODeadline) -> ArmAction {
            lastProgress = now
            guard !isDone else { return .cancel(timer) }
            deadlineTimer = timer
            return .armed
        }

        /// The next idle check was scheduled: it stays unless the exchange has ended.
        mutating func idleCheckScheduled(_ check: Scheduled<Void>) -> ArmAction {
            guard !isDone else { return .cancel(check) }
            idleTimer = check
            return .armed
        }

        /// An idle check at `now`: the exchange fails once the body has gone the idle timeout
        /// without a byte while the connection reads; while back-pressure holds the reading, the
        /// clock stands still.
        mutating func idleCheck(now: NIODeadline) -> IdleAction {
            guard !isDone else { return .none }
            if room != nil { lastProgress = now }
            let due = lastProgress + idleTimeout
            return due <= now ? .fail(received: received) : .check(at: due)
        }

        private mutating func takeTimers() -> [Scheduled<Void>] {
            defer { (deadlineTimer, idleTimer) = (nil, nil) }
            return [deadlineTimer, idleTimer].compactMap { $0 }
        }
    }
}
