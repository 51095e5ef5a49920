import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ReplicaClientKit
import ReplicaCore

/// One exchange through AsyncHTTPClient's delegate API, its body read ahead of the consumer and
/// held to its ``BodyLimits``.
///
/// AsyncHTTPClient's async body sequence reads one socket buffer (64 KB) at a time, and only once
/// the consumer has taken the one before: each chunk costs a round trip between the event loop
/// and the consuming task, and on two busy cores that caps a loopback page at about 90 MB/s,
/// below what the parser takes. Here the event loop goes on reading while the chunks it has
/// handed over and not yet taken stay under ``limit`` bytes, so the parser finds the next chunk
/// waiting; past the limit the connection stops reading (back-pressure) until the consumer
/// catches up.
///
/// The body fails past ``BodyLimits/maxBytes`` (counted as they arrive, decompressed), when the
/// exchange outlasts ``BodyLimits/deadline``, and when no byte comes for
/// ``BodyLimits/idleTimeout`` while the connection reads (time stopped by back-pressure does not
/// count). An exchange AsyncHTTPClient fails without telling its delegate (a redirect loop of a
/// client that follows redirects) fails at once too.
///
/// ```swift
/// let exchange = ReadAheadExchange(limit: 1 << 20, request: "GET \(url)", limits: BodyLimits())
/// let (head, body) = try await exchange.start(request, on: client, timeout: .seconds(30))
/// for try await chunk in body { parse(chunk) }
/// ```
final class ReadAheadExchange: HTTPClientResponseDelegate, @unchecked Sendable {
    // @unchecked: every mutable property below is read and written under `lock` only.
    typealias Response = Void

    /// The most bytes read and not yet taken before the connection stops reading.
    let limit: Int
    /// The request, for errors: "GET https://…".
    let request: String
    /// The body's limits.
    let limits: BodyLimits
    /// When the exchange began: its deadline counts from here.
    let began = NIODeadline.now()

    private let lock = NSLock()
    /// Cancels what produces the body: AsyncHTTPClient's task, or the task relaying its async body.
    private var cancelProducer: (@Sendable () -> Void)?
    /// Set once the caller gave up (cancellation, the body dropped): a producer attached later is cancelled at once.
    private var cancelled = false
    private var headWaiter: CheckedContinuation<HTTPResponseHead, any Error>?
    private var head: HTTPResponseHead?
    private var chunks = CircularBuffer<[UInt8]>()
    private var bufferedBytes = 0
    private var finished = false
    private var failure: (any Error)?
    /// The consumer waiting for the next chunk.
    private var bodyWaiter: CheckedContinuation<[UInt8]?, any Error>?
    /// The event loop waiting for room before it reads on.
    private var room: EventLoopPromise<Void>?
    /// The body's bytes so far, and when the last came (or reading resumed).
    private var received: Int64 = 0
    private var lastProgress = NIODeadline.now()
    /// The body's `Content-Encoding`, for the size error of a decompressed body.
    private var encoding: String?
    private var deadlineTimer: Scheduled<Void>?
    private var idleTimer: Scheduled<Void>?

    init(limit: Int, request: String, limits: BodyLimits) {
        self.limit = max(1, limit)
        self.request = request
        self.limits = limits
    }

