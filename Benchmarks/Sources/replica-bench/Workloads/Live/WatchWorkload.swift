import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Replica

/// `watch`: `replica watch` in a real terminal (tmux, 120 × 40) on a 1,000,000-object import
/// (issue 15's third target).
///
/// A child process creates an empty store, starts `replica watch --db … Item --sort name --poll 50`
/// in a detached tmux session, waits for its first screen, then imports the generated file
/// (`SQLiteReplica.importFile`, by entity) itself. The watcher, another process, sees the commit
/// through SQLite's `data_version`. Measured: the time from `importFile` returning until the pane
/// shows "1,000,000 rows"; then `End` is pressed and the pane must show the position line
/// "…–1,000,000 of 1,000,000" and the last row's name; the watcher's peak RSS (`VmHWM`) is read
/// before `q`.
///
/// The `replica` executable comes from this package's build folder (next to `replica-bench`);
/// when it is not there, the workload builds it (`swift build -c release --product replica`).
///
/// A second row measures the watcher as a terminal user starts it (issue 31): on a store that
/// already holds the 1,000,000 objects, `replica watch --db … Item --section city --sort name
/// --poll 50` in a larger window (200 × 60; sections and a second sort value are the costliest
/// entries), PageDown three times, End, Home, then two more imports by another process that
/// update every row (the generated file's revision 1, then revision 0 again), each shown
/// (the status line counts the updates), then End; the watcher's `VmHWM`.
///
/// Targets: shown ≤ 1.0 s after `importFile` returns (median); the watcher's RSS ≤ 150 MB in both
/// rows; `End` shows the last row.
struct WatchWorkload: Workload {
    let name = "watch"
    let summary = "replica watch (tmux) on an empty table, then a 1,000,000-object import by another process: seconds until every row is shown, End, watcher RSS"

