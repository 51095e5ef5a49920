import CFloor
import Foundation

extension MachineInfo {
    /// Reads the processor count, CPU model and memory of this machine (from `/proc` on Linux).
    static func current(quick: Bool) -> MachineInfo {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let meminfo = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let model = field("model name", in: cpuinfo) ?? "unknown CPU"
        var memory = "unknown"
        if let total = field("MemTotal", in: meminfo),
           let kilobytes = Double(total.split(separator: " ").first ?? "") {
            memory = String(format: "%.1f GiB", kilobytes / 1_048_576)
        }
        var name = utsname()
        uname(&name)
        let system = [name.sysname, name.release, name.machine].map { value in
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }.joined(separator: " ")
        let formatter = ISO8601DateFormatter()
        return MachineInfo(
            date: formatter.string(from: Date()),
            processors: ProcessInfo.processInfo.activeProcessorCount,
            cpuModel: model,
            memory: memory,
            system: system,
            sqliteVersion: String(cString: cfloor_sqlite_version()),
            mode: quick ? "quick (--quick)" : "full",
            replicaRevision: replicaRevision()
        )
    }

    /// The repository this binary was built from (from this source file's path).
    static let repositoryRoot: URL = {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<5 { root.deleteLastPathComponent() }   // this file, Runner, replica-bench, Sources, Benchmarks
        return root
    }()

    /// The root package's git commit at run time (`git rev-parse`), with `+ uncommitted changes` when
    /// the measured sources (the root package's or the benchmark's) differ from it.
    private static func replicaRevision() -> String {
        func git(_ arguments: [String]) -> String? {
            guard let result = try? ChildProcess.run(["git", "-C", repositoryRoot.path] + arguments, quiet: true),
                  result.exitStatus == 0 else {
                return nil
            }
            return String(decoding: result.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let commit = git(["rev-parse", "--short", "HEAD"]) else { return "(commit unknown)" }
        let measured = ["Sources", "Package.swift", "Benchmarks/Sources", "Benchmarks/Scripts", "Benchmarks/Package.swift"]
        let dirty = git(["status", "--porcelain", "--"] + measured).map { !$0.isEmpty } ?? false
        return dirty ? "\(commit) + uncommitted changes" : commit
    }

    private static func field(_ name: String, in text: String) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}
