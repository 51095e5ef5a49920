import Foundation
import Replica
import ReplicaPostgres

/// `fleet`: one syncer and 8 watcher processes on one PostgreSQL replica; the time from a
/// commit to the moment every watcher's live result set shows it.
///
/// Each watcher is a child process with a `LiveResultSet` over every person, sorted by name
/// (kept live by `LISTEN`). The syncer (this process) commits a sync of the whole collection
/// (`people.json`'s `/people` route, 1,000 people, stale deletion on) every 100 ms, each
/// changing 39 people (19 changed, the previous commit's 19 changed back, and person 1, whose
/// name carries the commit's number). A watcher notes, on the
/// wall clock shared by the processes, when its snapshot first shows each commit (a later
/// commit shown first counts for the earlier ones it includes). Latency = the last watcher's
/// time minus the moment the syncer's `sync` returned (the commit is a little earlier: the
/// figure is a lower bound by the return's few microseconds).
struct FleetWorkload: Workload {
    let name = "fleet"
    let summary = "1 syncer + 8 watcher processes (LiveResultSet over LISTEN) on one PostgreSQL replica: commit → every watcher updated, ms"

    static let watchers = 8
    static let people = 1_000
    static let target = 100.0

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        let commits = context.quick ? 15 : 60
        let directory = (context.scratchDirectory as NSString).appendingPathComponent("fleet")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let cluster = try PostgresBenchCluster.start(in: (directory as NSString).appendingPathComponent("cluster"))
        defer { cluster.stop() }
        let url = try cluster.makeDatabase("bench_fleet")
        let schema = try Schema(contentsOf: URL(fileURLWithPath: SyncPagesWorkload.schemaPath))
        let syncer = try await PostgresReplica.open(url: url, schema: schema)
        _ = try await syncer.sync(.get, "/people", body: Self.collection(commit: 0), options: SyncOptions())

