import Foundation
import Replica

/// Replica end to end: `SyncEngine.importFile`, JSON bytes from the file to committed rows.
enum ReplicaImporter {
    /// The benchmark schema: one entity, eight attributes, snake_case JSON keys.
    static func schema() throws -> Schema {
        try Schema(name: "bench", keyConvention: .snakeCase) {
            Entity("Item", tableName: "items") {
                Attribute("id", .integer); Attribute("name", .string); Attribute("email", .string); Attribute("city", .string)
                Attribute("age", .integer); Attribute("score", .double); Attribute("active", .bool); Attribute("createdAt", .date)
            }
        }
    }

    /// Imports each pass's file into a new store at `database`; only `importFile` is timed.
    ///
    /// - Throws: Replica's errors.
    static func run(database: String, passes: [(key: String, file: String)]) async throws -> WorkerReply {
        let store = try Store(path: database, schema: try schema())
        let engine = try SyncEngine(store: store)
        var reply = WorkerReply()
        let clock = ContinuousClock()
        for pass in passes {
            let start = clock.now
            let result = try await engine.importFile(pass.file, into: .entity("Item"), options: SyncOptions())
            reply.seconds[pass.key] = start.duration(to: clock.now).seconds
            let inserted = result.changes["Item"]?.inserted.count ?? 0
            let updated = result.changes["Item"]?.updated.count ?? 0
            reply.counts["\(pass.key).changes"] = inserted + updated
            reply.counts["\(pass.key).inserted"] = inserted
            reply.counts["\(pass.key).updated"] = updated
            reply.counts["\(pass.key).objects"] = result.objectCount
        }
        return reply
    }
}
