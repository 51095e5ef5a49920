import AsyncHTTPClient
import NIOCore
import NIOHTTP1
@testable import ReplicaHTTP
import Testing

/// `ReadAheadExchange.StateMachine` alone: each event's transition and the action it returns,
/// without a connection (the exchange tests drive the same machine over HTTP).
@Suite("ReadAheadExchange.StateMachine: transitions and actions")
struct ReadAheadStateMachineTests {
    typealias Machine = ReadAheadExchange.StateMachine

    struct Failure: Error, Equatable {
        let name: String
    }

    let loop = HTTPClient.shared.eventLoopGroup.any()
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    func machine(limit: Int = 100, maxBytes: Int64 = 1 << 20, idleTimeout: TimeAmount = .seconds(1)) -> Machine {
        Machine(limit: limit, maxBytes: maxBytes, idleTimeout: idleTimeout, now: start)
    }

    /// The future of a `.buffered` action, or `nil` (recorded as an issue) for any other action.
    func buffered(_ action: Machine.ReceiveAction, sourceLocation: SourceLocation = #_sourceLocation) -> EventLoopFuture<Void>? {
        guard case .buffered(let future) = action else {
            Issue.record("expected .buffered, got \(action)", sourceLocation: sourceLocation)
            return nil
        }
        return future
    }

    /// The chunk of a `.deliver` action and the reading it resumes.
    func delivered(_ action: Machine.NextAction, sourceLocation: SourceLocation = #_sourceLocation)
        -> (chunk: [UInt8], reading: EventLoopPromise<Void>?)? {
        guard case .deliver(let chunk, let reading) = action else {
            Issue.record("expected .deliver, got \(action)", sourceLocation: sourceLocation)
            return nil
        }
        return (chunk, reading)
    }

    @Test("chunks under the limit are buffered with reading going on, and taken in order; then the consumer waits")
    func underTheLimit() async throws {
        var state = machine()
        for chunk: [UInt8] in [[1, 2], [3], [4, 5, 6]] {
            let future = try #require(buffered(state.receive(chunk, now: start, on: loop)))
            try await future.get()
        }
        #expect(state.bufferedBytes == 6)
        #expect(state.received == 6)
        #expect(!state.isHoldingReading)
        var taken: [[UInt8]] = []
        for _ in 0 ..< 3 {
            let next = try #require(delivered(state.next(waiting: nil, now: start)))
            #expect(next.reading == nil)
            taken.append(next.chunk)
        }
        #expect(taken == [[1, 2], [3], [4, 5, 6]])
        #expect(state.bufferedBytes == 0)
        guard case .wait = state.next(waiting: nil, now: start) else {
            Issue.record("an empty buffer of a body under way should make the consumer wait")
            return
        }
    }

    @Test("at the limit the connection waits for room; taking a chunk below the limit lets it read on and restarts the idle clock")
    func backPressure() async throws {
        var state = machine(limit: 20)
        let first = try #require(buffered(state.receive(Array(repeating: 1, count: 10), now: start, on: loop)))
        try await first.get()
        let held = try #require(buffered(state.receive(Array(repeating: 2, count: 10), now: start, on: loop)))
        #expect(state.isHoldingReading)
        let later = start + .seconds(5)
        let next = try #require(delivered(state.next(waiting: nil, now: later)))
        #expect(next.chunk == Array(repeating: 1, count: 10))
        let reading = try #require(next.reading)
        #expect(!state.isHoldingReading)
        #expect(state.lastProgress == later)
        reading.succeed()
        try await held.get()
    }

    @Test("a body past its maximum size asks for the size error, with the bytes received and the encoding")
    func tooLarge() {
        var state = machine(maxBytes: 10)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Encoding", value: "gzip")
        guard case .none = state.headArrived(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)) else {
            Issue.record("no one waited for the head")
            return
        }
        _ = buffered(state.receive(Array(repeating: 0, count: 8), now: start, on: loop))
        guard case .tooLarge(let received, let encoding) = state.receive([0, 0, 0], now: start, on: loop) else {
            Issue.record("11 bytes of a 10-byte maximum should be too large")
            return
        }
        #expect(received == 11)
        #expect(encoding == "gzip")
    }

