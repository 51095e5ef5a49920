import Foundation
import ReplicaTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A tmux session on a private socket, driving a command in a real terminal for tests.
///
/// tmux runs through posix_spawn and waitpid, its output in a file: the tmux server the first call
/// starts keeps the descriptors Foundation's Process watches, so Process would never see it exit.
struct TmuxSession {
    /// The tmux executable, or `nil` when it is not installed (.ci/run installs it).
    static let executable: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    let executable: String
    let name: String
    let socket: String
    let capture: String

    /// Starts `command` in a detached session of `columns` × `rows`; files go in `directory`.
    init(executable: String, directory: URL, command: String, columns: Int, rows: Int) throws {
        self.executable = executable
        name = "replica-\(UUID().uuidString.prefix(8))"
        socket = directory.appendingPathComponent("tmux.sock").path
        capture = directory.appendingPathComponent("tmux.out").path
        _ = run(["new-session", "-d", "-s", name, "-x", String(columns), "-y", String(rows), command])
    }

    /// Runs a tmux command and returns what it printed.
    @discardableResult
    func run(_ arguments: [String]) -> String {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Close every other descriptor in the child: the tmux server must not keep test servers' sockets open.
        closeInheritedDescriptors(&actions)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, capture, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable, "-S", socket] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else { return "" }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (try? String(contentsOfFile: capture, encoding: .utf8)) ?? ""
    }

    /// The pane's text; with `colors`, with its escape sequences.
    func pane(colors: Bool = false) -> String {
        run(["capture-pane", "-p"] + (colors ? ["-e"] : []) + ["-t", name])
    }

    /// Waits (up to `timeout` seconds) until the pane (with its colour escapes when `colors`)
    /// satisfies `condition`, and returns it. It sleeps between looks without holding a thread:
    /// a wait of seconds on one of Swift's two cooperative threads stalls every test running beside it.
    func pane(colors: Bool = false, within timeout: Double = 10, until condition: (String) -> Bool) async -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var screen = pane(colors: colors)
        while !condition(screen) && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(50))
            screen = pane(colors: colors)
        }
        return screen
    }

    /// Waits until the pane shows `text`, and returns it.
    func pane(showing text: String, within timeout: Double = 10) async -> String {
        await pane(within: timeout) { $0.contains(text) }
    }

    func sendKeys(_ keys: String) { run(["send-keys", "-t", name, keys]) }

    /// Waits (up to `timeout` seconds) for the session's command to end; `true` when it did.
    func waitForExit(within timeout: Double = 5) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while run(["list-sessions"]).contains(name) {
            if Date() >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    /// Presses `q` and waits for the command to end; `true` when it did.
    func quit(within timeout: Double = 5) async -> Bool {
        sendKeys("q")
        return await waitForExit(within: timeout)
    }

    func kill() { run(["kill-server"]) }
}

extension Trait where Self == ConditionTrait {
    /// Runs a test only where tmux is installed (`.ci/run` installs it).
    static var tmuxInstalled: Self {
        .enabled(if: TmuxSession.executable != nil, "tmux is not installed (.ci/run installs it)")
    }
}
