import Dispatch
import Foundation
import Replica
import Testing
@testable import ReplicaCore

/// The one write driver over a recording transaction: the steps every store takes, in order.
@Suite("Write driver: one order of steps for every store")
struct WriteDriverTests {
    /// A transaction that records the driver's calls.
    final class RecordingTransaction: StoreTransaction, @unchecked Sendable {
        // Only the driver's one task touches it.
        var steps: [String] = []

        func write(_ stream: ParsedStream, patience: Double?, source: String) async throws -> ReaderSummary {
            steps.append("stream")
            return ReaderSummary()
        }
        func write(_ staged: UncheckedBox<StagedRows>) async throws { steps.append("staged") }
        func write(_ live: LiveTransaction, source: String) async throws -> LiveTransaction.Ending {
            throw SyncError(.input, "no live sessions here", source: source)
        }
        func settle(_ deletions: [StaleDeletion]) async throws {
            steps.append("settle " + deletions.map { "\($0.entity) keeping \($0.keeping.integers)" }.joined(separator: ", "))
        }
        func delete(entity: Int, key: AttributeValue) async throws { steps.append("delete \(entity) \(key)") }
        func delete(_ tombstones: Tombstones) async throws { steps.append("tombstones \(tombstones.entity) \(tombstones.keys.integers)") }
        func write(_ records: [ClientCache.Record]) async throws { steps.append("records \(records.map(\.key))") }
        func writtenKeys(of entity: Int) async throws -> PrimaryKeys {
            steps.append("written \(entity)")
            return PrimaryKeys([.integer(4)])
        }
        func changeSet(folding rebase: RebaseChanges) async throws -> ChangeSet {
            steps.append("changes")
            return ChangeSet(sequence: 9, entities: [:])
        }
        func changesSoFar() async throws -> [String: EntityChanges] { [:] }
        var dialect: SQLDialect { .sqlite }
        func execute(_ sql: String, _ arguments: [AttributeValue]) async throws { steps.append("execute") }
        func select(_ sql: String, _ arguments: [AttributeValue], types: [AttributeType]) async throws -> [[AttributeValue]] {
            // The store has no outbox: nothing was ever queued.
            steps.append("outbox?")
            return []
        }
    }

    @Test("rows, the outbox, stale rows, the deleted row, tombstones with keys, records, then the change set and the reported keys")
    func order() async throws {
        let blog = try BlogFixture()
        var job = WriteJob(source: "session")
        job.stale = .fixed([StaleDeletion(entity: 1, scope: nil, keeping: PrimaryKeys([.integer(2)]),
                                          includesWritten: false, allWritten: false)])
        job.deletedRow = (entity: 0, key: .integer(5))
        job.tombstones = [Tombstones(entity: 1, scope: nil, keys: PrimaryKeys()),
                          Tombstones(entity: 1, scope: nil, keys: PrimaryKeys([.integer(8)]))]
        job.records = [(key: "https://api.example.com/posts", entry: ClientCache.Entry(etag: "\"v1\""))]
        job.reportedEntity = 1
        let transaction = RecordingTransaction()
        let outcome = try await job.run(in: transaction, frontEnd: blog.engine.frontEnd)
        #expect(transaction.steps == ["outbox?", "settle 1 keeping [2]", "delete 0 5", "tombstones 1 [8]",
                                      "records [\"https://api.example.com/posts\"]", "changes", "written 1"])
        #expect(outcome.changes.sequence == 9)
        #expect(outcome.reportedKeys.integers == [4])
        #expect(outcome.summary == nil)
    }

    @Test("a job with nothing to write still settles (no deletions) and numbers its change set")
    func empty() async throws {
        let blog = try BlogFixture()
        let transaction = RecordingTransaction()
        _ = try await WriteJob(source: "empty").run(in: transaction, frontEnd: blog.engine.frontEnd)
        #expect(transaction.steps == ["outbox?", "settle ", "records []", "changes"])
    }

    @Test("a cancelled task writes nothing: the driver throws before the first step")
    func cancelled() async throws {
        let blog = try BlogFixture()
        let transaction = RecordingTransaction()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await WriteJob(source: "GET /posts").run(in: transaction, frontEnd: blog.engine.frontEnd)
        }
        await #expect(throws: SyncError.self) { try await task.value }
        #expect(transaction.steps.isEmpty)
    }
}

/// The pump that lets the async driver write on a thread-confined transaction (SQLite's writer queue).
@Suite("Thread pump")
struct ThreadPumpTests {
    static let key = DispatchSpecificKey<String>()

    /// Runs `pump.serve(body)` on a queue of its own (as GRDB's writer queue runs it).
    func serve<T: Sendable>(_ pump: ThreadPump, _ body: @escaping @Sendable () async throws -> T) async -> Result<T, any Error> {
        let queue = DispatchQueue(label: "ThreadPumpTests.serving")
        queue.setSpecific(key: Self.key, value: "serving")
        return await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { try pump.serve(body) }) }
        }
    }

    @Test("work sent with perform runs on the serving thread, in order, and serve returns what the body returned")
    func servesInOrder() async throws {
        let pump = ThreadPump()
        let result = await serve(pump) { () async throws -> [String] in
            var seen: [String] = []
            for index in 0..<5 {
                let place = try await pump.perform { "\(index) on \(DispatchQueue.getSpecific(key: Self.key) ?? "another thread")" }
                seen.append(place)
            }
            return seen
        }
        #expect(try result.get() == (0..<5).map { "\($0) on serving" })
    }

    @Test("an error of the work reaches the body; an error of the body reaches serve's caller")
    func errors() async throws {
        let pump = ThreadPump()
        let result = await serve(pump) { () async throws -> Int in
            do {
                _ = try await pump.perform { () throws -> Int in throw SyncError(.database, "disk full") }
            } catch let error as SyncError {
                throw SyncError(.input, "after \(error.message)")
            }
            return 0
        }
        #expect(throws: SyncError.self) { try result.get() }
        #expect((try? result.get()) == nil)
        if case .failure(let error as SyncError) = result { #expect(error.message == "after disk full") }
    }

    @Test("cancel() before serving cancels the body's task as it starts")
    func cancelBeforeStart() async {
        let pump = ThreadPump()
        pump.cancel()
        let result = await serve(pump) { () async throws -> Int in
            try Task.checkCancellation()
            return 1
        }
        #expect(throws: CancellationError.self) { try result.get() }
    }
}