    @Test("a failure comes after the chunks read before it; later chunks are dropped; the first failure stays")
    func failureAfterChunks() {
        var state = machine()
        _ = buffered(state.receive([7], now: start, on: loop))
        let first = state.fail(Failure(name: "first"))
        #expect(first.failure as? Failure == Failure(name: "first"))
        #expect(state.isDone)
        let second = state.fail(Failure(name: "second"))
        #expect(second.failure as? Failure == Failure(name: "first"))
        guard case .drop = state.receive([8], now: start, on: loop) else {
            Issue.record("a chunk after the failure should be dropped")
            return
        }
        #expect(delivered(state.next(waiting: nil, now: start))?.chunk == [7])
        guard case .fail(let error) = state.next(waiting: nil, now: start) else {
            Issue.record("the failure should follow the chunks")
            return
        }
        #expect(error as? Failure == Failure(name: "first"))
    }

    @Test("failing cancels the attached producer once; a producer attached after the caller gave up is cancelled at once")
    func producerCancellation() {
        var state = machine()
        guard case .none = state.attach({}) else {
            Issue.record("a producer attached to an exchange under way should run")
            return
        }
        #expect(state.fail(CancellationError()).cancelProducer != nil)
        #expect(state.fail(CancellationError()).cancelProducer == nil)
        guard case .cancel = state.attach({}) else {
            Issue.record("a producer attached after cancellation should be cancelled at once")
            return
        }
    }

    @Test("a body that ended stays ended: a later failure reports none, and dropping the body does nothing")
    func finished() {
        var state = machine()
        _ = buffered(state.receive([1], now: start, on: loop))
        #expect(state.finish().bodyWaiter == nil)
        #expect(state.isDone)
        #expect(state.fail(Failure(name: "late")).failure == nil)
        #expect(state.abandon().failure == nil)
        #expect(delivered(state.next(waiting: nil, now: start))?.chunk == [1])
        guard case .end = state.next(waiting: nil, now: start) else {
            Issue.record("a finished body should end after its chunks")
            return
        }
    }

    @Test("dropping a body under way fails the exchange with cancellation")
    func abandonUnderWay() {
        var state = machine()
        #expect(state.abandon().failure is CancellationError)
        guard case .fail(let error) = state.next(waiting: nil, now: start) else {
            Issue.record("an abandoned body should fail")
            return
        }
        #expect(error is CancellationError)
    }

    @Test("the deadline to the head fails the exchange only while the head has not arrived")
    func deadlineBeforeHead() {
        var waiting = machine()
        #expect(waiting.deadlineBeforeHead(Failure(name: "deadline")).failure as? Failure == Failure(name: "deadline"))
        var arrived = machine()
        _ = arrived.headArrived(HTTPResponseHead(version: .http1_1, status: .ok))
        #expect(arrived.deadlineBeforeHead(Failure(name: "deadline")).failure == nil)
        #expect(!arrived.isDone)
    }

