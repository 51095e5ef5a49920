import ArgumentParser
import Foundation

/// `replica-bench`: runs Replica's workloads against their baselines and prints a Markdown table.
///
/// ```
/// swift run -c release --package-path Benchmarks replica-bench            # full sizes
/// swift run -c release --package-path Benchmarks replica-bench --quick    # well under two minutes
/// swift run -c release --package-path Benchmarks replica-bench --only import --json
/// replica-bench --json > run.json && replica-bench readme run.json   # regenerate the READMEs' tables
/// replica-bench compare old.json new.json                            # two runs side by side
/// ```
@main
struct ReplicaBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replica-bench",
        abstract: "Benchmarks Replica against a C floor, Python, the tools users would pick instead and Foundation+GRDB.",
        subcommands: [Run.self, Readme.self, Compare.self, Merge.self, Worker.self],
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

        @Option(help: ArgumentHelp("The Python virtual environment for sqlite-utils, DuckDB and dlt, created when missing.",
                                   valueName: "dir"))
        var venv: String = CompetitorTools.defaultVirtualEnvironment

        /// How this run was started, as `replica-bench ARGUMENTS` without `--json` (the report's format
        /// is not part of what was measured).
        static func commandLine() -> String {
            let arguments = CommandLine.arguments.dropFirst().filter { $0 != "--json" }.map { argument in
                argument.isEmpty || argument.contains(where: { " \"'$`\\".contains($0) }) ? "'\(argument)'" : argument
            }
            return (["replica-bench"] + arguments).joined(separator: " ")
        }

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
                runs: runs,
                virtualEnvironment: venv
            )
            let clock = ContinuousClock()
            let runStart = clock.now
            let machine = MachineInfo.current(quick: quick)
            context.log("\(machine.processors) cores, \(machine.cpuModel); scratch \(scratchDirectory)")

            var rows: [ResultRow] = []
            for workload in allWorkloads where only == nil || only == workload.name {
                context.log("\(workload.name): \(workload.summary)")
                let start = clock.now
                do {
                    rows += try await workload.run(in: context)
                } catch {
                    context.log("\(workload.name) failed: \(error)")
                    rows.append(ResultRow(workload: workload.name, unit: "—", replica: Cell(note: "failed: \(error)")))
                }
                context.log(String(format: "%@ took %.1f s", workload.name, start.duration(to: clock.now).seconds))
            }

            let report = Report(machine: machine, rows: rows, command: Self.commandLine(),
                                seconds: runStart.duration(to: clock.now).seconds)
            print(json ? try report.json() : report.markdown(), terminator: "")
        }
    }

    /// Writes a `--json` report into the READMEs, between their `<!-- bench:begin -->` and
    /// `<!-- bench:end -->` lines.
    struct Readme: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Regenerate the READMEs' benchmark tables from a --json report.",
            discussion: """
                Replaces the lines between '\(ReadmeWriter.beginMarker)' and '\(ReadmeWriter.endMarker)' in \
                Benchmarks/README.md (the whole table with its footnotes, command, machine, date and commit) and \
                README.md (a summary) and leaves the rest of both files as they were.
                """
        )

        @Argument(help: "The report, as written by 'replica-bench --json'.")
        var report: String

        @Option(help: ArgumentHelp("The repository holding README.md and Benchmarks/README.md (default: the current "
                                   + "folder when it holds them, else the repository this binary was built from).",
                                   valueName: "dir"))
        var root: String?

        func run() throws {
            let report = try Report.load(path: self.report)
            let current = FileManager.default.currentDirectoryPath
            let root = root ?? (FileManager.default.fileExists(atPath: current + "/Benchmarks/README.md")
                ? current : MachineInfo.repositoryRoot.path)
            for file in try ReadmeWriter.write(report, root: root) {
                print("wrote \(file)")
            }
        }
    }

    /// Prints two `--json` reports side by side.
    struct Compare: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print two --json reports side by side as a Markdown table (each row's value in both, the ratio).",
            discussion: "Rows present in one report only are listed with '—' for the other."
        )

        @Argument(help: "The old report.")
        var old: String

        @Argument(help: "The new report.")
        var new: String

        @Flag(help: "Leave out the baselines' values (compare Replica's only).")
        var replicaOnly = false

        @Option(help: "The old column's title (default: its commit).")
        var oldLabel: String?

        @Option(help: "The new column's title (default: its commit).")
        var newLabel: String?

        func run() throws {
            let comparison = ReportComparison(old: try Report.load(path: old), new: try Report.load(path: new),
                                              replicaOnly: replicaOnly, oldLabel: oldLabel, newLabel: newLabel)
            print(comparison.markdown(), terminator: "")
        }
    }

    /// Joins `--json` reports of one binary's runs of different workloads into one.
    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Join --json reports of runs of different workloads (same commit and machine) into one --json report.",
            discussion: """
                The rows come in the order the reports are given; the commands are joined with '; ' and the \
                durations added. Used by Scripts/old_vs_new.sh, which runs each workload with both binaries in turn.
                """
        )

        @Argument(help: "The reports, as written by 'replica-bench --json'.")
        var reports: [String]

        func validate() throws {
            if reports.isEmpty { throw ValidationError("give at least one report") }
        }

        func run() throws {
            print(try Report.merged(try reports.map(Report.load(path:))).json(), terminator: "")
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
