import Foundation
import Replica

/// `import-live`: the cost of live result sets on a large import (issue 5's first performance target).
///
/// Pass 1 of the `import` workload (the generated 1,000,000-object file, 100,000 with `--quick`,
/// into an empty store through `SQLiteReplica.importFile`), once with no live result sets and once
/// with the ten of ``queries`` open on `Item`, each variant in its own child process, alternating
/// which goes first, median of 3 runs each. The import time is the time until `importFile`
/// returns; the result sets then update asynchronously, and the child also measures how long after
/// that return every one of them has delivered its post-import update through `updates()`.
///
/// Targets: with the ten sets open, the import is no more than 10 % slower than with none; the
/// ten post-import updates are all delivered at most 1.0 s after `importFile` returns (median);
/// the child with the ten sets peaks at no more than 250 MB (issue 15).
struct ImportLiveWorkload: Workload {
    let name = "import-live"
    let summary = "1,000,000-object import into an empty store with 10 live result sets open vs none: rows/s, slowdown, time to every post-import update"

    /// The greatest acceptable slowdown with the ten sets open.
    static let maximumSlowdown = 0.10
    /// The latest the last post-import update may arrive after `importFile` returns (median), seconds.
    static let maximumDelivery = 1.0
    /// The most the child with the ten sets may hold (peak RSS), bytes.
    static let maximumPeak = 250_000_000

    /// The ten live queries: predicates (typed and SQL), sorts, section keys, limits.
    static let queries: [LiveQuery] = [
        LiveQuery("Item", sort: [.ascending("name")]),
        LiveQuery("Item", where: .equal("city", .string("Lisbon")), sort: [.descending("score")]),
        LiveQuery("Item", where: .greaterOrEqual("age", .integer(80)), sort: [.ascending("age"), .descending("createdAt")]),
        LiveQuery("Item", where: .equal("active", .bool(true)) && .greater("score", .double(90)),
                  sort: [.descending("score")]),
        LiveQuery("Item", where: .less("age", .integer(25)), sort: [.ascending("name")], sectionKey: "city"),
        LiveQuery("Item", sort: [.descending("createdAt")], limit: 100),
        LiveQuery("Item", where: .equal("active", .bool(true)), sort: [.descending("score")], limit: 50),
        LiveQuery("Item", where: "name LIKE ?", arguments: [.string("Zoë%")], sort: [.ascending("email")]),
        LiveQuery("Item", where: .in("city", [.string("Tokyo"), .string("Oslo")]), sort: [.ascending("createdAt")]),
        LiveQuery("Item", where: .less("score", .double(10)), sort: [.ascending("createdAt")], sectionKey: "active"),
    ]

    /// One-line descriptions of ``queries``, for the notes.
    static var queryDescriptions: [String] {
        queries.map { query in
            var parts = [query.predicate.isAll ? "all rows" : query.predicate.description,
                         "sort " + query.sort.map(\.description).joined(separator: ",")]
            if let section = query.sectionKey { parts.append("sections by \(section)") }
            if let limit = query.limit { parts.append("limit \(limit)") }
            return parts.joined(separator: ", ")
        }
    }

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        let count = context.quick ? 100_000 : 1_000_000
        let runs = context.runs ?? 3
        let liveCount = Self.queries.count
        let clock = ContinuousClock()
        let start = clock.now
        let (file, bytes) = try generatedItemsFile(count: count, context: context)
        context.log(String(format: "import-live: %@ objects, %.1f MB of JSON (ready in %.1f s)",
                           Report.formatCount(count), Double(bytes) / 1e6, start.duration(to: clock.now).seconds))

        var importSeconds: [Int: [Double]] = [:]
        var deliveredSeconds: [Double] = []
        var peaks: [Int: Int] = [:]
        var rowCounts: [Int] = []
        var problems: [String] = []
        for run in 1...runs {
            // Alternate which variant goes first, so drift on the shared machine hits both alike.
            for sets in run % 2 == 1 ? [0, liveCount] : [liveCount, 0] {
                context.log("import-live: run \(run)/\(runs), \(sets) live result sets…")
                let directory = (context.scratchDirectory as NSString).appendingPathComponent("db-import-live")
                let request = WorkerRequest(implementation: "replica", parameters: [
                    "file": file, "count": String(count), "directory": directory, "sets": String(sets),
                ])
                let (reply, peak) = try context.runWorker(workload: name, request: request)
                guard let seconds = reply.seconds["import"] else { throw BenchmarkError("no import time") }
                importSeconds[sets, default: []].append(seconds)
                peaks[sets] = max(peaks[sets] ?? 0, peak)
                if let changes = reply.counts["changes"], changes != count {
                    problems.append("\(sets) sets, run \(run): \(changes) changes, expected \(count)")
                }
                var line = String(format: "import-live: %d sets: importFile %.2f s (%@ rows/s)", sets, seconds,
                                  Report.formatNumber(Double(count) / seconds))
                if sets > 0 {
                    guard let delivered = reply.seconds["delivered"] else { throw BenchmarkError("no delivery time") }
                    deliveredSeconds.append(delivered)
                    let counts = (0..<sets).map { reply.counts["rows.\($0)"] ?? -1 }
                    if !rowCounts.isEmpty && counts != rowCounts {
                        problems.append("run \(run): result set sizes \(counts) differ from \(rowCounts)")
                    }
                    rowCounts = counts
                    line += String(format: "; all %d post-import updates delivered %.2f s after it returned "
                                   + "(first after %.2f s)", sets, delivered, reply.seconds["delivered.first"] ?? -1)
                }
                context.log(line + ", peak \(Report.formatBytes(peak))")
            }
        }
        problems.forEach { context.log("import-live: PROBLEM: \($0)") }

