import ArgumentParser
import Foundation

/// `replica-bench`: runs Replica's workloads against their baselines and prints a Markdown table.
///
/// ```
/// swift run -c release --package-path Benchmarks replica-bench            # full sizes
/// swift run -c release --package-path Benchmarks replica-bench --quick    # well under two minutes
/// swift run -c release --package-path Benchmarks replica-bench --only import --json
/// ```
@main
struct ReplicaBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replica-bench",
        abstract: "Benchmarks Replica against a C floor, Python and Foundation+GRDB.",
        subcommands: [Run.self, Worker.self],
        defaultSubcommand: Run.self
    )
}

extension ReplicaBench {
    /// Runs the workloads and prints the report (the default subcommand).
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the workloads and print the report.",
            discussion: "Workloads: " + allWorkloads.map { "\($0.name) (\($0.summary))" }.joined(separator: "; ")
        )

        @Flag(help: "Run reduced sizes (the whole run takes well under two minutes).")
        var quick = false

        @Option(help: "Run only this workload (\(allWorkloads.map(\.name).joined(separator: ", "))).")
        var only: String?

        @Flag(help: "Print the report as JSON instead of Markdown.")
        var json = false

        @Option(help: "Repetitions of each measurement (default: the workload's own, fewer for large sizes).")
        var runs: Int?

        @Option(help: "The Python interpreter for the Python baselines (default: python3 on PATH; 'none' to skip).")
        var python: String?

        @Option(help: "Where to put the scratch folder (default: the system's temporary folder).")
        var scratch: String?

        func validate() throws {
            if let only, !allWorkloads.contains(where: { $0.name == only }) {
                throw ValidationError("unknown workload '\(only)'; known: \(allWorkloads.map(\.name).joined(separator: ", "))")
            }
            if let runs, runs < 1 { throw ValidationError("--runs must be at least 1") }
        }

        func run() async throws {
            let base = scratch ?? NSTemporaryDirectory()
            let scratchDirectory = (base as NSString).appendingPathComponent("replica-bench-\(getpid())")
            try FileManager.default.createDirectory(atPath: scratchDirectory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: scratchDirectory) }

            let pythonPath: String? = python == "none" ? nil : (python ?? ChildProcess.which("python3"))
            let context = BenchmarkContext(
                quick: quick,
                scratchDirectory: scratchDirectory,
                executablePath: ChildProcess.currentExecutable(),
                python: pythonPath,
                runs: runs
            )
            let machine = MachineInfo.current(quick: quick)
            context.log("\(machine.processors) cores, \(machine.cpuModel); scratch \(scratchDirectory)")

            var rows: [ResultRow] = []
            for workload in allWorkloads where only == nil || only == workload.name {
                context.log("\(workload.name): \(workload.summary)")
                let clock = ContinuousClock()
                let start = clock.now
                do {
                    rows += try await workload.run(in: context)
                } catch {
                    context.log("\(workload.name) failed: \(error)")
                    rows.append(ResultRow(workload: workload.name, unit: "—", replica: Cell(note: "failed: \(error)")))
                }
                context.log(String(format: "%@ took %.1f s", workload.name, start.duration(to: clock.now).seconds))
            }

            let report = Report(machine: machine, rows: rows)
            print(json ? try report.json() : report.markdown(), terminator: "")
        }
    }

    /// Runs one implementation of one workload and prints its reply as one JSON line.
    /// The parent starts it in a child process to measure its peak memory.
    struct Worker: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Internal: run one implementation in a child process.",
            shouldDisplay: false
        )

        @Argument(help: "The workload name.")
        var workload: String

        @Argument(help: "The WorkerRequest, as JSON.")
        var request: String

        func run() async throws {
            guard let target = allWorkloads.first(where: { $0.name == workload }) else {
                throw ValidationError("unknown workload '\(workload)'")
            }
            let request = try JSONDecoder().decode(WorkerRequest.self, from: Data(self.request.utf8))
            let reply = try await target.runWorker(request)
            print(String(decoding: try JSONEncoder().encode(reply), as: UTF8.self))
        }
    }
}
