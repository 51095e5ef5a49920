import Foundation
import ReplicaTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A command line run by `/bin/sh -c` in a directory, as a user's shell runs it: in a process
/// group of its own (so that it can be stopped with everything it started), standard input from
/// /dev/null, and standard output and error both written to one file, in the order the command
/// writes them, as a terminal shows them.
///
/// Every wait polls `waitpid` and blocks the calling thread: call it from a thread of your own,
/// never from Swift's cooperative threads.
///
/// ```swift
/// let job = try ShellJob(command: "echo hello", directory: "/tmp", outputPath: "/tmp/out")
/// let status = job.wait(until: Date().addingTimeInterval(60))   // 0; /tmp/out holds "hello\n"
/// ```
final class ShellJob {
    let command: String
    let pid: pid_t
    /// The file that receives the command's standard output and error.
    let outputPath: String
    private var status: Int32?

    /// Starts `command` in `directory`.
    ///
    /// - Throws: `POSIXError` when the shell cannot be started.
    init(command: String, directory: String, outputPath: String) throws {
        self.command = command
        self.outputPath = outputPath
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The child must not keep the test process's descriptors (a test server's socket, a pipe).
        closeInheritedDescriptors(&actions)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A shell's defaults, whatever the test process ignores or blocks (SIGPIPE, above all).
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let script = "cd \(Self.quoted(directory)) || exit 125\n\(command)"
        let arguments: [String] = ["/bin/sh", "-c", script]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
        self.pid = pid
    }

    /// The exit status once the shell ended (128 + N after signal N), `nil` while it runs.
    func poll() -> Int32? {
        if let status { return status }
        var raw: Int32 = 0
        var reaped: pid_t
        repeat { reaped = waitpid(pid, &raw, WNOHANG) } while reaped == -1 && errno == EINTR
        if reaped == pid {
            status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        } else if reaped == -1 {
            status = -1   // not our child any more (reaped elsewhere): nothing to wait for
        }
        return status
    }

    /// Waits until the shell ends or `deadline` passes: its exit status, or `nil` at the deadline.
    func wait(until deadline: Date) -> Int32? {
        while true {
            if let status = poll() { return status }
            if Date() >= deadline { return nil }
            usleep(5_000)
        }
    }

    /// Waits until `condition` holds (`true`), the shell ends or `deadline` passes (then `condition`
    /// is asked once more).
    func wait(until deadline: Date, for condition: () -> Bool) -> Bool {
        while !condition() {
            if poll() != nil || Date() >= deadline { return condition() }
            usleep(10_000)
        }
        return true
    }

    /// Stops the command and whatever it started: SIGTERM to its process group, SIGKILL to what is
    /// left of the group after `grace` seconds; reaps the shell.
    func stop(grace: TimeInterval = 10) {
        guard groupIsAlive() else { _ = poll(); return }
        killpg(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        while groupIsAlive() && Date() < deadline {
            _ = poll()
            usleep(10_000)
        }
        if groupIsAlive() { killpg(pid, SIGKILL) }
        _ = wait(until: Date().addingTimeInterval(grace))
    }

    /// Whether a process of the group still runs. Zombies do not count: a child of the shell
    /// that outlived it is reaped by init, which may take its time.
    private func groupIsAlive() -> Bool {
        _ = poll()
        guard killpg(pid, 0) == 0 || errno == EPERM else { return false }
        #if os(Linux)
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return processes.contains { name in
            guard name.allSatisfy(\.isNumber),
                  let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            // After "pid (comm)": state, ppid, pgrp.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && fields[2] == "\(pid)" && fields[0] != "Z"
        }
        #else
        return true
        #endif
    }

    /// Runs `command` to its end on a thread of its own and returns its exit status (`nil` when it
    /// was stopped after `timeout` seconds) and the lines it printed.
    ///
    /// ```swift
    /// let run = await ShellJob.run("echo hello", in: directory, output: directory + "/out", timeout: 60)
    /// ```
    static func run(_ command: String, in directory: String, output: String, timeout: TimeInterval) async
        -> (status: Int32?, lines: [String]) {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                guard let job = try? ShellJob(command: command, directory: directory, outputPath: output) else {
                    continuation.resume(returning: (nil, ["(the shell could not be started)"]))
                    return
                }
                let status = job.wait(until: Date().addingTimeInterval(timeout))
                job.stop()
                continuation.resume(returning: (status, OutputFile.lines(output)))
            }
            thread.start()
        }
    }

    /// `text` in single quotes for the shell.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}

/// Reading the files that commands write.
enum OutputFile {
    /// The lines of the file at `path` as a terminal shows them: split at newlines, without a
    /// carriage return before a newline (HTTP headers) and without the empty text after a final
    /// newline (a last line without one is shown like the others); empty when there is no file.
    static func lines(_ path: String) -> [String] {
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return [] }
        // Split the bytes: in a String, "\r\n" is one Character, which a split at "\n" would miss.
        var lines = data.split(separator: 10, omittingEmptySubsequences: false).map { bytes in
            String(decoding: bytes.last == 13 ? bytes.dropLast() : bytes, as: UTF8.self)
        }
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    /// The number of complete lines (newlines) in the file at `path`; 0 when there is no file.
    static func lineCount(_ path: String) -> Int {
        guard let data = FileManager.default.contents(atPath: path) else { return 0 }
        return data.reduce(0) { $1 == 10 ? $0 + 1 : $0 }
    }
}