    static let maximumDelay = 1.0
    static let maximumPeak = 150_000_000
    /// The terminal user's watcher: window, options.
    static let userColumns = 200, userRows = 60
    static let userOptions = "Item --section city --sort name --poll 50"

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        guard let tmux = Tmux.executable else {
            return [ResultRow(workload: "replica watch: importFile returned → every row shown", unit: "s",
                              replica: Cell(note: "not measured: tmux is not installed"))]
        }
        let replica = try Self.replicaExecutable(context: context)
        let count = context.quick ? 100_000 : 1_000_000
        let runs = context.runs ?? 3
        let (file, bytes) = try generatedItemsFile(count: count, context: context)
        context.log(String(format: "watch: %@ objects, %.1f MB of JSON", Report.formatCount(count), Double(bytes) / 1e6))
        var delays: [Double] = []
        var peak = 0
        var endShown = true
        for run in 1...runs {
            context.log("watch: run \(run)/\(runs)…")
            let directory = (context.scratchDirectory as NSString).appendingPathComponent("db-watch")
            let request = WorkerRequest(implementation: "replica", parameters: [
                "file": file, "count": String(count), "directory": directory, "replica": replica, "tmux": tmux,
            ])
            let (reply, _) = try context.runWorker(workload: name, request: request)
            guard let delay = reply.seconds["shown"], let watcher = reply.counts["watcherPeak"] else {
                throw BenchmarkError("watch: the worker measured nothing")
            }
            delays.append(delay)
            peak = max(peak, watcher)
            endShown = endShown && reply.counts["endShown"] == 1
            context.log(String(format: "watch: every row shown %.2f s after importFile returned (import %.2f s); End %@; watcher peak %@",
                               delay, reply.seconds["import"] ?? -1, reply.counts["endShown"] == 1 ? "shows the last row" : "FAILED",
                               Report.formatBytes(watcher)))
        }
        let delay = median(delays)
        var row = ResultRow(workload: "replica watch: importFile returned → all \(Report.formatCount(count)) rows shown", unit: "s",
                            replica: Cell(delay, note: "End shows the last row: \(endShown ? "yes" : "no")"))
        row.targets = [
            Target(description: String(format: "median ≤ %.1f s", Self.maximumDelay), met: delay.map { $0 <= Self.maximumDelay }),
            Target(description: "End shows the last row", met: endShown),
        ]
        row.peakMemory = [MemoryReading(name: "watcher", bytes: peak, limit: count >= 1_000_000 ? Self.maximumPeak : nil)]
        let user = try userRow(context: context, replica: replica, tmux: tmux, file: file, count: count, runs: runs)
        row.notes = ["watch: `replica watch --db DB Item --sort name --poll 50` in a detached tmux session (120 × 40) on an empty "
            + "store; another process (the benchmark's child) then imports \(Report.formatCount(count)) generated objects "
            + "(\(String(format: "%.0f", Double(bytes) / 1e6)) MB) with `importFile` by entity. Time from `importFile` returning until "
            + "the pane (read every 10 ms) shows the row count; then End, and the pane must show the position line ending "
            + "\"of \(Report.formatCount(count))\" with the last row's name; the watcher's peak RSS is its VmHWM. Median of \(runs) runs."]
        return [row, user]
    }

    /// The second row: the watcher as a terminal user starts it, on a full store, scrolled, then
    /// following two imports that update every row.
    func userRow(context: BenchmarkContext, replica: String, tmux: String, file: String, count: Int, runs: Int) throws -> ResultRow {
        let changed = (context.scratchDirectory as NSString).appendingPathComponent("items-watch-1.json")
        try ImportData(count: count, revision: 1).writeJSON(to: changed)
        defer { try? FileManager.default.removeItem(atPath: changed) }
        var peak = 0
        var endShown = true
        var delays: [Double] = []
        for run in 1...runs {
            context.log("watch (terminal user): run \(run)/\(runs)…")
            let directory = (context.scratchDirectory as NSString).appendingPathComponent("db-watch")
            let request = WorkerRequest(implementation: "user", parameters: [
                "file": file, "changed": changed, "count": String(count), "directory": directory, "replica": replica, "tmux": tmux,
            ])
            let (reply, _) = try context.runWorker(workload: name, request: request)
            guard let watcher = reply.counts["watcherPeak"], let delay = reply.seconds["shown"] else {
                throw BenchmarkError("watch: the terminal-user worker measured nothing")
            }
            delays.append(delay)
            peak = max(peak, watcher)
            endShown = endShown && reply.counts["endShown"] == 1
            context.log(String(format: "watch (terminal user): updates shown %.2f s after importFile returned (slowest of 2); End %@; watcher peak %@",
                               delay, reply.counts["endShown"] == 1 ? "shows the last row" : "FAILED", Report.formatBytes(watcher)))
        }
        let total = Report.formatCount(count)
        let delay = median(delays)
        var row = ResultRow(workload: "replica watch as a user starts it (\(Self.userColumns) × \(Self.userRows), --section city "
                            + "--sort name), \(total) rows, scrolled, 2 imports updating every row: importFile returned → shown", unit: "s",
                            replica: Cell(delay, note: "End shows the last row: \(endShown ? "yes" : "no")"))
        row.targets = [
            Target(description: String(format: "median ≤ %.1f s", Self.maximumDelay), met: delay.map { $0 <= Self.maximumDelay }),
            Target(description: "End shows the last row", met: endShown),
        ]
        row.peakMemory = [MemoryReading(name: "watcher", bytes: peak, limit: count >= 1_000_000 ? Self.maximumPeak : nil)]
        row.notes = ["watch (terminal user): the store holds the \(total) objects before the watcher starts; `replica watch --db DB "
            + "\(Self.userOptions)` in a detached tmux session (\(Self.userColumns) × \(Self.userRows)); PageDown ×3, End, Home; "
            + "then the benchmark's child imports the generated file's revision 1 (every row updated) and revision 0 again with "
            + "`importFile`, each time waiting until the status line counts the update; then End must show the last row. The time "
            + "is the slower of the two imports' importFile-returned → shown; the watcher's peak RSS is its VmHWM. Median of \(runs) runs."]
        return row
    }

    /// `replica` next to this executable, built first when it is missing.
    static func replicaExecutable(context: BenchmarkContext) throws -> String {
        let directory = (context.executablePath as NSString).deletingLastPathComponent
        let path = (directory as NSString).appendingPathComponent("replica")
        if FileManager.default.isExecutableFile(atPath: path) { return path }
        // …/Benchmarks/.build/<triple>/release/replica-bench → the package is four levels up.
        var package = URL(fileURLWithPath: context.executablePath).resolvingSymlinksInPath()
        while package.path != "/" && !FileManager.default.fileExists(atPath: package.appendingPathComponent("Package.swift").path) {
            package.deleteLastPathComponent()
        }
        context.log("watch: building the replica executable (swift build -c release --product replica)…")
        let result = try ChildProcess.run(["/usr/bin/env", "swift", "build", "-c", "release", "--package-path", package.path,
                                           "--product", "replica"])
        guard result.exitStatus == 0, FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchmarkError("watch: could not build replica (exit \(result.exitStatus)): "
                                 + String(decoding: result.standardOutput.suffix(500), as: UTF8.self))
        }
        return path
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        if request.implementation == "user" { return try await runUserWorker(request) }
        let file = try request.require("file")
        let directory = try request.require("directory")
        let replica = try request.require("replica")
        guard let count = Int(try request.require("count")) else { throw BenchmarkError("bad count") }
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let db = (directory as NSString).appendingPathComponent("watch.sqlite")
        let store = try Store(path: db, schema: try ReplicaImporter.schema())
        let engine = try SQLiteReplica(store: store)

        let tmux = Tmux(executable: try request.require("tmux"), directory: directory)
        defer { tmux.run(["kill-server"]) }
        tmux.run(["new-session", "-d", "-s", tmux.session, "-x", "120", "-y", "40",
                  "\(replica) watch --db \(db) Item --sort name --poll 50"])
        guard tmux.waitForPane(timeout: 30, { $0.contains("0 rows ·") }) != nil else {
            throw BenchmarkError("watch: the view did not start: \(tmux.pane())")
        }

        let clock = ContinuousClock()
        let start = clock.now
        _ = try await engine.importFile(file, into: .entity("Item"), options: SyncOptions())
        let returned = clock.now
        let total = Report.formatCount(count)
        guard tmux.waitForPane(timeout: 120, interval: 0.01, { $0.contains("\(total) rows ·") }) != nil else {
            throw BenchmarkError("watch: the view never showed \(total) rows: \(tmux.pane())")
        }
        let shown = clock.now
        var lastName = ""
        if case .string(let name)? = try store.rows("Item", sort: [.descending("name"), .descending("id")], limit: 1).first?["name"] {
            lastName = name
        }
        tmux.run(["send-keys", "-t", tmux.session, "End"])
        let end = tmux.waitForPane(timeout: 30) { $0.contains("\(total) of \(total)") && $0.contains(lastName) }

        var reply = WorkerReply()
        reply.seconds["import"] = start.duration(to: returned).seconds
        reply.seconds["shown"] = returned.duration(to: shown).seconds
        reply.counts["endShown"] = end == nil ? 0 : 1
        let pid = tmux.run(["display-message", "-p", "-t", tmux.session, "#{pane_pid}"]).trimmingCharacters(in: .whitespacesAndNewlines)
        reply.counts["watcherPeak"] = Self.peakResident(pid: pid) ?? 0
        tmux.run(["send-keys", "-t", tmux.session, "q"])
        return reply
    }

    /// The terminal user's watcher: a full store, a larger window, sections, scrolling, then two
    /// imports that update every row.
    func runUserWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        let file = try request.require("file")
        let changed = try request.require("changed")
        let directory = try request.require("directory")
        let replica = try request.require("replica")
        guard let count = Int(try request.require("count")) else { throw BenchmarkError("bad count") }
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let db = (directory as NSString).appendingPathComponent("watch.sqlite")
        let store = try Store(path: db, schema: try ReplicaImporter.schema())
        let engine = try SQLiteReplica(store: store)
        _ = try await engine.importFile(file, into: .entity("Item"), options: SyncOptions())
        let total = Report.formatCount(count)

        let tmux = Tmux(executable: try request.require("tmux"), directory: directory)
        defer { tmux.run(["kill-server"]) }
        tmux.run(["new-session", "-d", "-s", tmux.session, "-x", String(Self.userColumns), "-y", String(Self.userRows),
                  "\(replica) watch --db \(db) \(Self.userOptions)"])
        guard tmux.waitForPane(timeout: 60, { $0.contains("\(total) rows ·") }) != nil else {
            throw BenchmarkError("watch: the view did not start: \(tmux.pane())")
        }
        for key in ["PageDown", "PageDown", "PageDown"] {
            tmux.run(["send-keys", "-t", tmux.session, key])
            usleep(200_000)
        }
        tmux.run(["send-keys", "-t", tmux.session, "End"])
        guard tmux.waitForPane(timeout: 30, { $0.contains("\(total) of \(total)") }) != nil else {
            throw BenchmarkError("watch: End did not reach the last row: \(tmux.pane())")
        }
        tmux.run(["send-keys", "-t", tmux.session, "Home"])
        guard tmux.waitForPane(timeout: 30, { $0.contains("rows 1–") }) != nil else {
            throw BenchmarkError("watch: Home did not reach the first row: \(tmux.pane())")
        }

        let clock = ContinuousClock()
        var slowest = 0.0
        for (index, path) in [changed, file].enumerated() {
            _ = try await engine.importFile(path, into: .entity("Item"), options: SyncOptions())
            let returned = clock.now
            guard tmux.waitForPane(timeout: 120, interval: 0.01, { $0.contains("\(total) rows · \(index + 1) updates") }) != nil else {
                throw BenchmarkError("watch: the view never showed update \(index + 1): \(tmux.pane())")
            }
            slowest = max(slowest, returned.duration(to: clock.now).seconds)
        }
        var lastName = ""
        if case .string(let name)? = try store.rows("Item", sort: [.descending("city"), .descending("name"), .descending("id")],
                                                   limit: 1).first?["name"] {
            lastName = name
        }
        tmux.run(["send-keys", "-t", tmux.session, "End"])
        let end = tmux.waitForPane(timeout: 30) { $0.contains("\(total) of \(total)") && $0.contains(lastName) }

        var reply = WorkerReply()
        reply.seconds["shown"] = slowest
        reply.counts["endShown"] = end == nil ? 0 : 1
        let pid = tmux.run(["display-message", "-p", "-t", tmux.session, "#{pane_pid}"]).trimmingCharacters(in: .whitespacesAndNewlines)
        reply.counts["watcherPeak"] = Self.peakResident(pid: pid) ?? 0
        tmux.run(["send-keys", "-t", tmux.session, "q"])
        return reply
    }

    /// A process's peak resident set (`VmHWM` in `/proc/PID/status`), in bytes.
    static func peakResident(pid: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }
}

/// tmux on a private socket, run through posix_spawn with its output in a file: the tmux server
/// that the first command starts keeps inherited descriptors open, so a pipe would never close.
struct Tmux {
    static let executable: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    let executable: String
    let socket: String
    let output: String
    let session = "replica-bench"

    init(executable: String, directory: String) {
        self.executable = executable
        socket = (directory as NSString).appendingPathComponent("tmux.sock")
        output = (directory as NSString).appendingPathComponent("tmux.out")
    }

    /// Runs one tmux command and returns what it printed.
    @discardableResult
    func run(_ arguments: [String]) -> String {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable, "-S", socket] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else { return "" }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }

    func pane() -> String { run(["capture-pane", "-p", "-t", session]) }

    /// The pane once it satisfies `condition`, or `nil` after `timeout` seconds.
    func waitForPane(timeout: Double, interval: Double = 0.05, _ condition: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let screen = pane()
            if condition(screen) { return screen }
            Thread.sleep(forTimeInterval: interval)
        }
        return nil
    }
}
