import Foundation
import Replica

/// The demo's output: lines on standard output, a progress line redrawn on standard error when it
/// is a terminal. Writes are serialized by the lock of `progressShown`.
final class DemoReport: Sendable {
    private let progressEnabled: Bool
    /// Whether a progress line is on screen (to be cleared before the next line).
    private let progressShown = Locked(false)

    init(progress: Bool) { progressEnabled = progress }

    func line(_ text: String) {
        progressShown.withLock { shown in
            if shown { Output.write("\r\u{1B}[K", to: .standardError) }
            shown = false
            Output.write(text + "\n", to: .standardOutput)
        }
    }

    func progress(_ text: String) {
        guard progressEnabled else { return }
        progressShown.withLock { shown in
            Output.write("\r" + text + "\u{1B}[K", to: .standardError)
            shown = true
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> String {
        String(format: "%.1f s", start.duration(to: .now).seconds)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// The initial sync: calls every path of a route, `concurrency` at a time, with a progress line.
actor DemoSync {
    struct Totals: Sendable {
        var requests = 0
        var objects = 0
        var inserted = 0
        var updated = 0
        var deleted = 0

        func rate(since start: ContinuousClock.Instant) -> String {
            let seconds = max(0.001, start.duration(to: .now).seconds)
            return "\(Format.integer(Int(Double(requests) / seconds))) requests/s, \(Format.integer(Int(Double(objects) / seconds))) objects/s"
        }
    }

    private let client: ReplicaClient
    private let report: DemoReport
    private let concurrency: Int
    private(set) var totals = Totals()

    init(client: ReplicaClient, report: DemoReport, concurrency: Int) {
        self.client = client
        self.report = report
        self.concurrency = concurrency
    }

    /// Syncs `paths` (all resolving to `route`) and prints one line for the route.
    func run(_ route: String, kind: String, paths: [String]) async throws {
        let started = ContinuousClock.now
        var phase = Totals()
        let client = self.client
        try await withThrowingTaskGroup(of: (String, Result<CallResult, any Error>).self) { group in
            var next = 0
            func launch() {
                guard next < paths.count else { return }
                let path = paths[next]
                next += 1
                group.addTask {
                    do {
                        return (path, .success(try await client.call(path)))
                    } catch {
                        return (path, .failure(error))
                    }
                }
            }
            for _ in 0 ..< min(concurrency, paths.count) { launch() }
            while let (path, outcome) = try await group.next() {
                let result: CallResult
                switch outcome {
                case .success(let value): result = value
                case .failure(let error):
                    group.cancelAll()
                    throw CLIError("GET \(path): \(error)")
                }
                phase.requests += result.pages
                phase.objects += result.sync.objectCount
                for changes in result.changes.entities.values {
                    phase.inserted += changes.inserted.count
                    phase.updated += changes.updated.count
                    phase.deleted += changes.deleted.count
                }
                if paths.count > 1 {
                    report.progress("  GET \(route)  \(Format.integer(phase.requests))/\(Format.integer(paths.count)) requests, "
                                    + "\(Format.integer(phase.objects)) objects, \(DemoReport.seconds(since: started))")
                }
                launch()
            }
        }
        totals.requests += phase.requests
        totals.objects += phase.objects
        totals.inserted += phase.inserted
        totals.updated += phase.updated
        totals.deleted += phase.deleted
        let requests = paths.count == 1 ? "" : "\(Format.integer(phase.requests)) requests, "
        report.line("  GET \(route) (\(kind)): \(requests)\(Format.integer(phase.objects)) objects, "
                    + "\(Format.integer(phase.inserted)) rows inserted, in \(DemoReport.seconds(since: started))")
    }
}

/// What the periodic sync reported.
final class DemoPeriodicTally: Sendable {
    struct Counts: Sendable {
        var syncs = 0
        var incremental = 0
        var notModified = 0
        var failed = 0
        var rowsChanged = 0
        var lastError: String?

        var summary: String {
            "\(syncs) periodic syncs (\(incremental) incremental, \(notModified) not modified, \(failed) failed\(lastError.map { ": \($0)" } ?? ""), "
                + "\(rowsChanged) rows changed)"
        }
    }

    private let counts = Locked(Counts())

    func record(_ outcome: Result<CallResult, any Error>) {
        counts.withLock { counts in
            counts.syncs += 1
            switch outcome {
            case .success(let result):
                if result.notModified { counts.notModified += 1 }
                if result.mode == .incremental { counts.incremental += 1 }
                counts.rowsChanged += result.changes.entities.values.reduce(0) {
                    $0 + $1.inserted.count + $1.updated.count + $1.deleted.count
                }
            case .failure(let error):
                counts.failed += 1
                counts.lastError = "\(error)"
            }
        }
    }

    var snapshot: Counts { counts.value }
}

/// The diffs the live result set delivered.
final class DemoDiffCounter: Sendable {
    struct Counts: Sendable {
        var diffs = 0
        var inserted = 0
        var updated = 0
        var moved = 0
        var deleted = 0
        var sectionChanges = 0

        var summary: String {
            "\(diffs) diffs received (\(inserted) rows inserted, \(updated) updated, \(moved) moved, \(deleted) deleted, "
                + "\(sectionChanges) sections added or removed)"
        }

        var short: String { "\(diffs) diffs: +\(inserted) ~\(updated) ↕\(moved) −\(deleted)" }
    }

    private let counts = Locked(Counts())

    func record(_ diff: ResultDiff) {
        counts.withLock { counts in
            counts.diffs += 1
            counts.inserted += diff.rowInserts.count
            counts.updated += diff.rowUpdates.count
            counts.moved += diff.rowMoves.count
            counts.deleted += diff.rowDeletes.count
            counts.sectionChanges += diff.sectionInserts.count + diff.sectionDeletes.count
        }
    }

    var snapshot: Counts { counts.value }
}
