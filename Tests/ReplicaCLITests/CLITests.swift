import Foundation
import ReplicaTestSupport
import Testing

/// Runs the built `replica` executable, as swift-argument-parser's examples are tested.
enum ReplicaTool {
    /// The directory holding the built products (the test bundle sits next to `replica`).
    static let productsDirectory: URL = {
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent())
        }
        candidates.append(packageRoot.appendingPathComponent(".build/debug"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("replica").path) }
            ?? packageRoot.appendingPathComponent(".build/debug")
    }()

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
        /// `true` when the process died of a signal (a trap) instead of exiting.
        var signaled = false
    }

    /// Runs `replica` with `arguments` in the package root and waits for it on a thread of its
    /// own, so that tests running meanwhile keep Swift's cooperative threads.
    static func run(_ arguments: [String], stdin: Data? = nil) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try runBlocking(arguments, stdin: stdin) }) }
            thread.start()
        }
    }

    private static func runBlocking(_ arguments: [String], stdin: Data?) throws -> Output {
        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent("replica")
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        // Read stderr on another thread so that a full pipe never blocks the child.
        let errBox = DataBox()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { errBox.data = err.fileHandleForReading.readDataToEndOfFile() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errBox.data, as: UTF8.self),
                      signaled: process.terminationReason == .uncaughtSignal)
    }
}

/// Written by one reader thread, read after `DispatchGroup.wait()`, which orders the accesses.
final class DataBox: @unchecked Sendable {
    var data = Data()
}

@Suite("replica schema check")
struct SchemaCheckCommandTests {
    @Test("the example schemas pass and their entities are listed")
    func examplesPass() async throws {
        let output = try await ReplicaTool.run(["schema", "check", "Schemas/blog.json", "Schemas/people.json"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr == "")
        #expect(output.stdout.contains("Schemas/blog.json: schema 'blog' version 1, 3 entities, 8 routes, keys snake_case"))
        #expect(output.stdout.contains("  User (table users, primary key userID, JSON id user_id)"))
        #expect(output.stdout.contains("    userID     integer  not null"))
        #expect(output.stdout.contains("    friends    json     null"))
        #expect(output.stdout.contains("  route GET /bootstrap -> MANY"))
        #expect(output.stdout.contains("Schemas/people.json: schema 'people' version 1, 2 entities, 5 routes, keys camelCase"))
    }

    @Test("a composite primary key is listed with its parts; its routes show their scope and the one-object route")
    func compositeKey() async throws {
        let output = try await ReplicaTool.run(["schema", "check", "Schemas/git-refs.json"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout == """
            Schemas/git-refs.json: schema 'git-refs' version 1, 1 entity, 2 routes, keys snake_case
              Ref (table refs, composite primary key (owner, repo, ref))
                owner   string   not null
                repo    string   not null
                ref     string   not null
                nodeID  string   null
                url     string   null
                sha     string   not null  json object.sha
                type    string   null  json object.type
              route GET /repos/:owner/:repo/git/refs -> Ref (scope: owner = :owner and repo = :repo; stale rows deleted)
              route GET /repos/:owner/:repo/git/refs/:ref -> Ref (one object)

            """)
    }

    @Test("the schema's top-level headers are listed after its routes")
    func headers() async throws {
        let directory = try TemporaryDirectory("replica-cli")
        defer { directory.remove() }
        let file = directory.url("agent.json")
        try Data((#"{"name": "t", "headers": {"User-Agent": "t-sync/1", "Accept": "application/vnd.t+json"}, "#
                  + #""entities": {"User": {"attributes": {"id": "integer"}}}, "routes": [{"path": "/users", "target": "User"}]}"#)
            .utf8).write(to: file)
        let output = try await ReplicaTool.run(["schema", "check", file.path])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout == """
            \(file.path): schema 't' version 1, 1 entity, 1 route, keys snake_case
              User (table users, primary key id, JSON id id)
                id  integer  not null
              route GET /users -> User (scope: all rows)
              header Accept: application/vnd.t+json
              header User-Agent: t-sync/1

            """)
    }

    @Test("each entity's unmapped-key policy and ignored patterns are listed when not the default; keep shows its column")
    func unmappedKeys() async throws {
        let directory = try TemporaryDirectory("replica-cli")
        defer { directory.remove() }
        let file = directory.url("github.json")
        try Data(GitHubFixture.schema(issueKeys: "keep", ignoreKeys: ["node_id"]).utf8).write(to: file)
        let output = try await ReplicaTool.run(["schema", "check", file.path])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout == """
            \(file.path): schema 'github' version 1, 2 entities, 2 routes, keys snake_case
              Issue (table issues, primary key id, JSON id id)
                id        integer  not null
                number    integer  null
                title     string   null
                state     string   null
                userID    integer  null
                unmapped  json     null  unmapped keys
                user -> User (to-one via userID)
                unmapped keys: keep (column unmapped); ignored: node_id
              User (table users, primary key id, JSON id id)
                id     integer  not null
                login  string   null
                type   string   null
                unmapped keys: warn; ignored: node_id
              route GET /repos/:owner/:repo/issues -> Issue (scope: all rows)
              route GET /users -> User (scope: all rows)

            """, "\(output.stdout)")
    }

    @Test("a wrong type exits non-zero with one line naming the JSON pointer")
    func wrongType() async throws {
        let directory = try TemporaryDirectory("replica-cli")
        defer { directory.remove() }
        let file = directory.url("bad.json")
        try Data(#"{"name": "t", "entities": {"User": {"attributes": {"id": "integer", "name": {"type": "strng"}}}}}"#.utf8)
            .write(to: file)
        let output = try await ReplicaTool.run(["schema", "check", file.path])
        #expect(output.status != 0)
        #expect(output.stdout == "")
        #expect(output.stderr == "Error: \(file.path): /entities/User/attributes/name/type: unknown type 'strng' "
                + "(expected one of: string, integer, double, bool, date, data, json)\n")
    }

    @Test("a key given twice in one object exits 1 with one line naming its pointer and both offsets; other files are checked")
    func duplicateKey() async throws {
        let directory = try TemporaryDirectory("replica-cli")
        defer { directory.remove() }
        let file = directory.url("twice.json")
        try Data(#"{"name": "shop", "entities": {"User": {"attributes": {"id": "integer"}}, "User": {"attributes": {"id": "string"}}}}"#.utf8)
            .write(to: file)
        let output = try await ReplicaTool.run(["schema", "check", file.path, "Schemas/people.json"])
        #expect(output.status == 1)
        #expect(output.stdout.hasPrefix("Schemas/people.json: schema 'people' version 1, 2 entities, 5 routes, keys camelCase\n"))
        #expect(output.stderr == "Error: \(file.path): /entities/User: key 'User' is given twice in one object: "
                + "at byte 30 (line 1, column 31) and again at byte 73 (line 1, column 74)\n")
    }

    @Test("every subcommand has --help", arguments: [["--help"], ["schema", "--help"], ["schema", "check", "--help"], ["query", "--help"]])
    func help(arguments: [String]) async throws {
        let output = try await ReplicaTool.run(arguments)
        #expect(output.status == 0)
        #expect(output.stdout.contains("USAGE:"))
    }
}