    @Test("the caller waiting for the head is resumed by the head; a caller that comes after a failure gets it")
    func headWaiter() async throws {
        var state = machine()
        let head = HTTPResponseHead(version: .http1_1, status: .created)
        let received = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponseHead, any Error>) in
            guard case .execute = state.waitForHead(continuation) else {
                Issue.record("an exchange under way should send its request")
                continuation.resume(throwing: Failure(name: "unexpected"))
                return
            }
            switch state.headArrived(head) {
            case .resume(let waiter): waiter.resume(returning: head)
            case .none:
                Issue.record("the waiting caller should get the head")
                continuation.resume(throwing: Failure(name: "unexpected"))
            }
        }
        #expect(received.status == .created)

        var failed = machine()
        _ = failed.fail(Failure(name: "early"))
        do {
            _ = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponseHead, any Error>) in
                switch failed.waitForHead(continuation) {
                case .fail(let waiter, let error): waiter.resume(throwing: error)
                case .execute:
                    Issue.record("a failed exchange should not send its request")
                    continuation.resume(throwing: Failure(name: "unexpected"))
                }
            }
            Issue.record("a failed exchange should fail the caller")
        } catch {
            #expect(error as? Failure == Failure(name: "early"))
        }
    }

    @Test("a waiting consumer gets the next chunk straight from the producer, or the failure")
    func bodyWaiter() async throws {
        var state = machine()
        let chunk = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
            guard case .wait = state.next(waiting: continuation, now: start) else {
                Issue.record("an empty buffer should keep the consumer waiting")
                continuation.resume(throwing: Failure(name: "unexpected"))
                return
            }
            guard case .deliver(let waiter) = state.receive([9, 9], now: start, on: loop) else {
                Issue.record("a chunk should go to the waiting consumer")
                continuation.resume(throwing: Failure(name: "unexpected"))
                return
            }
            waiter.resume(returning: [9, 9])
        }
        #expect(chunk == [9, 9])
        #expect(state.bufferedBytes == 0)

        do {
            _ = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
                _ = state.next(waiting: continuation, now: start)
                let action = state.fail(Failure(name: "reset"))
                guard let failure = action.failure, let waiter = action.bodyWaiter else {
                    Issue.record("the failure should go to the waiting consumer")
                    continuation.resume(throwing: Failure(name: "unexpected"))
                    return
                }
                waiter.resume(throwing: failure)
            }
            Issue.record("the waiting consumer should get the failure")
        } catch {
            #expect(error as? Failure == Failure(name: "reset"))
        }
    }

    @Test("the idle clock: a check before the timeout comes again; no byte for the timeout fails; back-pressure stops the clock")
    func idleClock() async throws {
        var state = machine(limit: 4, idleTimeout: .seconds(1))
        guard case .check(let due) = state.idleCheck(now: start + .milliseconds(500)) else {
            Issue.record("half the idle timeout should check again")
            return
        }
        #expect(due == start + .seconds(1))
        _ = buffered(state.receive([1], now: start + .milliseconds(800), on: loop))
        guard case .check(let next) = state.idleCheck(now: start + .seconds(1)) else {
            Issue.record("a byte at 0.8 s should move the next check")
            return
        }
        #expect(next == start + .milliseconds(1800))
        guard case .fail(let received) = state.idleCheck(now: start + .seconds(2)) else {
            Issue.record("1.2 s without a byte should fail")
            return
        }
        #expect(received == 1)

        var held = machine(limit: 4, idleTimeout: .seconds(1))
        let room = try #require(buffered(held.receive([1, 2, 3, 4], now: start, on: loop)))
        let later = start + .seconds(60)
        guard case .check(let stillDue) = held.idleCheck(now: later) else {
            Issue.record("a connection held by back-pressure is not idle")
            return
        }
        #expect(stillDue == later + .seconds(1))
        let action = held.finish()
        #expect(action.timers.isEmpty)
        guard case .none = held.idleCheck(now: later + .seconds(5)) else {
            Issue.record("an ended body needs no more checks")
            return
        }
        let reading = try #require(delivered(held.next(waiting: nil, now: later))?.reading)
        reading.succeed()
        try await room.get()
    }

    @Test("timers stay while the exchange is under way and are cancelled by its end; armed after the end, they are cancelled at once")
    func timers() {
        var state = machine()
        let deadline = loop.scheduleTask(in: .hours(1)) {}
        let idle = loop.scheduleTask(in: .hours(1)) {}
        guard case .armed = state.deadlineArmed(deadline, now: start), case .armed = state.idleCheckScheduled(idle) else {
            Issue.record("timers of an exchange under way should stay")
            return
        }
        let ended = state.fail(Failure(name: "done"))
        #expect(ended.timers.count == 2)
        for timer in ended.timers { timer.cancel() }
        let late = loop.scheduleTask(in: .hours(1)) {}
        guard case .cancel(let timer) = state.idleCheckScheduled(late) else {
            Issue.record("a timer armed after the end should be cancelled")
            late.cancel()
            return
        }
        timer.cancel()
    }
}
