import Foundation
import ReplicaTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program and reports its output and peak resident memory: on Linux its own high-water
/// mark (`VmHWM` of `/proc/PID/status`, read while it runs), because `wait4`'s `ru_maxrss` of a
/// spawned child also counts the parent's high-water mark at the `exec` (a large test process
/// would be measured instead of the child).
enum ChildProcess {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
        var peakMemory: Int
    }

    /// The built `replica` executable, next to the test bundle.
    static let replica: String = {
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            let candidate = bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("replica").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return packageRoot.appendingPathComponent(".build/debug/replica").path
    }()

    /// Runs `path` and waits for it on a thread of its own: a test that waits must not hold one
    /// of Swift's cooperative threads, which servers inside the test process need to answer it.
    static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try runBlocking(path, arguments, environment: environment) }) }
            thread.start()
        }
    }

    private static func runBlocking(_ path: String, _ arguments: [String], environment: [String: String]) throws -> Output {
        let directory = try TemporaryDirectory("replica-child")
        defer { directory.remove() }
        let out = directory.path("out")
        let err = directory.path("err")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Close every other descriptor in the child: it must not keep test servers' sockets open.
        closeInheritedDescriptors(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        // The parent's environment, with `environment` added.
        var variables = ProcessInfo.processInfo.environment
        for (name, value) in environment { variables[name] = value }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
        var status: Int32 = 0
        var usage = rusage()
        var highWaterMark = 0
        while true {
            // VmHWM only grows: the last reading before the exit is the peak, within 2 ms of work.
            highWaterMark = max(highWaterMark, Self.highWaterMark(of: pid) ?? 0)
            let reaped = wait4(pid, &status, WNOHANG, &usage)
            if reaped == pid || (reaped == -1 && errno != EINTR) { break }
            usleep(2_000)
        }
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Output(status: exit,
                      stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "",
                      peakMemory: highWaterMark > 0 ? highWaterMark : Int(usage.ru_maxrss) * 1024)
    }

    /// A running process's peak resident memory in bytes (`VmHWM`), or `nil` without `/proc`.
    static func highWaterMark(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }
}
