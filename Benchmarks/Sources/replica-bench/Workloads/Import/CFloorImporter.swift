import CFloor
import Foundation

/// The C floor: the benchmark's values, already in memory, stored by `CFloor.c` with every
/// strategy it has, each from the same database state, keeping the fastest valid one per pass.
///
/// Per pass: the state before the pass is a closed database file (`base.sqlite`, WAL
/// checkpointed into it). Each strategy gets a fresh copy of it (synced to disk before the
/// clock starts), is timed alone (one
/// transaction, WAL, `synchronous=NORMAL`), and is valid for the pass when it succeeded,
/// reported the pass's change count (all rows, all rows, none) and left the same table as the
/// reference strategy (`upsert-differs`, run first; a different table is a problem, not a
/// slower strategy). The reference's file becomes the next pass's state.
enum CFloorImporter {
    /// The strategies, the reference first.
    static let strategies: [cfloor_strategy] = [
        CFLOOR_UPSERT_DIFFERS, CFLOOR_INSERT, CFLOOR_UPSERT, CFLOOR_UPDATE_INSERT,
        CFLOOR_UPDATE_DIFFERS_INSERT, CFLOOR_SELECT_COMPARE, CFLOOR_MULTIROW_UPSERT, CFLOOR_SCAN_MULTIROW,
    ]

    static func name(_ strategy: cfloor_strategy) -> String {
        String(cString: cfloor_strategy_name(strategy))
    }

    /// Runs the passes. Reply: `seconds[pass]` the fastest valid strategy, `counts["pass.strategy"]`
    /// its raw value, `seconds["pass.s.NAME"]` every valid strategy's time, `counts["pass.n.NAME"]`
    /// every strategy's change count (-1 for an SQLite error), `counts["pass.mismatch.NAME"]` = 1
    /// when a strategy left a different table.
    ///
    /// - Throws: ``BenchmarkError`` when the reference strategy fails or a file cannot be copied.
    static func run(shape: ImportShape, count: Int, directory: String,
                    passes: [(key: String, revision: Int, expectedChanges: Int)]) throws -> WorkerReply {
        let base = (directory as NSString).appendingPathComponent("base.sqlite")
        let work = (directory as NSString).appendingPathComponent("work.sqlite")
        let next = (directory as NSString).appendingPathComponent("next.sqlite")
        let columns = shape.columns.joined(separator: ",")
        // The empty table, as Replica creates it.
        var error = [CChar](repeating: 0, count: 512)
        guard let created = cfloor_open(base, shape.createSQL, &error, error.count) else {
            throw BenchmarkError("C floor: \(cText(error))")
        }
        cfloor_close(created)

        var reply = WorkerReply()
        let clock = ContinuousClock()
        for pass in passes {
            let rows = shape.rows(count: count, revision: pass.revision)
            var reference: String?
            var best: (seconds: Double, strategy: cfloor_strategy, changes: Int)?
            for strategy in strategies {
                let label = "\(pass.key).\(name(strategy))"
                try removeDatabase(work)
                try FileManager.default.copyItem(atPath: base, toPath: work)
                // The copy reaches the disk before the clock starts: writing back its pages is not
                // the strategy's work, and Replica's passes start from a file long written.
                if let copy = FileHandle(forUpdatingAtPath: work) {
                    try copy.synchronize()
                    try copy.close()
                }
                guard let db = cfloor_open(work, nil, &error, error.count) else {
                    throw BenchmarkError("C floor: \(cText(error))")
                }
                var changes: Int64 = 0
                let start = clock.now
                let status = rows.values.withUnsafeBufferPointer { values in
                    cfloor_store(db, shape.table, columns, Int32(shape.columns.count), strategy,
                                 values.baseAddress, rows.rowCount, &changes)
                }
                let seconds = start.duration(to: clock.now).seconds
                let message = String(cString: cfloor_errmsg(db))
                cfloor_close(db)
                guard status == 0 else {
                    reply.counts["\(pass.key).n.\(name(strategy))"] = -1
                    if strategy == CFLOOR_UPSERT_DIFFERS { throw BenchmarkError("C floor \(label): \(message)") }
                    continue
                }
                reply.counts["\(pass.key).n.\(name(strategy))"] = Int(changes)
                let checksum = try self.checksum(database: work, shape: shape)
                if let reference, checksum != reference {
                    reply.counts["\(pass.key).mismatch.\(name(strategy))"] = 1
                    continue
                }
                if strategy == CFLOOR_UPSERT_DIFFERS {
                    reference = checksum
                    // The reference's result is the next pass's starting state.
                    try removeDatabase(next)
                    try FileManager.default.moveItem(atPath: work, toPath: next)
                }
                guard Int(changes) == pass.expectedChanges else { continue }
                reply.seconds["\(pass.key).s.\(name(strategy))"] = seconds
                if best == nil || seconds < best!.seconds { best = (seconds, strategy, Int(changes)) }
            }
            try removeDatabase(work)
            try removeDatabase(base)
            try FileManager.default.moveItem(atPath: next, toPath: base)
            guard let best else { throw BenchmarkError("C floor \(pass.key): no valid strategy") }
            reply.seconds[pass.key] = best.seconds
            reply.counts["\(pass.key).changes"] = best.changes
            reply.counts["\(pass.key).strategy"] = Int(best.strategy.rawValue)
        }
        reply.checksum = try checksum(database: base, shape: shape)
        return reply
    }

    /// The shape's fingerprint of the database at `path` (``ImportShape/checksumSQL``).
    ///
    /// - Throws: ``BenchmarkError`` when the database cannot be read.
    static func checksum(database: String, shape: ImportShape) throws -> String {
        try query(database: database, sql: shape.checksumSQL)
    }

    /// The one text value `sql` returns from the database at `path` (at most 1,023 bytes).
    ///
    /// - Throws: ``BenchmarkError`` when the database cannot be read.
    static func query(database: String, sql: String) throws -> String {
        var text = [CChar](repeating: 0, count: 1024)
        let status = cfloor_query_text(database, sql, &text, text.count)
        guard status == 0 else { throw BenchmarkError("query of \(database): SQLite error \(status)") }
        return cText(text)
    }

    /// The NUL-terminated text in `chars`.
    static func cText(_ chars: [CChar]) -> String {
        String(decoding: chars.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes a database file with its WAL and shared-memory files.
    private static func removeDatabase(_ path: String) throws {
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}
