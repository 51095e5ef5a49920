import Foundation
#if canImport(Glibc)
import Glibc
#endif
import GRDB
import Replica
import Testing

@Suite("replica watch")
struct WatchCommandTests {
    static func scratch() throws -> (URL, String) {
        let (directory, path) = try QueryCommandTests.makeStore()
        return (directory, path)
    }

    static func importPosts(_ db: String, _ json: String) throws {
        let output = try ReplicaTool.run(["import", "--db", db, "--route", "/users/1/posts", "-"], stdin: Data(json.utf8))
        #expect(output.status == 0, "\(output.stderr)")
    }

    @Test("without a terminal it prints the initial result and each diff as JSON lines, for changes by other processes")
    func jsonLines() throws {
        let (directory, db) = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.importPosts(db, #"{"posts": [{"id": 10, "title": "Hello"}]}"#)
        let watch = Process()
        watch.executableURL = ReplicaTool.productsDirectory.appendingPathComponent("replica")
        watch.arguments = ["watch", "--db", db, "Post", "--sort", "-id", "--poll", "20", "--duration", "60"]
        let out = Pipe()
        watch.standardOutput = out
        watch.standardError = FileHandle.nullDevice
        try watch.run()
        defer { if watch.isRunning { watch.terminate() }; watch.waitUntilExit() }
        let lines = LineReader(out.fileHandleForReading)
        #expect(lines.next() == #"{"event":"snapshot","count":1,"keys":[10]}"#)
        try Self.importPosts(db, #"{"posts": [{"id": 20, "title": "New"}, {"id": 10, "title": "Hello again"}]}"#)
        #expect(lines.next() == #"{"event":"diff","count":2,"inserted":[20],"updated":[10],"moved":[],"deleted":[]}"#)
        try Self.importPosts(db, #"{"posts": [{"id": 20, "title": "New"}]}"#)
        #expect(lines.next() == #"{"event":"diff","count":1,"inserted":[],"updated":[],"moved":[],"deleted":[10]}"#)
    }

    static let tmux: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test("in a real terminal (tmux) it draws the rows, shows rows written by another process, and quits on q",
          .enabled(if: WatchCommandTests.tmux != nil, "tmux is not installed (.ci/run installs it)"))
    func terminal() throws {
        let tmux = try #require(Self.tmux)
        let (directory, db) = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.importPosts(db, #"{"posts": [{"id": 10, "title": "Hello", "published": true}]}"#)
        let session = "replica-watch-\(UUID().uuidString.prefix(8))"
        let socket = directory.appendingPathComponent("tmux.sock").path
        // tmux runs through posix_spawn and waitpid, its output in a file: the tmux server the first call
        // starts keeps the descriptors Foundation's Process watches, so Process would never see it exit.
        let capture = directory.appendingPathComponent("tmux.out").path
        func run(_ arguments: [String]) throws -> String {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            // Close every other descriptor in the child: the tmux server must not keep test servers' sockets open.
            closeInheritedDescriptors(&actions)
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, capture, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            let argv = ([tmux, "-S", socket] + arguments).map { strdup($0) } + [nil]
            defer { for pointer in argv { free(pointer) } }
            var pid: pid_t = 0
            guard posix_spawn(&pid, tmux, &actions, nil, argv, environ) == 0 else { return "" }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            return (try? String(contentsOfFile: capture, encoding: .utf8)) ?? ""
        }
        let replica = ReplicaTool.productsDirectory.appendingPathComponent("replica").path
        _ = try run(["new-session", "-d", "-s", session, "-x", "100", "-y", "20",
                     "\(replica) watch --db \(db) Post --sort -id --section published --poll 20"])
        defer { _ = try? run(["kill-server"]) }
        /// Waits (bounded) until the pane shows `text`, returning the pane.
        func pane(showing text: String) throws -> String {
            var screen = ""
            for _ in 0..<200 {
                screen = try run(["capture-pane", "-p", "-t", session])
                if screen.contains(text) { return screen }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return screen
        }
        let first = try pane(showing: "Hello")
        #expect(first.contains("replica watch Post sort -id by published"))
        #expect(first.contains("1 row · 0 updates"))
        #expect(first.contains("── true"))
        #expect(first.contains("10  1       Hello"))
        try Self.importPosts(db, #"{"posts": [{"id": 10, "title": "Hello", "published": true}, {"id": 21, "title": "Fresh post"}]}"#)
        let second = try pane(showing: "Fresh post")
        #expect(second.contains("2 rows · 1 updates"))
        #expect(second.contains("── false"))
        #expect(second.contains("21  1       Fresh post"))
        // Highlighted as inserted: black on green.
        let colored = try run(["capture-pane", "-p", "-e", "-t", session])
        #expect(colored.contains("\u{1B}[30m\u{1B}[42m21  1       Fresh post") || colored.contains("\u{1B}[30;42m21"), "\(colored)")
        _ = try run(["send-keys", "-t", session, "q"])
        var alive = true
        for _ in 0..<100 where alive {
            alive = try run(["list-sessions"]).contains(session)
            if alive { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(!alive, "watch did not quit on q")
    }
}

/// Reads lines from a pipe, blocking. Not thread-safe; used by one test at a time.
final class LineReader {
    let handle: FileHandle
    var buffer: [UInt8] = []

    init(_ handle: FileHandle) { self.handle = handle }

    func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            // `availableData` returns what the pipe holds now; `read(upToCount:)` would wait for a full count.
            let chunk = handle.availableData
            guard !chunk.isEmpty else { return nil }
            buffer += chunk
        }
    }
}

/// Adds "close every descriptor from 3 up" to `actions` (glibc's `posix_spawn_file_actions_addclosefrom_np`,
/// looked up at run time), so that a child never keeps a test server's listening socket open.
func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return }
    _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
}
