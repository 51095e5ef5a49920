import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster for the tests: `initdb` in a temporary folder (as the
/// `postgres` user when the tests run as root: the server refuses root), `pg_ctl` on a free
/// loopback port with `trust` authentication, one database per test, and stopped when the test
/// process ends (a watchdog stops it even when the process is killed).
///
/// A second cluster, ``startTLS()``, serves TLS with a certificate made at test time (see
/// `PostgresCluster+TLS.swift`); the first has no TLS at all.
package final class PostgresCluster: Sendable {
    package let port: Int
    package let directory: String
    package let binaries: String
    /// The TLS cluster's CA and server certificates; `nil` for a cluster without TLS.
    package let tls: TLSFiles?

    /// The cluster of this test process, started on first use.
    package static let shared: Result<PostgresCluster, ClusterError> = Result { try PostgresCluster(tls: false) }.mapError {
        ($0 as? ClusterError) ?? ClusterError(message: "\($0)")
    }

    package struct ClusterError: Error, CustomStringConvertible {
        let message: String
        package var description: String { message }
    }

    /// The cluster, or an error saying why it cannot start (a failing test, never a skipped one).
    /// The first call starts it (`initdb`, `pg_ctl`) on a thread of its own, as ``detached(_:)`` says why.
    ///
    /// ```swift
    /// let url = try await PostgresCluster.start().makeDatabase()
    /// ```
    package static func start() async throws -> PostgresCluster { try await detached { try shared.get() } }

    /// Runs `work` on a thread of its own while the calling task waits without holding one of the
    /// process's cooperative threads. There are as many of those as cores (two here): `initdb`,
    /// `pg_ctl` or `psql` waited for on them would stall every other test's tasks for as long,
    /// the handlers of their in-process servers included, whose clients then wait on their
    /// request timeouts.
    ///
    /// ```swift
    /// let output = try await PostgresCluster.detached { try PostgresCluster.run("/bin/true", []) }
    /// ```
    package static func detached<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    private static let counter = Counter()

    /// Starts a cluster: without TLS, or with `ssl=on` and a certificate made by ``TLSFiles/make(in:)``.
    init(tls withTLS: Bool = false) throws {
        binaries = try Self.findBinaries()
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("replica-pg-\(getpid())-\(UUID().uuidString.prefix(8))").path
        directory = base
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        tls = withTLS ? try TLSFiles.make(in: base + "/tls") : nil
        let sslOptions = tls.map { " -c ssl=on -c ssl_cert_file=\($0.serverCertificate) -c ssl_key_file=\($0.serverKey)" } ?? ""
        let asPostgres = getuid() == 0
        if asPostgres {
            try Self.run("/bin/chown", ["-R", "postgres", base])
        }
        try Self.run(binaries + "/initdb", ["-D", base + "/data", "-U", "postgres", "--auth=trust", "--encoding=UTF8",
                                            "--locale=C.UTF-8", "--no-sync"], asPostgres: asPostgres)
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try Self.freePort()
            do {
                try Self.run(binaries + "/pg_ctl", ["-D", base + "/data", "-l", base + "/server.log", "-w", "-t", "60", "-o",
                                                    "-c listen_addresses=127.0.0.1 -p \(port) -k \(base) -c fsync=off "
                                                    + "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
                                                    + sslOptions,
                                                    "start"], asPostgres: asPostgres, outputFile: base + "/pg_ctl.out")
                self.port = port
                Self.watch(binaries: binaries, data: base + "/data", directory: base, asPostgres: asPostgres)
                Self.running.add(binaries: binaries, directory: base)
                atexit { PostgresCluster.stopAtExit() }
                return
            } catch {
                lastError = error
            }
        }
        throw lastError ?? ClusterError(message: "cannot start PostgreSQL")
    }

    /// A new empty database; its URL. `psql` runs on a thread of its own (see ``detached(_:)``).
    package func makeDatabase() async throws -> String {
        let name = "replica_test_\(getpid())_\(Self.counter.next())"
        _ = try await Self.detached { [binaries, port] in
            try Self.run(binaries + "/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-q", "-v", "ON_ERROR_STOP=1",
                                              "-c", "CREATE DATABASE \(name)", "postgres"])
        }
        return "postgres://postgres@127.0.0.1:\(port)/\(name)"
    }

    /// Runs SQL with psql; returns its unaligned output.
    package func psql(_ url: String, _ sql: String) throws -> String {
        try Self.run(binaries + "/psql", ["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql, url])
    }

    /// The clusters this process started, stopped at its exit.
    private static let running = Running()

    /// Stops every cluster this process started (once each, however many `atexit` handlers call it).
    static func stopAtExit() {
        for (binaries, directory) in running.takeAll() {
            _ = try? run(binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "stop"],
                         asPostgres: getuid() == 0)
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// Stops the server and removes its folder once this process is gone, however it ended.
    private static func watch(binaries: String, data: String, directory: String, asPostgres: Bool) {
        let stop = "\(binaries)/pg_ctl -D '\(data)' -m immediate -w stop"
        let script = "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; "
            + (asPostgres ? "runuser -u postgres -- \(stop)" : stop) + " >/dev/null 2>&1; rm -rf '\(directory)'"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }

    static func findBinaries() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) })
        where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(directory)/initdb") {
            return String(directory)
        }
        throw ClusterError(message: "PostgreSQL's server is not installed (initdb not found); "
                           + "install Debian's postgresql package (.ci/run does)")
    }

    package static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClusterError(message: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw ClusterError(message: "bind() failed") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw ClusterError(message: "getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs a command to its end, its output in a file (a server started by `pg_ctl` inherits
    /// the output: a pipe would never reach its end). `posix_spawn` and `waitpid`, so no run
    /// loop is involved.
    @discardableResult
    package static func run(_ executable: String, _ arguments: [String], asPostgres: Bool = false,
                    outputFile: String? = nil) throws -> String {
        let command = asPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--", executable] + arguments : [executable] + arguments
        let output = outputFile ?? FileManager.default.temporaryDirectory.appendingPathComponent("replica-cmd-\(UUID().uuidString)").path
        defer { if outputFile == nil { try? FileManager.default.removeItem(atPath: output) } }
        let pid = try spawn(command, outputFile: output)
        let status = wait(pid)
        let text = (FileManager.default.contents(atPath: output)).flatMap { String(data: $0, encoding: .utf8) } ?? ""
        // Exited normally with status 0.
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw ClusterError(message: "\(command.joined(separator: " ")) failed: \(text)")
        }
        return text
    }

    /// Starts `command` (its first element the executable's path), standard output and error
    /// going to `outputFile`; its pid, for ``wait(_:)``.
    package static func spawn(_ command: [String], outputFile: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // `pg_ctl start` leaves a server running for the rest of the test process: it must not
        // keep other tests' pipes and sockets open (their readers and `Process` would wait forever).
        closeInheritedDescriptors(&actions)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw ClusterError(message: "cannot run \(command[0]): error \(spawned)") }
        return pid
    }

    /// Waits for a spawned process to end; its wait status.
    @discardableResult
    package static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    /// `@unchecked Sendable`: `clusters` is read and written under `lock` only.
    final class Running: @unchecked Sendable {
        private let lock = NSLock()
        private var clusters: [(binaries: String, directory: String)] = []
        func add(binaries: String, directory: String) {
            lock.lock()
            defer { lock.unlock() }
            clusters.append((binaries, directory))
        }
        func takeAll() -> [(binaries: String, directory: String)] {
            lock.lock()
            defer { lock.unlock() }
            defer { clusters = [] }
            return clusters
        }
    }

    /// `@unchecked Sendable`: `value` is read and written under `lock` only.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func next() -> Int {
            lock.lock()
            defer { lock.unlock() }
            value += 1
            return value
        }
    }
}
