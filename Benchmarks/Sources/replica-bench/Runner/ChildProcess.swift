#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Runs a command as a child process and reports its peak memory.
///
/// Foundation's `Process` reaps its children itself, so their resource usage is
/// lost; this spawns with `posix_spawn` and reaps with `wait4`, whose `rusage`
/// carries the child's own peak resident set size (`ru_maxrss`).
///
/// ```swift
/// let result = try ChildProcess.run(["/usr/bin/python3", "-c", "print(1)"])
/// print(result.peakMemory)   // bytes
/// ```
enum ChildProcess {
    /// What a finished child left behind.
    struct Result: Sendable {
        /// The exit code, or 128 + the signal number when it was killed.
        var exitStatus: Int32
        /// Everything it wrote to standard output (standard error is passed through).
        var standardOutput: [UInt8]
        /// Its peak resident memory in bytes.
        var peakMemory: Int
    }

    /// Runs `arguments` (the first is the program's path or a name found on `PATH`) and waits for it.
    ///
    /// - Parameters:
    ///   - arguments: The program and its arguments.
    ///   - quiet: Send the child's standard error to `/dev/null` instead of ours.
    /// - Returns: Its exit status, standard output and peak memory.
    /// - Throws: ``BenchmarkError`` when it cannot be started.
    static func run(_ arguments: [String], quiet: Bool = false) throws -> Result {
        guard let program = arguments.first else { throw BenchmarkError("no command to run") }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw BenchmarkError("pipe: \(String(cString: strerror(errno)))") }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        if quiet {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }

        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }

        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, program, &actions, nil, argv, envp)
        close(writeEnd)
        guard spawned == 0 else {
            close(readEnd)
            throw BenchmarkError("cannot start \(program): \(String(cString: strerror(spawned)))")
        }

        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count > 0 {
                output.append(contentsOf: buffer[0..<count])
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        close(readEnd)

        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw BenchmarkError("wait4: \(String(cString: strerror(errno)))") }
        }
        let signal = status & 0x7f
        let exitStatus = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        #if os(Linux)
        let peak = Int(usage.ru_maxrss) * 1024   // kilobytes on Linux
        #else
        let peak = Int(usage.ru_maxrss)          // bytes on macOS
        #endif
        return Result(exitStatus: exitStatus, standardOutput: output, peakMemory: peak)
    }

    /// The path of the running executable.
    static func currentExecutable() -> String {
        #if os(Linux)
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return path
        }
        #endif
        return Bundle.main.executablePath ?? CommandLine.arguments[0]
    }

    /// The first executable named `name` on `PATH`, or `nil`.
    static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
