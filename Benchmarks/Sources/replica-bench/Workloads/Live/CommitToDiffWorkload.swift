import Foundation
import Replica

/// `commit-to-diff`: latency from a committed transaction to the diff a live result set delivers
/// (issue 5's second performance target).
///
/// For each size (10,000, 100,000 and 1,000,000 rows), a child process imports that many generated objects,
/// opens a live result set on every row sorted by `score` descending, and starts a consumer
/// iterating `updates()`. Then, ~30 times (after 3 untimed warm-ups), it commits one transaction
/// through `SQLiteReplica.importChunks` (a prebuilt JSON body, untimed) that changes the `score` of
/// 1 % of the rows, chosen at random, so those rows move. Timestamps: just before the call, just
/// after it returns, and in the consumer the moment `next()` hands over the update. The diff can
/// be computed before the call returns, so **commit → diff** is (delivered − returned) clamped at
/// 0; **write + diff** is (delivered − before the call). Every diff is checked: each changed row
/// moved or updated, nothing inserted or deleted, and applied to the previous snapshot it gives the new one.
///
/// Targets: median commit → diff ≤ 16 ms at 10,000 rows, ≤ 50 ms at 100,000 rows and ≤ 150 ms at
/// 1,000,000 rows (issue 15; past 10,000 rows the snapshots hold keys and sort values, not rows).
struct CommitToDiffWorkload: Workload {
    let name = "commit-to-diff"
    let summary = "commit of a transaction changing 1 % of a live result set's rows → its diff delivered, ms, 10k, 100k and 1M rows"

    /// Result-set sizes and their targets for the median, in milliseconds.
    static let sizes: [(rows: Int, targetMilliseconds: Double)] = [(10_000, 16), (100_000, 50), (1_000_000, 150)]
    /// Untimed transactions before the samples.
    static let warmUps = 3

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        let samples = context.quick ? 15 : 30
        var rows: [ResultRow] = []
        for size in Self.sizes {
            let label = size.rows >= 1_000_000 ? "\(size.rows / 1_000_000)M rows" : "\(size.rows / 1_000)k rows"
            context.log("commit-to-diff: \(Report.formatCount(size.rows)) rows, \(samples) samples…")
            let directory = (context.scratchDirectory as NSString).appendingPathComponent("db-commit-to-diff")
            let request = WorkerRequest(implementation: "replica", parameters: [
                "rows": String(size.rows), "samples": String(samples), "directory": directory,
            ])
            let (reply, peak) = try context.runWorker(workload: name, request: request)
            func series(_ key: String) -> [Double] {
                (0..<samples).compactMap { reply.seconds["\(key).\($0)"] }.map { $0 * 1_000 }
            }
            let toDiff = series("commitToDiff"), total = series("total"), write = series("write")
            guard toDiff.count == samples, total.count == samples, write.count == samples else {
                throw BenchmarkError("commit-to-diff: the worker returned \(toDiff.count) of \(samples) samples")
            }
            let medianToDiff = median(toDiff)
            func ms(_ value: Double?) -> String { value.map { String(format: "%.2f ms", $0) } ?? "—" }
            context.log("commit-to-diff: \(label): commit→diff median \(ms(medianToDiff)), p90 \(ms(percentile(toDiff, 0.9))); "
                        + "write median \(ms(median(write))); write+diff median \(ms(median(total))), "
                        + "p90 \(ms(percentile(total, 0.9))); peak \(Report.formatBytes(peak))")

            var commit = ResultRow(workload: "commit→diff, \(label)", unit: "ms",
                                   replica: Cell(medianToDiff, note: "p90 \(ms(percentile(toDiff, 0.9)))"))
            commit.targets = [Target(description: String(format: "median ≤ %g ms", size.targetMilliseconds),
                                     met: medianToDiff.map { $0 <= size.targetMilliseconds })]
            commit.peakMemory = [MemoryReading(name: "Replica", bytes: peak)]
            let both = ResultRow(workload: "write + diff, \(label)", unit: "ms",
                                 replica: Cell(median(total), note: "p90 \(ms(percentile(total, 0.9))); "
                                               + "write alone: median \(ms(median(write))), p90 \(ms(percentile(write, 0.9)))"))
            rows += [commit, both]
        }
        let note = "commit-to-diff: a store of N generated `Item` rows (N = 10,000, 100,000 or 1,000,000, each in its own child process, "
            + "peak RSS shown) and one live result set on all of them sorted by `score` descending; \(samples) transactions "
            + "(after \(Self.warmUps) untimed) each changing the `score` of 1 % of the rows, chosen at random, through "
            + "`importChunks` with a prebuilt body. commit→diff = the consumer's `next()` returning the update − `importChunks` "
            + "returning, clamped at 0 (the diff may come first); write + diff = that moment − just before the call. Medians and "
            + "p90 (nearest rank) of one run; every diff checked: each changed row "
            + "moved or updated, no inserts or deletes, and applied to the previous snapshot it gives the new one."
        for index in rows.indices { rows[index].notes = [note] }
        return rows
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        guard let count = Int(try request.require("rows")), count >= 100,
              let samples = Int(try request.require("samples")), samples > 0 else {
            throw BenchmarkError("bad rows or samples")
        }
        let directory = try request.require("directory")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let data = ImportData(count: count, revision: 0)
        let file = (directory as NSString).appendingPathComponent("items.json")
        try data.writeJSON(to: file)
        let store = try Store(path: (directory as NSString).appendingPathComponent("bench.sqlite"),
                              schema: try ReplicaImporter.schema())
        let engine = try SQLiteReplica(store: store)
        _ = try await engine.importFile(file, into: .entity("Item"), options: SyncOptions())

