import Foundation
import NIOConcurrencyHelpers
import ReplicaServer

/// The server side of `mock-server`, run in its own child process so that its peak memory is the
/// server's alone.
///
/// It starts `MockServer` with an `SQLiteMockStore` on 127.0.0.1, port 0, writes the bound port to
/// a file (atomically, so the parent never reads half a number), serves until the parent creates the
/// stop file or its lifetime runs out, stops, and replies with the server's own tally of answered
/// requests by status and the row count read straight from the store.
///
/// ```swift
/// let reply = try await MockServerHost.run(directory: dir, portFile: port, stopFile: stop, lifetime: .seconds(80))
/// reply.counts["rows"]   // objects in the SQLite file after the run
/// ```
enum MockServerHost {
    /// The resource every client works on: `items`, auto-incrementing `id`.
    static let resource = MockResource("items", properties: [
        MockProperty("name", .string),
        MockProperty("owner", .integer),
        MockProperty("version", .integer),
        MockProperty("score", .double),
        MockProperty("active", .bool),
    ])

    /// Serves until `stopFile` exists or `lifetime` has passed, then reports.
    ///
    /// - Parameters:
    ///   - directory: where the SQLite file goes (created; removed afterwards).
    ///   - portFile: the file that receives the bound port.
    ///   - stopFile: the file whose appearance stops the server.
    ///   - lifetime: the longest the server runs, whatever the parent does.
    /// - Returns: counts `rows`, `requests`, `status.NNN` per answered status, and `timedOut` (1 when
    ///   the lifetime ran out before the stop file appeared).
    /// - Throws: When the store or the server cannot start, or the store cannot be counted.
    static func run(directory: String, portFile: String, stopFile: String, lifetime: Duration) async throws -> WorkerReply {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteMockStore(path: (directory as NSString).appendingPathComponent("mock.sqlite"))
        let statuses = NIOLockedValueBox<[Int: Int]>([:])
        let options = MockServerOptions(host: "127.0.0.1", port: 0, store: store, requestLog: { entry in
            statuses.withLockedValue { $0[entry.status, default: 0] += 1 }
        })
        let server = try await MockServer.start(resources: [resource], options: options)
        let clock = ContinuousClock()
        let deadline = clock.now + lifetime
        var timedOut = false
        do {
            try Data(String(server.port).utf8).write(to: URL(fileURLWithPath: portFile), options: .atomic)
            while !FileManager.default.fileExists(atPath: stopFile) {
                if clock.now >= deadline {
                    timedOut = true
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()

        var reply = WorkerReply()
        reply.counts["rows"] = try await store.count(resource, query: MockQuery())
        let answered = statuses.withLockedValue { $0 }
        for (status, count) in answered {
            reply.counts["status.\(status)"] = count
        }
        reply.counts["requests"] = answered.values.reduce(0, +)
        reply.counts["timedOut"] = timedOut ? 1 : 0
        return reply
    }
}
