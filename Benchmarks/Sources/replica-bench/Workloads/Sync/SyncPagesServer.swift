import Dispatch
import Foundation
import NIOConcurrencyHelpers
import Replica
import ReplicaServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `server` child of `sync-pages`: the mock server (memory store) with the first file's
/// people, on 127.0.0.1 port 0, driven through files in a control folder:
/// it writes `pid` and `port`; on `load-second` it loads the second file and writes `load-second.done`;
/// it stops when `stop` appears (or after 30 minutes).
enum SyncPagesServer {
    static func run(_ request: WorkerRequest) async throws -> WorkerReply {
        let control = try request.require("control")
        let schema = try Schema(contentsOf: URL(fileURLWithPath: try request.require("schema")))
        let server = try await MockServer.start(resources: MockResource.resources(for: schema),
                                                options: MockServerOptions(host: "127.0.0.1", port: 0))
        _ = try await server.load(file: try request.require("first"), into: "people")
        if let page = request.parameters["stall-page"] {
            // A server that stalls mid-page: page `page`'s body stops for a second after its first bytes.
            server.setConditions(MockConditions(faults: [
                MockFault(.stallBody(afterBytes: 4096, duration: .seconds(1)), method: "GET", path: "/people", query: ["_page": page]),
            ]))
        }
        try writePID(control)
        try Data(String(server.port).utf8).write(to: URL(fileURLWithPath: path(control, "port")), options: .atomic)
        let deadline = ContinuousClock.now + .seconds(1800)
        var loadedSecond = false
        while !FileManager.default.fileExists(atPath: path(control, "stop")) && ContinuousClock.now < deadline {
            if !loadedSecond && FileManager.default.fileExists(atPath: path(control, "load-second")) {
                _ = try await server.load(file: try request.require("second"), into: "people")
                _ = FileManager.default.createFile(atPath: path(control, "load-second.done"), contents: nil)
                loadedSecond = true
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        await server.stop()
        return WorkerReply()
    }

    /// Starts the server child of `workload` with `request`, waits for its port, runs `body` with
    /// it, then stops the server (the `stop` file in the request's control folder).
    static func serving<T>(workload: String, request: WorkerRequest, context: BenchmarkContext,
                           _ body: (Int) async throws -> T) async throws -> T {
        let control = try request.require("control")
        let exited = NIOLockedValueBox(false)
        let server = Task {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(reply: WorkerReply, peakMemory: Int), any Error>) in
                DispatchQueue.global().async {
                    let result = Result { try context.runWorker(workload: workload, request: request) }
                    exited.withLockedValue { $0 = true }
                    continuation.resume(with: result)
                }
            }
        }
        defer { _ = FileManager.default.createFile(atPath: path(control, "stop"), contents: nil) }
        let deadline = ContinuousClock.now + .seconds(600)
        var port: Int?
        while port == nil {
            port = (try? String(contentsOfFile: path(control, "port"), encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            if port != nil { break }
            if exited.withLockedValue({ $0 }) {
                _ = try await server.value
                throw BenchmarkError("\(workload): the server exited before listening")
            }
            guard ContinuousClock.now < deadline else { throw BenchmarkError("\(workload): the server did not listen within 600 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
        let result = try await body(port ?? 0)
        _ = FileManager.default.createFile(atPath: path(control, "stop"), contents: nil)
        _ = try await server.value
        return result
    }

    /// Writes this process's id to `pid` in the control folder, for the client child to read the
    /// server's CPU time during each pass (``upstreamPID(_:)``).
    static func writePID(_ control: String) throws {
        try Data(String(getpid()).utf8).write(to: URL(fileURLWithPath: path(control, "pid")), options: .atomic)
    }

    /// The server child's process id, as it wrote it before its port.
    static func upstreamPID(_ control: String) -> Int32? {
        (try? String(contentsOfFile: path(control, "pid"), encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Asks the server child for `command` and waits until it is done.
    static func ask(_ control: String, _ command: String) async throws {
        _ = FileManager.default.createFile(atPath: path(control, command), contents: nil)
        let deadline = ContinuousClock.now + .seconds(600)
        while !FileManager.default.fileExists(atPath: path(control, command + ".done")) {
            guard ContinuousClock.now < deadline else { throw BenchmarkError("sync-pages: the server did not do '\(command)'") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private static func path(_ control: String, _ name: String) -> String {
        (control as NSString).appendingPathComponent(name)
    }
}

/// Deterministic people (`Schemas/people.json`'s `Person`): revision 1 changes every
/// hundredth person (name and number of kids), so 1 % of the rows, spread over every page.
struct PeopleData: Sendable {
    let count: Int
    let revision: Int

    private static let names = ["Ana", "João", "Zoë", "Liam", "Sofía", "Søren", "Priya", "Kwame", "Chloé", "Mei"]

    /// The person at `index` (from 0) as one JSON object.
    func object(_ index: Int) -> String {
        var random = SplitMix64(seed: 0x9E0_0000 &+ UInt64(index))
        let a = random.next()
        let changed = revision == 1 && index % 100 == 0
        let name = Self.names[Int(a % UInt64(Self.names.count))] + " \(index + 1)" + (changed ? " (moved)" : "")
        let kids = Int((a >> 8) % 5) + (changed ? 1 : 0)
        let kilometers = Double((a >> 16) % 100_000) / 8
        return #"{"id": \#(index + 1), "name": "\#(name)", "numberOfKids": \#(kids), "kilometersWalked": \#(kilometers)}"#
    }

    /// The people from index `start` up to `end` (excluded) as one JSON array, one object a
    /// line: a page as the static upstream serves it.
    func pageJSON(from start: Int, to end: Int) -> [UInt8] {
        var text = "[\n"
        for index in start..<end {
            text += object(index)
            text += index + 1 < end ? ",\n" : "\n"
        }
        text += "]\n"
        return Array(text.utf8)
    }

    /// Writes the people as one JSON array, one object a line.
    ///
    /// - Returns: The file size in bytes.
    @discardableResult
    func writeJSON(to path: String) throws -> Int {
        guard let file = fopen(path, "w") else {
            throw BenchmarkError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var total = 0
        var buffer = "[\n"
        for index in 0..<count {
            buffer += object(index)
            buffer += index + 1 < count ? ",\n" : "\n]\n"
            if buffer.utf8.count > 1 << 20 || index + 1 == count {
                total += buffer.utf8.count
                guard fputs(buffer, file) >= 0 else { throw BenchmarkError("cannot write \(path)") }
                buffer = ""
            }
        }
        return total
    }
}
