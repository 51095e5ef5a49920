import Foundation
import ReplicaTestSupport
import Testing

/// `replica query` on a database in a directory the user cannot write: SQLite must create the
/// WAL's shared-memory file beside it, and the error says so instead of "attempt to write a
/// readonly database". Run as the `postgres` user (root writes everywhere), which the PostgreSQL
/// tests need installed anyway.
@Suite("replica query in a read-only directory")
struct ReadOnlyDirectoryTests {
    static var runuser: String? {
        ["/usr/sbin/runuser", "/sbin/runuser"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static var hasPostgresUser: Bool {
        (try? String(contentsOfFile: "/etc/passwd", encoding: .utf8))?.split(separator: "\n").contains { $0.hasPrefix("postgres:") } ?? false
    }

    @Test("the error names the read-only directory and the file SQLite must create",
          .enabled(if: getuid() == 0 && runuser != nil && hasPostgresUser, "needs root, runuser and a postgres user"))
    func queryInReadOnlyDirectory() async throws {
        let directory = try TemporaryDirectory("replica-read-only-dir")
        defer { directory.remove() }
        let json = directory.url("people.json")
        try Data(#"[{"id": 1, "name": "ann"}]"#.utf8).write(to: json)
        let db = directory.path("people.sqlite")
        let imported = try await ReplicaTool.run(["import", "--db", db, "--schema", "Schemas/people.json", "--entity", "Person", json.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        // Readable by everyone, writable by root alone; the tool copied where the other user can run it.
        let tool = directory.path("replica")
        // Copied by a `cp` child, never through a file this process holds open for writing: a test
        // forking at that moment would inherit the descriptor, and executing the copy would fail
        // with "Text file busy" (ETXTBSY) for as long as that child runs.
        let copy = Process()
        copy.executableURL = URL(fileURLWithPath: "/bin/cp")
        copy.arguments = [ReplicaTool.productsDirectory.appendingPathComponent("replica").path, tool]
        try copy.run()
        copy.waitUntilExit()
        #expect(copy.terminationStatus == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tool)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: db)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.runuser))
        process.arguments = ["-u", "postgres", "--", tool, "query", "--db", db, "Person"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = Pipe()
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(stderr == "Error: \(db): cannot read the database: it is in WAL mode and SQLite must create people.sqlite-shm "
                + "beside it, but the directory \(directory.path) is read-only (for this user); make the directory writable, "
                + "or copy the file into one that is\n")
    }
}
