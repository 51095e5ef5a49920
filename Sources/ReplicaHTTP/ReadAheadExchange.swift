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
///
/// The exchange's state is one ``StateMachine`` value in a ``Locked``: each event changes it under
/// the lock and returns what to do, which is done after the lock is let go.
final class ReadAheadExchange: HTTPClientResponseDelegate, Sendable {
    typealias Response = Void

    /// The most bytes read and not yet taken before the connection stops reading.
    let limit: Int
    /// The request, for errors: "GET https://…".
    let request: String
    /// The body's limits.
    let limits: BodyLimits
    /// When the exchange began: its deadline counts from here.
    let began = NIODeadline.now()
    private let state: Locked<StateMachine>

    init(limit: Int, request: String, limits: BodyLimits) {
        self.limit = max(1, limit)
        self.request = request
        self.limits = limits
        self.state = Locked(StateMachine(limit: limit, maxBytes: limits.maxBytes, idleTimeout: Self.amount(limits.idleTimeout)))
    }

    /// Sends `outgoing` and returns its response head once it arrives (within `timeout`, as
    /// AsyncHTTPClient's own async `execute` counts it: to the head, not the whole body), with
    /// the body to read. Dropping the body before its end cancels the exchange.
    ///
    /// - Throws: ``ClientError`` (`.timeout`, `.connection`, `.redirect`, `.cancelled`).
    func start(_ outgoing: HTTPClient.Request, on client: HTTPClient, timeout: TimeAmount) async throws -> (HTTPResponseHead, Body) {
        let loop = client.eventLoopGroup.any()
        let deadline = loop.scheduleTask(in: timeout) { [weak self] in
            guard let self else { return }
            end(state.withLock { $0.deadlineBeforeHead(HTTPClientError.deadlineExceeded) })
        }
        defer { deadline.cancel() }
        let head = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponseHead, any Error>) in
                switch state.withLock({ $0.waitForHead(continuation) }) {
                case .fail(let continuation, let failure):
                    continuation.resume(throwing: HTTPTransport.clientError(failure, request: request))
                case .execute:
                    let task = client.execute(request: outgoing, delegate: self, eventLoop: .indifferent, deadline: nil, logger: nil)
                    // AsyncHTTPClient fails some tasks (its redirect limits) without a delegate callback.
                    task.futureResult.whenFailure { [weak self] error in self?.fail(error) }
                    attach { task.cancel() }
                }
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
        _ = state.withLock { $0.headArrived(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)) }
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
        switch state.withLock({ $0.next(waiting: nil, now: .now()) }) {
        case .deliver(let chunk, let reading):
            reading?.succeed()
            return chunk
        case .end: return nil
        case .fail(let error): throw HTTPTransport.clientError(error, request: request)
        case .wait: break
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
                switch state.withLock({ $0.next(waiting: continuation, now: .now()) }) {
                case .deliver(let chunk, let reading):
                    reading?.succeed()
                    continuation.resume(returning: chunk)
                case .end: continuation.resume(returning: nil)
                case .fail(let error): continuation.resume(throwing: HTTPTransport.clientError(error, request: request))
                case .wait: break   // resumed by the event loop
                }
            }
        } onCancel: {
            fail(CancellationError())
        }
    }

    /// The body was dropped: an exchange still under way is cancelled, freeing its connection.
    fileprivate func abandon() {
        end(state.withLock { $0.abandon() })
    }

    // MARK: The producer's side

    private func attach(_ cancel: @escaping @Sendable () -> Void) {
        switch state.withLock({ $0.attach(cancel) }) {
        case .none: break
        case .cancel(let cancel): cancel()
        }
    }

    /// Ends the exchange with `error` (a timeout, a limit, cancellation): whoever waits gets it,
    /// and the producer is cancelled.
    private func fail(_ error: any Error) {
        end(state.withLock { $0.fail(error) })
    }

    /// Does what ending the exchange asks: cancels the timers and the producer, then fails the
    /// waiters (or gives the consumer the end of a body that had ended).
    private func end(_ action: StateMachine.EndAction) {
        for timer in action.timers { timer.cancel() }
        action.cancelProducer?()
        if let failure = action.failure {
            action.headWaiter?.resume(throwing: HTTPTransport.clientError(failure, request: request))
            action.bodyWaiter?.resume(throwing: HTTPTransport.clientError(failure, request: request))
            action.room?.fail(failure)
        } else {
            // A body ends only after its head: no caller waits for one here; were one to, it is not left hanging.
            action.headWaiter?.resume(throwing: HTTPTransport.clientError(CancellationError(), request: request))
            action.bodyWaiter?.resume(returning: nil)
            action.room?.succeed()
        }
    }

    /// One chunk of the body: to the waiting consumer, else into the buffer; the future completes
    /// once there is room for more.
    private func receive(_ chunk: [UInt8], on loop: any EventLoop) -> EventLoopFuture<Void> {
        switch state.withLock({ $0.receive(chunk, now: .now(), on: loop) }) {
        case .drop:
            return loop.makeSucceededVoidFuture()
        case .tooLarge(let received, let encoding):
            fail(limits.tooLargeError(request: request, received: received, encoding: encoding))
            return loop.makeSucceededVoidFuture()
        case .deliver(let waiter):
            waiter.resume(returning: chunk)
            return loop.makeSucceededVoidFuture()
        case .buffered(let future):
            return future
        }
    }

    /// The body ended.
    private func finish() {
        end(state.withLock { $0.finish() })
    }

    // MARK: The limits in time

    /// Schedules the deadline (counted from `start`) and the first idle check.
    private func armTimers(on loop: any EventLoop, from start: NIODeadline) {
        let deadline = loop.scheduleTask(deadline: start + Self.amount(limits.deadline)) { [weak self] in
            guard let self else { return }
            fail(limits.deadlineError(request: request, received: state.withLock { $0.received }))
        }
        switch state.withLock({ $0.deadlineArmed(deadline, now: .now()) }) {
        case .armed: scheduleIdleCheck(on: loop, at: .now() + Self.amount(limits.idleTimeout))
        case .cancel(let timer): timer.cancel()
        }
    }

    private func scheduleIdleCheck(on loop: any EventLoop, at due: NIODeadline) {
        let check = loop.scheduleTask(deadline: due) { [weak self] () -> Void in
            guard let self else { return }
            checkIdle(on: loop)
        }
        switch state.withLock({ $0.idleCheckScheduled(check) }) {
        case .armed: break
        case .cancel(let timer): timer.cancel()
        }
    }

    /// Fails the exchange when the body has been idle for the idle timeout while the connection
    /// reads; while back-pressure holds the reading, the clock stands still.
    private func checkIdle(on loop: any EventLoop) {
        switch state.withLock({ $0.idleCheck(now: .now()) }) {
        case .none: break
        case .fail(let received): fail(limits.idleError(request: request, received: received))
        case .check(let due): scheduleIdleCheck(on: loop, at: due)
        }
    }

    static func amount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        guard seconds < Int64.max / 1_000_000_000 - 1 else { return .nanoseconds(Int64.max / 2) }
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    // MARK: The delegate

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        switch state.withLock({ $0.headArrived(head) }) {
        case .none: break
        case .resume(let waiter): waiter.resume(returning: head)
        }
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
