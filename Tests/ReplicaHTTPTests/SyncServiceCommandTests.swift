import Foundation
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `replica sync --every` runs as a service: a line and a status line per sync, incremental syncs
/// from the mock server's feed (pushed by its events), and SIGTERM or SIGINT ends it with exit 0.
@Suite("replica sync --every as a service")
struct SyncServiceCommandTests {
    /// A child process's output lines as they arrive. `@unchecked Sendable`: guarded by `lock`.
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var text = ""
        func append(_ data: Data) { lock.withLock { text += String(decoding: data, as: UTF8.self) } }
        var all: [String] { lock.withLock { text.split(separator: "\n").map(String.init) } }
    }

    @Test("prints each sync and its status, syncs incrementally on push, and a signal ends it with exit 0",
          arguments: [SIGTERM, SIGINT])
    func service(_ signal: Int32) async throws {
        let schemaPath = packageRoot.appendingPathComponent("Schemas/people-live.json").path
        let schema = try Schema(contentsOf: URL(fileURLWithPath: schemaPath))
        let server = try await MockServer.start(resources: MockResource.resources(for: schema))
        let directory = try TemporaryDirectory("replica-sync-service")
        try await withTeardown {
            _ = try await server.load(json: try JSONValue(parsing: #"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]"#), into: "people")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ChildProcess.replica)
            process.arguments = ["sync", "--db", directory.path("people.sqlite"), "--schema", schemaPath, "--base-url", server.baseURL,
                                 "--every", "600", "/people"]
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            let lines = Lines(), errors = Lines()
            out.fileHandleForReading.readabilityHandler = { lines.append($0.availableData) }
            err.fileHandleForReading.readabilityHandler = { errors.append($0.availableData) }
            try process.run()
            defer { if process.isRunning { process.terminate() } }
            try await waitUntil("the first sync and its status", timeout: .seconds(20)) { lines.all.count >= 2 }
            #expect(lines.all[0] == "/people: 200, inserted 2, updated 0, deleted 0 (2 objects)")
            #expect(lines.all[1].wholeMatch(of: #/\/people: ok \d+\.\d s ago \(full, 1 page, 2 objects: \+2 ~0 -0 in \d+ ms\), next in 59\d\.\d s|\/people: ok \d+\.\d s ago \(full, 1 page, 2 objects: \+2 ~0 -0 in \d+ ms\), next in 600\.0 s/#) != nil,
                    "\(lines.all)")

            // The event stream connects: one incremental sync catches up with what it could not hear.
            try await waitUntil("the catch-up sync", timeout: .seconds(30)) { lines.all.count >= 4 }
            #expect(lines.all[2] == "/people: 200, inserted 0, updated 0, deleted 0 (0 objects)")
            #expect(lines.all[3].contains("(incremental, 1 page, 0 objects: +0 ~0 -0 in "), "\(lines.all)")
            // A write upstream: the event stream pushes an incremental sync long before the 600 s timer.
            try await waitUntil("the event stream", timeout: .seconds(30)) { server.changes.subscriberCount == 1 }
            _ = try await server.load(json: try JSONValue(parsing: #"[{"id": 3, "name": "cy"}]"#), into: "people")
            try await waitUntil("the pushed sync", timeout: .seconds(30)) { lines.all.count >= 6 }
            #expect(lines.all[4] == "/people: 200, inserted 1, updated 0, deleted 0 (1 objects)")
            #expect(lines.all[5].contains("(incremental, 1 page, 1 objects: +1 ~0 -0 in "), "\(lines.all)")

            let stopping = ContinuousClock.now
            kill(process.processIdentifier, signal)
            try await waitUntil("the exit", timeout: .seconds(30)) { !process.isRunning }
            // Far below the 600 s timer it would otherwise wait for; a loaded parallel run may take
            // seconds to start the process's handler and to poll its exit.
            #expect(stopping.duration(to: .now) < .seconds(20))
            #expect(process.terminationReason == .exit)
            #expect(process.terminationStatus == 0, "\(errors.all)")
            #expect(errors.all.isEmpty, "\(errors.all)")
        } teardown: {
            await server.stop()
            directory.remove()
        }
    }
}
