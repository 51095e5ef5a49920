import Foundation

/// One benchmark: measures Replica and its baselines and returns rows for the report.
///
/// Adding a workload is one file with a type conforming to `Workload`, plus its
/// entry in ``allWorkloads``:
///
/// ```swift
/// struct EchoWorkload: Workload {
///     let name = "echo"
///     let summary = "does nothing, fast"
///     func run(in context: BenchmarkContext) async throws -> [ResultRow] {
///         [ResultRow(workload: name, unit: "ops/s", replica: Measurement(42))]
///     }
/// }
/// ```
///
/// A workload that measures memory runs each implementation in a child process
/// with ``BenchmarkContext/runWorker(workload:request:)``; the child calls the
/// workload's ``runWorker(_:)``.
protocol Workload: Sendable {
    /// The name used by `--only` and in the table, e.g. `route-lookup`.
    var name: String { get }
    /// One line describing what is measured.
    var summary: String { get }

    /// Runs the workload (its quick or full size, see ``BenchmarkContext/quick``).
    ///
    /// - Parameter context: Sizes, the scratch folder and the way to start workers.
    /// - Returns: The rows this workload adds to the report.
    /// - Throws: When an implementation fails; the runner reports it and goes on.
    func run(in context: BenchmarkContext) async throws -> [ResultRow]

    /// Runs one implementation inside a child process (the hidden `worker` subcommand).
    ///
    /// - Parameter request: What to run, as the parent sent it.
    /// - Returns: Timings and counts; the parent adds the child's peak memory.
    /// - Throws: Any error; the child then exits non-zero.
    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply
}

extension Workload {
    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        throw BenchmarkError("workload '\(name)' has no worker implementations")
    }
}

/// Every workload, in report order. Add new workloads here.
let allWorkloads: [any Workload] = [
    RouteLookupWorkload(),
    ImportWorkload(),
    ImportLinksWorkload(),
    InferWorkload(),
    ImportLiveWorkload(),
    CommitToDiffWorkload(),
    WatchWorkload(),
    MockServerWorkload(),
    SyncPagesWorkload(),
    SyncIncrementalWorkload(),
    SyncOffsetWorkload(),
    OutboxPushWorkload(),
    ImportPostgresWorkload(),
    FleetWorkload(),
]

/// What a workload gets from the runner.
struct BenchmarkContext: Sendable {
    /// Reduced sizes (the whole run well under two minutes).
    let quick: Bool
    /// A scratch folder for this run, removed when the run ends.
    let scratchDirectory: String
    /// This executable, re-run with `worker` for child processes.
    let executablePath: String
    /// The `python3` to run Python baselines with, or `nil` when there is none.
    let python: String?
    /// Overrides the workload's default repetition count when set (`--runs`).
    let runs: Int?
    /// The benchmark's own Python virtual environment for the tools users would pick instead
    /// (`--venv`, default `Benchmarks/.venv`), created when missing.
    var virtualEnvironment: String = CompetitorTools.defaultVirtualEnvironment

    /// Writes a progress line to standard error (standard output holds the report).
    func log(_ message: String) {
        FileHandle.standardError.write(Data("[replica-bench] \(message)\n".utf8))
    }

    /// Runs `request` for `workload` in a fresh child process (`replica-bench worker`).
    ///
    /// - Returns: The child's reply and its peak resident memory in bytes.
    /// - Throws: ``BenchmarkError`` when the child fails or prints no reply.
    func runWorker(workload: String, request: WorkerRequest) throws -> (reply: WorkerReply, peakMemory: Int) {
        let json = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        return try runChild([executablePath, "worker", workload, json])
    }

    /// Runs any command that prints a ``WorkerReply`` as its last JSON line (a Python baseline, say).
    ///
    /// - Returns: The reply and the child's peak resident memory in bytes.
    /// - Throws: ``BenchmarkError`` when the command fails or prints no reply.
    func runChild(_ arguments: [String]) throws -> (reply: WorkerReply, peakMemory: Int) {
        let result = try ChildProcess.run(arguments)
        let output = String(decoding: result.standardOutput, as: UTF8.self)
        guard result.exitStatus == 0 else {
            throw BenchmarkError("\(arguments.prefix(3).joined(separator: " ")) exited with \(result.exitStatus)"
                                 + (output.isEmpty ? "" : ": \(output.suffix(500))"))
        }
        for line in output.split(separator: "\n").reversed() where line.hasPrefix("{") {
            if let reply = try? JSONDecoder().decode(WorkerReply.self, from: Data(line.utf8)) {
                return (reply, result.peakMemory)
            }
        }
        throw BenchmarkError("\(arguments.prefix(3).joined(separator: " ")) printed no reply: \(output.suffix(500))")
    }
}

/// What the parent asks a worker to do: an implementation name and string parameters.
struct WorkerRequest: Codable, Sendable {
    /// The implementation, e.g. `replica`, `c-floor`.
    var implementation: String
    /// Workload-specific parameters (file paths, counts).
    var parameters: [String: String]

    /// The parameter `key`, or an error naming it.
    func require(_ key: String) throws -> String {
        guard let value = parameters[key] else { throw BenchmarkError("worker request lacks '\(key)'") }
        return value
    }
}

/// What a worker prints, as one JSON line, when it is done.
struct WorkerReply: Codable, Sendable {
    /// Named phase durations in seconds, e.g. `pass1`.
    var seconds: [String: Double] = [:]
    /// Named counts, e.g. `pass1.changes`.
    var counts: [String: Int] = [:]
    /// A fingerprint of the stored data, to check that implementations agree.
    var checksum: String?
}

/// An error of the benchmark harness, with a readable message.
struct BenchmarkError: Error, CustomStringConvertible {
    /// What went wrong.
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