        let withSets = median(importSeconds[liveCount] ?? [])
        let without = median(importSeconds[0] ?? [])
        let slowdown = withSets.flatMap { live in without.map { live / $0 - 1 } }
        let pairs: [(live: Double, none: Double)] = Array(zip(importSeconds[liveCount] ?? [], importSeconds[0] ?? []))
        let perRun: [String] = pairs.map { pair in String(format: "%+.1f %%", (pair.live / pair.none - 1) * 100) }

        var live = ResultRow(workload: "import + \(liveCount) live result sets, pass 1", unit: "rows/s",
                             replica: Cell(withSets.map { Double(count) / $0 }))
        live.targets = [Target(
            description: "≤ 10 % slower than none" + (slowdown.map { String(format: " (%+.1f %%)", $0 * 100) } ?? ""),
            met: slowdown.map { $0 <= Self.maximumSlowdown })]
        live.peakMemory = [MemoryReading(name: "\(liveCount) sets", bytes: peaks[liveCount] ?? 0,
                                         limit: count >= 1_000_000 ? Self.maximumPeak : nil),
                           MemoryReading(name: "none", bytes: peaks[0] ?? 0)]
        var none = ResultRow(workload: "import, no live result sets, pass 1", unit: "rows/s",
                             replica: Cell(without.map { Double(count) / $0 }))
        var delivered = ResultRow(workload: "import + \(liveCount) live result sets: importFile returned → all \(liveCount) updates delivered",
                                  unit: "s", replica: Cell(median(deliveredSeconds)))
        delivered.targets = [Target(description: String(format: "median ≤ %.1f s", Self.maximumDelivery),
                                    met: median(deliveredSeconds).map { $0 <= Self.maximumDelivery })]

        let sizeList: String = rowCounts.map(Report.formatCount).joined(separator: ", ")
        let sizes: String = rowCounts.isEmpty ? "" : " (rows after the import: \(sizeList))"
        let queryList: [String] = Self.queryDescriptions.enumerated().map { "\($0.offset + 1). \($0.element)" }
        var note: String = String(format: "import-live: pass 1 of `import` (%@ objects, %.0f MB) into an empty store, ",
                                  Report.formatCount(count), Double(bytes) / 1e6)
        note += "with \(liveCount) live result sets open on `Item` vs none, each variant in its own child process, alternating "
        note += "which goes first; median of \(runs) runs each (per-run slowdown \(perRun.joined(separator: ", "))); timed until "
        note += "`importFile` returns. The sets then update asynchronously; the third row is the time from that return until "
        note += "every set's consumer has received its post-import update from `updates()`. Queries: "
        note += queryList.joined(separator: "; ") + sizes + "."
        let notes = [note] + problems.map { "import-live: PROBLEM: \($0)" }
        live.notes = notes
        none.notes = notes
        delivered.notes = notes
        return [live, none, delivered]
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        let file = try request.require("file")
        let directory = try request.require("directory")
        guard let sets = Int(try request.require("sets")), (0...Self.queries.count).contains(sets) else {
            throw BenchmarkError("bad sets")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(path: (directory as NSString).appendingPathComponent("bench.sqlite"),
                              schema: try ReplicaImporter.schema())
        let engine = try SQLiteReplica(store: store)
        let resultSets = try Self.queries.prefix(sets).map { try LiveResultSet(engine: engine, query: $0) }
        defer { resultSets.forEach { $0.close() } }

        // One consumer per set, waiting in `next()` before the import starts; each keeps only the
        // time its first (post-import) update arrived and that snapshot's size.
        let clock = ContinuousClock()
        let consumers = resultSets.map { resultSet in
            let updates = resultSet.updates()
            return Task { () -> (at: ContinuousClock.Instant, rows: Int)? in
                for await update in updates { return (clock.now, update.snapshot.count) }
                return nil
            }
        }
        try await Task.sleep(for: .milliseconds(200))   // untimed: lets every consumer reach next()

        let start = clock.now
        let result = try await engine.importFile(file, into: .entity("Item"), options: SyncOptions())
        let returned = clock.now

        // A set that failed would never deliver: close everything after a generous limit.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(900))
            resultSets.forEach { $0.close() }
        }
        var deliveries: [(at: ContinuousClock.Instant, rows: Int)] = []
        for (index, consumer) in consumers.enumerated() {
            guard let delivery = await consumer.value else {
                throw BenchmarkError("live result set \(index + 1) delivered no update: "
                                     + "\(resultSets[index].lastError.map { "\($0)" } ?? "no error")")
            }
            deliveries.append(delivery)
        }
        watchdog.cancel()

        var reply = WorkerReply()
        reply.seconds["import"] = start.duration(to: returned).seconds
        reply.counts["changes"] = (result.changes["Item"]?.inserted.count ?? 0) + (result.changes["Item"]?.updated.count ?? 0)
        if let last = deliveries.map(\.at).max(), let first = deliveries.map(\.at).min() {
            reply.seconds["delivered"] = max(0, returned.duration(to: last).seconds)
            reply.seconds["delivered.first"] = max(0, returned.duration(to: first).seconds)
        }
        for (index, delivery) in deliveries.enumerated() { reply.counts["rows.\(index)"] = delivery.rows }
        return reply
    }
}