        // The watchers, each in a process of its own, each started on a thread of its own.
        let replies = Replies()
        var threads: [Thread] = []
        for index in 0..<Self.watchers {
            let ready = (directory as NSString).appendingPathComponent("ready-\(index)")
            let request = WorkerRequest(implementation: "watcher", parameters: [
                "url": url, "ready": ready, "commits": String(commits),
            ])
            let thread = Thread {
                replies.add(Result { try context.runWorker(workload: "fleet", request: request).reply })
            }
            thread.start()
            threads.append(thread)
        }
        let deadline = ContinuousClock.now + .seconds(120)
        while (0..<Self.watchers).contains(where: {
            !FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent("ready-\($0)"))
        }) {
            guard ContinuousClock.now < deadline, replies.count == 0 else {
                await syncer.close()
                throw BenchmarkError("the watchers did not start: \(replies.errors.joined(separator: "; "))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        context.log("fleet: \(Self.watchers) watchers listening; \(commits) commits, one every 100 ms")

        var committed: [Double] = []
        var syncSeconds: [Double] = []
        var updated: [Int] = []
        for commit in 1...commits {
            let body = Self.collection(commit: commit)
            let start = ContinuousClock.now
            let result = try await syncer.sync(.get, "/people", body: body, options: SyncOptions())
            committed.append(Date().timeIntervalSince1970)
            syncSeconds.append(start.duration(to: .now).seconds)
            updated.append(result.changes["Person"]?.updated.count ?? 0)
            try await Task.sleep(for: .milliseconds(100))
        }
        await syncer.close()
        while replies.count < Self.watchers {
            guard ContinuousClock.now < deadline + .seconds(60) else { throw BenchmarkError("the watchers did not finish") }
            try await Task.sleep(for: .milliseconds(50))
        }
        guard replies.errors.isEmpty else { throw BenchmarkError("a watcher failed: \(replies.errors.joined(separator: "; "))") }

        // Per commit: the last watcher to show it (or a later commit).
        var latencies: [Double] = []
        var missed = 0
        for commit in 1...commits {
            var last = -Double.infinity
            for reply in replies.values {
                let seen = (commit...commits).compactMap { reply.seconds["commit.\($0)"] }.min()
                if let seen { last = max(last, seen) } else { missed += 1 }
            }
            if last.isFinite { latencies.append((last - committed[commit - 1]) * 1000) }
        }
        latencies.sort()
        guard !latencies.isEmpty else { throw BenchmarkError("no watcher saw any commit") }
        let median = latencies[latencies.count / 2]
        let p90 = latencies[min(latencies.count - 1, latencies.count * 9 / 10)]
        context.log(String(format: "fleet: median %.1f ms, p90 %.1f ms, max %.1f ms; sync %.1f ms median", median, p90,
                           latencies.last ?? 0, syncSeconds.sorted()[syncSeconds.count / 2] * 1000))
        var row = ResultRow(workload: "fleet: commit → all \(Self.watchers) watchers updated (median)", unit: "ms",
                            replica: Cell(median, note: String(format: "p90 %.0f ms, max %.0f ms", p90, latencies.last ?? 0)))
        row.targets = [Target(description: "≤ \(Int(Self.target)) ms", met: median <= Self.target && missed == 0)]
        row.notes = [String(format: "fleet: %d commits of a %@-person collection (%d rows updated each, stale deletion on), one "
                            + "every 100 ms, by one PostgresReplica; %d watcher processes, each a LiveResultSet over every "
                            + "person sorted by name, updated through LISTEN; median sync %.0f ms; measured from the sync's "
                            + "return to the last watcher's snapshot showing the commit.", commits, Report.formatCount(Self.people),
                            updated.sorted()[updated.count / 2],
                            Self.watchers, syncSeconds.sorted()[syncSeconds.count / 2] * 1000)]
            + (missed > 0 ? ["fleet: \(missed) (watcher, commit) pairs never shown"] : [])
        return [row]
    }

    /// The whole collection at `commit`: person 1's name carries the commit's number; 19 others
    /// (a window moving with the commit) have their kids' count changed.
    static func collection(commit: Int) -> Data {
        var objects: [String] = []
        objects.reserveCapacity(people)
        for id in 1...people {
            let name = id == 1 ? "commit \(commit)" : "person \(id)"
            let touched = id != 1 && commit > 0 && (id + commit * 19) % people < 19
            let kids = touched ? commit % 7 + 10 : id % 5
            objects.append(#"{"id":\#(id),"name":"\#(name)","numberOfKids":\#(kids),"kilometersWalked":\#(Double(id) / 4)}"#)
        }
        return Data(("[" + objects.joined(separator: ",") + "]").utf8)
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        guard let commits = Int(try request.require("commits")) else { throw BenchmarkError("bad commits") }
        let replica = try await PostgresReplica.open(url: try request.require("url"))
        let results = try await LiveResultSet(replica: replica, query: LiveQuery("Person", sort: [.ascending("name")]))
        let updates = results.updates()
        guard FileManager.default.createFile(atPath: try request.require("ready"), contents: Data()) else {
            throw BenchmarkError("cannot create the ready file")
        }
        var reply = WorkerReply()
        let watch = Task {
            var seen: [String: Double] = [:]
            for await update in updates {
                let now = Date().timeIntervalSince1970
                guard let path = update.snapshot.indexPath(of: .integer(1)),
                      case .string(let name)? = update.snapshot.row(at: path)?["name"],
                      let commit = Int(name.dropFirst("commit ".count)) else { continue }
                if seen["commit.\(commit)"] == nil { seen["commit.\(commit)"] = now }
                if commit >= commits { break }
            }
            return seen
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(120))
            watch.cancel()
        }
        reply.seconds = await watch.value
        timeout.cancel()
        reply.counts["updates"] = reply.seconds.count
        results.close()
        await replica.close()
        return reply
    }
}

/// The watchers' replies (or errors), added from their threads.
private final class Replies: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<WorkerReply, any Error>] = []

    func add(_ result: Result<WorkerReply, any Error>) { lock.withLock { results.append(result) } }
    var count: Int { lock.withLock { results.count } }
    var values: [WorkerReply] { lock.withLock { results.compactMap { try? $0.get() } } }
    var errors: [String] { lock.withLock { results.compactMap { if case .failure(let error) = $0 { "\(error)" } else { nil } } } }
}
