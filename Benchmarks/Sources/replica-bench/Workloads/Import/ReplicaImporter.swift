import Foundation
import Replica

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Replica end to end, through the public API, JSON bytes to committed rows.
enum ReplicaImporter {
    /// How the JSON reaches Replica.
    enum Mode: String, Codable, Sendable {
        /// `importFile(path, into: .route(.get, route))`: the route deletes stale rows.
        case route
        /// `importFile(path, into: .entity(entity))`: no stale deletion.
        case entity
        /// `importFile("-", into: .route(...))` with standard input a pipe that `cat FILE` writes
        /// into, as in `cat FILE | replica import --route ROUTE -`.
        case stdin
        /// `sync(.get, route, chunks:)` with an `AsyncStream` of 64 KiB chunks read from the file:
        /// written as it arrives, unless a pause longer than `streamingPatience` makes it stage.
        case chunks
        /// `validateFile(path, into: .route(...))`: parse and map, no SQLite.
        case parse
    }

    /// The benchmark schema: one entity, eight attributes, snake_case JSON keys, and the route
    /// `GET /items` that deletes stale rows.
    static func schema() throws -> Schema {
        try Schema(name: "bench", keyConvention: .snakeCase,
                   routes: [Route(.get, "/items", target: .entity("Item"), stale: .delete)]) {
            Entity("Item", tableName: "items") {
                Attribute("id", .integer); Attribute("name", .string); Attribute("email", .string); Attribute("city", .string)
                Attribute("age", .integer); Attribute("score", .double); Attribute("active", .bool); Attribute("createdAt", .date)
            }
        }
    }

    /// Runs each pass's file into a new store at `database`; only the import call is timed
    /// (for `stdin`, from before the call to its return, `cat` running beside it).
    ///
    /// - Throws: Replica's errors, or ``BenchmarkError`` when `cat` cannot be started.
    static func run(shape: ImportShape, mode: Mode, database: String,
                    passes: [(key: String, file: String)]) async throws -> WorkerReply {
        let store = try Store(path: database, schema: try shape.schema())
        let engine = try SQLiteReplica(store: store)
        let route = ImportTarget.route(.get, shape.route)
        var reply = WorkerReply()
        let clock = ContinuousClock()
        for pass in passes {
            var cat: pid_t = 0
            if mode == .stdin { cat = try pipeStandardInput(from: pass.file) }
            let start = clock.now
            let result: SyncResult
            switch mode {
            case .route: result = try await engine.importFile(pass.file, into: route)
            case .entity: result = try await engine.importFile(pass.file, into: .entity(shape.entity))
            case .stdin: result = try await engine.importFile("-", into: route)
            case .chunks: result = try await engine.sync(.get, shape.route, chunks: fileChunks(pass.file))
            case .parse: result = try await engine.validateFile(pass.file, into: route)
            }
            reply.seconds[pass.key] = start.duration(to: clock.now).seconds
            if mode == .stdin { try reap(cat) }
            let changes = result.changes[shape.entity]
            let inserted = changes?.inserted.count ?? 0, updated = changes?.updated.count ?? 0
            let deleted = changes?.deleted.count ?? 0
            reply.counts["\(pass.key).changes"] = inserted + updated + deleted
            reply.counts["\(pass.key).inserted"] = inserted
            reply.counts["\(pass.key).updated"] = updated
            reply.counts["\(pass.key).deleted"] = deleted
            reply.counts["\(pass.key).objects"] = result.objectCount
            reply.counts["\(pass.key).bytes"] = Int(result.byteCount)
            reply.counts["\(pass.key).stagedAfterPause"] = result.stagedAfterPause ? 1 : 0
        }
        return reply
    }

    /// The file as an `AsyncStream` of 64 KiB chunks, read as the consumer asks for them.
    static func fileChunks(_ path: String) throws -> AsyncStream<[UInt8]> {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw BenchmarkError("cannot open \(path)") }
        return AsyncStream(unfolding: {
            guard let data = try? handle.read(upToCount: 1 << 16), !data.isEmpty else {
                try? handle.close()
                return nil
            }
            return [UInt8](data)
        })
    }

    /// Makes standard input (descriptor 0) the read end of a pipe that a new `cat path` writes
    /// into, and returns `cat`'s process id.
    private static func pipeStandardInput(from path: String) throws -> pid_t {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw BenchmarkError("pipe: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        posix_spawn_file_actions_addclose(&actions, ends[1])
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("cat"), strdup(path), nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, "cat", &actions, nil, argv, environ)
        close(ends[1])
        guard spawned == 0 else {
            close(ends[0])
            throw BenchmarkError("cannot start cat: \(String(cString: strerror(spawned)))")
        }
        guard dup2(ends[0], 0) == 0 else { throw BenchmarkError("dup2: \(String(cString: strerror(errno)))") }
        close(ends[0])
        return pid
    }

    /// Waits for `cat` and checks that it succeeded.
    private static func reap(_ pid: pid_t) throws {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw BenchmarkError("waitpid: \(String(cString: strerror(errno)))") }
        }
        guard status == 0 else { throw BenchmarkError("cat exited with status \(status)") }
    }
}