    /// Sends `outgoing` and returns its response head once it arrives (within `timeout`, as
    /// AsyncHTTPClient's own async `execute` counts it: to the head, not the whole body), with
    /// the body to read. Dropping the body before its end cancels the exchange.
    ///
    /// - Throws: ``ClientError`` (`.timeout`, `.connection`, `.redirect`, `.cancelled`).
    func start(_ outgoing: HTTPClient.Request, on client: HTTPClient, timeout: TimeAmount) async throws -> (HTTPResponseHead, Body) {
        let loop = client.eventLoopGroup.any()
        let deadline = loop.scheduleTask(in: timeout) { [weak self] in
            self?.failBeforeHead(HTTPClientError.deadlineExceeded)
        }
        defer { deadline.cancel() }
        let head = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponseHead, any Error>) in
                lock.lock()
                if let failure {
                    lock.unlock()
                    continuation.resume(throwing: HTTPTransport.clientError(failure, request: request))
                    return
                }
                headWaiter = continuation
                lock.unlock()
                let task = client.execute(request: outgoing, delegate: self, eventLoop: .indifferent, deadline: nil, logger: nil)
                // AsyncHTTPClient fails some tasks (its redirect limits) without a delegate callback.
                task.futureResult.whenFailure { [weak self] error in self?.fail(error) }
                attach { task.cancel() }
            }
        } onCancel: {
            fail(CancellationError())
        }
        armTimers(on: loop, from: began)
        return (head, Body(handle: Handle(exchange: self)))
    }

    /// Reads `body` (of a response AsyncHTTPClient's async API brought, `headers` its head's)
    /// ahead of the consumer, under the same limits: the async API's uploads and traced requests.
    func relay(_ body: HTTPClientResponse.Body, headers: HTTPHeaders, on loop: any EventLoop) -> Body {
        lock.lock()
        head = HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
        encoding = headers.first(name: "Content-Encoding")
        lock.unlock()
        let task = Task { [weak self] in
            do {
                for try await buffer in body {
                    guard let self else { return }
                    try await self.receive(Array(buffer: buffer), on: loop).get()
                }
                self?.finish()
            } catch {
                self?.fail(error)
            }
        }
        attach { task.cancel() }
        // An upload may take long before its answer begins: the deadline counts from the answer's head.
        armTimers(on: loop, from: .now())
        return Body(handle: Handle(exchange: self))
    }

    // MARK: The consumer's side

    /// The next chunk, `nil` at the end.
    fileprivate func next() async throws -> [UInt8]? {
        switch poll(orWait: nil) {
        case .chunk(let chunk): return chunk
        case .end: return nil
        case .failed(let error): throw HTTPTransport.clientError(error, request: request)
        case .waiting: break
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
                switch poll(orWait: continuation) {
                case .chunk(let chunk): continuation.resume(returning: chunk)
                case .end: continuation.resume(returning: nil)
                case .failed(let error): continuation.resume(throwing: HTTPTransport.clientError(error, request: request))
                case .waiting: break   // resumed by the event loop
                }
            }
        } onCancel: {
            fail(CancellationError())
        }
    }

    private enum Poll {
        case chunk([UInt8])
        case end
        case failed(any Error)
        /// Nothing yet: `continuation`, when given, waits for it.
        case waiting
    }

    /// Takes the first waiting chunk, or the body's end, or its failure; with nothing there,
    /// leaves `continuation` (when given) for the event loop to resume. Lets the event loop read
    /// on once there is room again.
    private func poll(orWait continuation: CheckedContinuation<[UInt8]?, any Error>?) -> Poll {
        lock.lock()
        var result = Poll.waiting
        var reading: EventLoopPromise<Void>?
        if let chunk = chunks.popFirst() {
            bufferedBytes -= chunk.count
            if bufferedBytes < limit, room != nil {
                reading = room
                room = nil
                lastProgress = .now()
            }
            result = .chunk(chunk)
        } else if let failure {
            result = .failed(failure)
        } else if finished {
            result = .end
        } else if let continuation {
            bodyWaiter = continuation
        }
        lock.unlock()
        reading?.succeed()
        return result
    }

    /// The body was dropped: an exchange still under way is cancelled, freeing its connection.
    fileprivate func abandon() {
        lock.lock()
        let done = finished || failure != nil
        lock.unlock()
        if !done { fail(CancellationError()) }
    }

    // MARK: The producer's side

    private func attach(_ cancel: @escaping @Sendable () -> Void) {
        lock.lock()
        cancelProducer = cancel
        let cancelNow = cancelled
        lock.unlock()
        if cancelNow { cancel() }
    }

    /// The deadline passed: fails the exchange unless its head has arrived (the body may take longer).
    private func failBeforeHead(_ error: any Error) {
        lock.lock()
        let arrived = head != nil
        lock.unlock()
        if !arrived { fail(error) }
    }

    /// Ends the exchange with `error` (a timeout, a limit, cancellation): whoever waits gets it,
    /// and the producer is cancelled.
    private func fail(_ error: any Error) {
        lock.lock()
        if failure == nil && !finished { failure = error }
        cancelled = true
        let cancel = cancelProducer
        let (headWaiter, bodyWaiter, room) = (self.headWaiter, self.bodyWaiter, self.room)
        (self.headWaiter, self.bodyWaiter, self.room) = (nil, nil, nil)
        let reported = failure
        let timers = [deadlineTimer, idleTimer]
        (deadlineTimer, idleTimer) = (nil, nil)
        lock.unlock()
        for timer in timers { timer?.cancel() }
        cancel?()
        if let reported {
            headWaiter?.resume(throwing: HTTPTransport.clientError(reported, request: request))
            bodyWaiter?.resume(throwing: HTTPTransport.clientError(reported, request: request))
            room?.fail(reported)
        } else {
            bodyWaiter?.resume(returning: nil)
            room?.succeed()
        }
    }

    /// One chunk of the body: to the waiting consumer, else into the buffer; the future completes
    /// once there is room for more.
    private func receive(_ chunk: [UInt8], on loop: any EventLoop) -> EventLoopFuture<Void> {
        lock.lock()
        if failure != nil {
            lock.unlock()
            return loop.makeSucceededVoidFuture()
        }
        received += Int64(chunk.count)
        lastProgress = .now()
        if received > limits.maxBytes {
            let error = limits.tooLargeError(request: request, received: received, encoding: encoding)
            lock.unlock()
            fail(error)
            return loop.makeSucceededVoidFuture()
        }
        if let waiter = bodyWaiter {
            bodyWaiter = nil
            lock.unlock()
            waiter.resume(returning: chunk)
            return loop.makeSucceededVoidFuture()
        }
        chunks.append(chunk)
        bufferedBytes += chunk.count
        let future: EventLoopFuture<Void>
        if bufferedBytes >= limit {
            let promise = loop.makePromise(of: Void.self)
            room = promise
            future = promise.futureResult
        } else {
            future = loop.makeSucceededVoidFuture()
        }
        lock.unlock()
        return future
    }

    /// The body ended.
    private func finish() {
        lock.lock()
        finished = true
        let waiter = failure == nil ? bodyWaiter : nil
        if waiter != nil { bodyWaiter = nil }
        let timers = [deadlineTimer, idleTimer]
        (deadlineTimer, idleTimer) = (nil, nil)
        lock.unlock()
        for timer in timers { timer?.cancel() }
        waiter?.resume(returning: nil)
    }

    // MARK: The limits in time

    /// Schedules the deadline (counted from `start`) and the first idle check.
    private func armTimers(on loop: any EventLoop, from start: NIODeadline) {
        let deadline = loop.scheduleTask(deadline: start + Self.amount(limits.deadline)) { [weak self] in
            guard let self else { return }
            fail(limits.deadlineError(request: request, received: receivedBytes))
        }
        lock.lock()
        lastProgress = .now()
        let done = finished || failure != nil
        if !done { deadlineTimer = deadline }
        lock.unlock()
        if done { deadline.cancel() } else { scheduleIdleCheck(on: loop, at: .now() + Self.amount(limits.idleTimeout)) }
    }

    private var receivedBytes: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    private func scheduleIdleCheck(on loop: any EventLoop, at due: NIODeadline) {
        let check = loop.scheduleTask(deadline: due) { [weak self] () -> Void in
            guard let self else { return }
            checkIdle(on: loop)
        }
        lock.lock()
        let done = finished || failure != nil
        if !done { idleTimer = check }
        lock.unlock()
        if done { check.cancel() }
    }

    /// Fails the exchange when the body has been idle for the idle timeout while the connection
    /// reads; while back-pressure holds the reading, the clock stands still.
    private func checkIdle(on loop: any EventLoop) {
        let now = NIODeadline.now()
        lock.lock()
        if finished || failure != nil {
            lock.unlock()
            return
        }
        if room != nil { lastProgress = now }
        let due = lastProgress + Self.amount(limits.idleTimeout)
        let bytes = received
        lock.unlock()
        if due <= now {
            fail(limits.idleError(request: request, received: bytes))
        } else {
            scheduleIdleCheck(on: loop, at: due)
        }
    }

    static func amount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        guard seconds < Int64.max / 1_000_000_000 - 1 else { return .nanoseconds(Int64.max / 2) }
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    // MARK: The delegate

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        lock.lock()
        self.head = head
        encoding = head.headers.first(name: "Content-Encoding")
        let waiter = headWaiter
        headWaiter = nil
        lock.unlock()
        waiter?.resume(returning: head)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        receive(Array(buffer: buffer), on: task.eventLoop)
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        fail(error)
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        finish()
    }

    // MARK: The body

    /// Cancels the exchange when the last copy of its body goes before the body's end.
    final class Handle: Sendable {
        let exchange: ReadAheadExchange
        init(exchange: ReadAheadExchange) { self.exchange = exchange }
        deinit { exchange.abandon() }
    }

    /// The response body as byte chunks, read ahead of the consumer.
    struct Body: AsyncSequence, Sendable {
        typealias Element = [UInt8]
        let handle: Handle

        struct AsyncIterator: AsyncIteratorProtocol {
            let handle: Handle
            mutating func next() async throws -> [UInt8]? { try await handle.exchange.next() }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(handle: handle) }
    }
}
