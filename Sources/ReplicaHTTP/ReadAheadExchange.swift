import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Replica

/// One exchange through AsyncHTTPClient's delegate API, its body read ahead of the consumer.
///
/// AsyncHTTPClient's async body sequence reads one socket buffer (64 KB) at a time, and only once
/// the consumer has taken the one before: each chunk costs a round trip between the event loop
/// and the consuming task, and on two busy cores that caps a loopback page at about 90 MB/s,
/// below what the parser takes. Here the event loop goes on reading while the chunks it has
/// handed over and not yet taken stay under ``limit`` bytes, so the parser finds the next chunk
/// waiting; past the limit the connection stops reading (back-pressure) until the consumer
/// catches up.
///
/// ```swift
/// let exchange = ReadAheadExchange(limit: 1 << 20, request: "GET \(url)")
/// let (head, body) = try await exchange.start(request, on: client, timeout: .seconds(30))
/// for try await chunk in body { parse(chunk) }
/// ```
final class ReadAheadExchange: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = Void

    /// The most bytes read and not yet taken before the connection stops reading.
    let limit: Int
    /// The request, for errors: "GET https://…".
    let request: String

    private let lock = NSLock()
    private var task: HTTPClient.Task<Void>?
    /// Set once the caller gave up (cancellation, the body dropped): a task attached later is cancelled at once.
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

    init(limit: Int, request: String) {
        self.limit = max(1, limit)
        self.request = request
    }

    /// Sends `outgoing` and returns its response head once it arrives (within `timeout`, as
    /// AsyncHTTPClient's own async `execute` counts it: to the head, not the whole body), with
    /// the body to read. Dropping the body before its end cancels the exchange.
    ///
    /// - Throws: ``ClientError`` (`.timeout`, `.connection`, `.cancelled`).
    func start(_ outgoing: HTTPClient.Request, on client: HTTPClient, timeout: TimeAmount) async throws -> (HTTPResponseHead, Body) {
        let deadline = client.eventLoopGroup.any().scheduleTask(in: timeout) { [weak self] in
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
                attach(task)
            }
        } onCancel: {
            fail(CancellationError())
        }
        return (head, Body(handle: Handle(exchange: self)))
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
            if bufferedBytes < limit {
                reading = room
                room = nil
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

    // MARK: The event loop's side

    private func attach(_ task: HTTPClient.Task<Void>) {
        lock.lock()
        self.task = task
        let cancel = cancelled
        lock.unlock()
        if cancel { task.cancel() }
    }

    /// The deadline passed: fails the exchange unless its head has arrived (the body may take longer).
    private func failBeforeHead(_ error: any Error) {
        lock.lock()
        let arrived = head != nil
        lock.unlock()
        if !arrived { fail(error) }
    }

    /// Ends the exchange with `error` (a timeout, cancellation): whoever waits gets it, and the
    /// request is cancelled.
    private func fail(_ error: any Error) {
        lock.lock()
        if failure == nil && !finished { failure = error }
        cancelled = true
        let task = self.task
        let (headWaiter, bodyWaiter, room) = (self.headWaiter, self.bodyWaiter, self.room)
        (self.headWaiter, self.bodyWaiter, self.room) = (nil, nil, nil)
        let reported = failure
        lock.unlock()
        task?.cancel()
        if let reported {
            headWaiter?.resume(throwing: HTTPTransport.clientError(reported, request: request))
            bodyWaiter?.resume(throwing: HTTPTransport.clientError(reported, request: request))
            room?.fail(reported)
        } else {
            bodyWaiter?.resume(returning: nil)
            room?.succeed()
        }
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        lock.lock()
        self.head = head
        let waiter = headWaiter
        headWaiter = nil
        lock.unlock()
        waiter?.resume(returning: head)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let chunk = Array(buffer: buffer)
        lock.lock()
        if failure != nil {
            lock.unlock()
            return task.eventLoop.makeSucceededVoidFuture()
        }
        let future: EventLoopFuture<Void>
        if let waiter = bodyWaiter {
            bodyWaiter = nil
            lock.unlock()
            waiter.resume(returning: chunk)
            return task.eventLoop.makeSucceededVoidFuture()
        }
        chunks.append(chunk)
        bufferedBytes += chunk.count
        if bufferedBytes >= limit {
            let promise = task.eventLoop.makePromise(of: Void.self)
            room = promise
            future = promise.futureResult
        } else {
            future = task.eventLoop.makeSucceededVoidFuture()
        }
        lock.unlock()
        return future
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        fail(error)
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        lock.lock()
        finished = true
        let waiter = failure == nil ? bodyWaiter : nil
        if waiter != nil { bodyWaiter = nil }
        lock.unlock()
        waiter?.resume(returning: nil)
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