        let resultSet = try LiveResultSet(engine: engine, query: LiveQuery("Item", sort: [.descending("score")]))
        defer { resultSet.close() }
        guard resultSet.snapshot.count == count else {
            throw BenchmarkError("the result set has \(resultSet.snapshot.count) rows, expected \(count)")
        }

        struct Delivery: Sendable {
            var at: ContinuousClock.Instant
            var movedOrUpdated: Set<Int64>
            var otherChanges: Int
            var rows: Int
            /// The diff applied to the previous snapshot gives the new one.
            var applies: Bool
        }
        let clock = ContinuousClock()
        let (deliveries, sink) = AsyncStream.makeStream(of: Delivery.self)
        let updates = resultSet.updates()
        let consumer = Task {
            for await update in updates {
                let now = clock.now
                let diff = update.diff
                let keys = (diff.rowMoves + diff.rowUpdates).compactMap { change -> Int64? in
                    if case .integer(let key) = change.key { return key }
                    return nil
                }
                // Checked after the timestamp, before the next transaction starts.
                let applies = (try? diff.apply(to: update.previous)) == update.snapshot
                sink.yield(Delivery(at: now, movedOrUpdated: Set(keys),
                                    otherChanges: diff.changeCount - diff.rowMoves.count - diff.rowUpdates.count,
                                    rows: update.snapshot.count, applies: applies))
            }
            sink.finish()
        }
        defer { consumer.cancel() }
        var received = deliveries.makeAsyncIterator()

        // Scores in hundredths, as generated; each change moves a score to a different value.
        var cents = (0..<count).map { Int((data.item(at: $0).score * 100).rounded()) }
        var random = SplitMix64(seed: 0xD1FF_0000 &+ UInt64(count))
        let changed = count / 100
        var reply = WorkerReply()
        for sample in 0..<(Self.warmUps + samples) {
            var indices = Set<Int>()
            while indices.count < changed { indices.insert(Int(random.next() % UInt64(count))) }
            var body: [UInt8] = [UInt8(ascii: "[")]
            body.reserveCapacity(changed * 200)
            for (position, index) in indices.enumerated() {
                cents[index] = (cents[index] + 1 + Int(random.next() % 9_998)) % 10_000
                var item = data.item(at: index)
                item.score = Double(cents[index]) / 100
                if position > 0 { body.append(UInt8(ascii: ",")) }
                data.appendJSON(of: item, to: &body)
            }
            body.append(UInt8(ascii: "]"))

            let start = clock.now
            let result = try await engine.importChunks(SingleChunk(bytes: body), into: .entity("Item"),
                                                       options: SyncOptions())
            let returned = clock.now
            guard let delivery = await received.next() else {
                throw BenchmarkError("the result set ended: \(resultSet.lastError.map { "\($0)" } ?? "no error")")
            }

            let expected = Set(indices.map { Int64($0 + 1) })
            let updated = result.changes["Item"]?.updated.count ?? 0
            // Every changed row moves or is updated; an unchanged row may move instead of a changed
            // one (the diff keeps the most rows stable), but nothing is inserted or deleted.
            let covered = expected.isSubset(of: delivery.movedOrUpdated)
            guard updated == changed, covered, delivery.otherChanges == 0, delivery.rows == count, delivery.applies else {
                throw BenchmarkError("transaction \(sample): \(updated) rows updated, diff moved or updated "
                                     + "\(delivery.movedOrUpdated.count) (\(covered ? "" : "not ")all changed keys) with "
                                     + "\(delivery.otherChanges) other changes, \(delivery.rows) rows, "
                                     + "\(delivery.applies ? "applies" : "does not apply"); expected \(changed) changed of \(count)")
            }
            guard sample >= Self.warmUps else { continue }
            let index = sample - Self.warmUps
            reply.seconds["write.\(index)"] = start.duration(to: returned).seconds
            reply.seconds["commitToDiff.\(index)"] = max(0, returned.duration(to: delivery.at).seconds)
            reply.seconds["total.\(index)"] = start.duration(to: delivery.at).seconds
        }
        reply.counts["rows"] = count
        reply.counts["changedPerTransaction"] = changed
        return reply
    }
}
