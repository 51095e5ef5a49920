import CFloor
import Foundation
import Replica

/// Replica on the join-table path: `importFile(path, into: .route(.get, "/issues"))`, each
/// pass into the same store, only the call timed.
enum LinksReplicaImporter {
    /// Reply: `seconds[pass]`; `counts["pass.issues"]` and `counts["pass.labels"]` the keys
    /// inserted, updated or deleted of each entity, `counts["pass.deleted"]` both entities' deletions.
    ///
    /// - Throws: Replica's errors.
    static func run(database: String, passes: [(key: String, file: String)]) async throws -> WorkerReply {
        let store = try Store(path: database, schema: try ImportLinksData.schema())
        let engine = try SQLiteReplica(store: store)
        let route = ImportTarget.route(.get, "/issues")
        var reply = WorkerReply()
        let clock = ContinuousClock()
        for pass in passes {
            let start = clock.now
            let result = try await engine.importFile(pass.file, into: route)
            reply.seconds[pass.key] = start.duration(to: clock.now).seconds
            var deleted = 0
            for (entity, key) in [("Issue", "issues"), ("Label", "labels")] {
                let changes = result.changes[entity]
                let count = (changes?.inserted.count ?? 0) + (changes?.updated.count ?? 0) + (changes?.deleted.count ?? 0)
                reply.counts["\(pass.key).\(key)"] = count
                deleted += changes?.deleted.count ?? 0
            }
            reply.counts["\(pass.key).deleted"] = deleted
            reply.counts["\(pass.key).objects"] = result.objectCount
        }
        return reply
    }
}

/// The C floor of `import-links`: the same values in memory, stored by `cfloor_store_links`
/// with each of its strategies from the same database state, keeping the fastest valid one per
/// pass, as ``CFloorImporter`` does for `import` (the reference, `upsert-differs`, runs first
/// and its result is the next pass's state).
enum LinksFloorImporter {
    static let strategies: [cfloor_links_strategy] = [
        CFLOOR_LINKS_UPSERT_DIFFERS, CFLOOR_LINKS_INSERT, CFLOOR_LINKS_SELECT_COMPARE,
        CFLOOR_LINKS_INSERT_REINDEX, CFLOOR_LINKS_UPSERT_DIFFERS_REINDEX,
    ]

    static func name(_ strategy: cfloor_links_strategy) -> String {
        String(cString: cfloor_links_strategy_name(strategy))
    }

    /// Runs the passes. Reply: `seconds[pass]` the fastest valid strategy, `seconds["pass.s.NAME"]`
    /// every valid one, `counts["pass.n.NAME"]` every strategy's issue + label changes (-1 for an
    /// SQLite error), `counts["pass.mismatch.NAME"]` when one left different tables; the best
    /// strategy's `pass.issues`, `pass.labels`, `pass.linksInserted`, `pass.linksDeleted`.
    ///
    /// - Throws: ``BenchmarkError`` when the reference strategy fails or a file cannot be copied.
    static func run(count: Int, directory: String,
                    passes: [(key: String, revision: Int, issues: Int, labels: Int)]) throws -> WorkerReply {
        let base = (directory as NSString).appendingPathComponent("base.sqlite")
        let work = (directory as NSString).appendingPathComponent("work.sqlite")
        let next = (directory as NSString).appendingPathComponent("next.sqlite")
        var error = [CChar](repeating: 0, count: 512)
        guard let created = cfloor_open(base, ImportLinksData.createStatements.joined(separator: ";\n"), &error, error.count) else {
            throw BenchmarkError("C floor: \(CFloorImporter.cText(error))")
        }
        cfloor_close(created)

        // C strings that outlive every call (a String passed to a C struct's field would not).
        let owned: [UnsafeMutablePointer<CChar>?] = ["issues", "id,number,title,state", "labels", "id,name,color",
                                                     "issue_labels", "issueID", "labelID"].map { (name: String) in strdup(name) }
        defer { owned.forEach { free($0) } }
        let names = owned.map { $0.map { UnsafePointer($0) } }
        let issuesTable = cfloor_rows(table: names[0], columns: names[1], column_count: 4, values: nil, row_count: 0)
        let labelsTable = cfloor_rows(table: names[2], columns: names[3], column_count: 3, values: nil, row_count: 0)

        var reply = WorkerReply()
        let clock = ContinuousClock()
        for pass in passes {
            let values = ImportLinksData(count: count, revision: pass.revision).floorValues()
            var reference: String?
            var best: (seconds: Double, result: cfloor_links_result)?
            for strategy in strategies {
                let label = "\(pass.key).\(name(strategy))"
                try removeDatabase(work)
                try FileManager.default.copyItem(atPath: base, toPath: work)
                if let copy = FileHandle(forUpdatingAtPath: work) {
                    try copy.synchronize()
                    try copy.close()
                }
                guard let db = cfloor_open(work, nil, &error, error.count) else {
                    throw BenchmarkError("C floor: \(CFloorImporter.cText(error))")
                }
                var result = cfloor_links_result()
                let start = clock.now
                let status = values.issues.values.withUnsafeBufferPointer { issues in
                    values.labels.values.withUnsafeBufferPointer { labels in
                        values.links.withUnsafeBufferPointer { links in
                            var parents = issuesTable, children = labelsTable
                            parents.values = issues.baseAddress
                            parents.row_count = values.issues.rowCount
                            children.values = labels.baseAddress
                            children.row_count = values.labels.rowCount
                            return cfloor_store_links(db, strategy, parents, children, names[4], names[5], names[6],
                                                      links.baseAddress, ImportLinksData.linksPerIssue, &result)
                        }
                    }
                }
                let seconds = start.duration(to: clock.now).seconds
                let message = String(cString: cfloor_errmsg(db))
                cfloor_close(db)
                guard status == 0 else {
                    reply.counts["\(pass.key).n.\(name(strategy))"] = -1
                    if strategy == CFLOOR_LINKS_UPSERT_DIFFERS { throw BenchmarkError("C floor \(label): \(message)") }
                    continue
                }
                reply.counts["\(pass.key).n.\(name(strategy))"] = Int(result.parents_changed + result.children_changed)
                let checksum = try self.checksum(database: work)
                if let reference, checksum != reference {
                    reply.counts["\(pass.key).mismatch.\(name(strategy))"] = 1
                    continue
                }
                if strategy == CFLOOR_LINKS_UPSERT_DIFFERS {
                    reference = checksum
                    try removeDatabase(next)
                    try FileManager.default.moveItem(atPath: work, toPath: next)
                }
                guard Int(result.parents_changed) == pass.issues, Int(result.children_changed) == pass.labels else { continue }
                reply.seconds["\(pass.key).s.\(name(strategy))"] = seconds
                if best.map({ seconds < $0.seconds }) ?? true { best = (seconds, result) }
                // The reference's counts are reported even when it is not the fastest.
                if strategy == CFLOOR_LINKS_UPSERT_DIFFERS {
                    reply.counts["\(pass.key).issues"] = Int(result.parents_changed)
                    reply.counts["\(pass.key).labels"] = Int(result.children_changed)
                    reply.counts["\(pass.key).linksInserted"] = Int(result.links_inserted)
                    reply.counts["\(pass.key).linksDeleted"] = Int(result.links_deleted)
                }
            }
            try removeDatabase(work)
            try removeDatabase(base)
            try FileManager.default.moveItem(atPath: next, toPath: base)
            guard let best else { throw BenchmarkError("C floor \(pass.key): no valid strategy") }
            reply.seconds[pass.key] = best.seconds
            if reply.counts["\(pass.key).issues"] == nil {
                // The reference reported wrong counts: report them as they were, for the problem list.
                reply.counts["\(pass.key).issues"] = Int(best.result.parents_changed)
                reply.counts["\(pass.key).labels"] = Int(best.result.children_changed)
            }
        }
        reply.checksum = try checksum(database: base)
        return reply
    }

    /// ``ImportLinksData/checksumSQL`` of the database at `path`.
    ///
    /// - Throws: ``BenchmarkError`` when the database cannot be read.
    static func checksum(database: String) throws -> String {
        var text = [CChar](repeating: 0, count: 1024)
        let status = cfloor_query_text(database, ImportLinksData.checksumSQL, &text, text.count)
        guard status == 0 else { throw BenchmarkError("checksum of \(database): SQLite error \(status)") }
        return CFloorImporter.cText(text)
    }

    /// Checks that Replica created the tables and index the floor creates (``ImportLinksData/createStatements``).
    ///
    /// - Throws: ``BenchmarkError`` showing both when they differ.
    static func checkLayout(database: String) throws {
        var text = [CChar](repeating: 0, count: 2048)
        let status = cfloor_query_text(database, ImportLinksData.layoutSQL, &text, text.count)
        let replica = CFloorImporter.cText(text)
        let expected = ImportLinksData.createStatements.joined(separator: " ;; ")
        guard status == 0, replica == expected else {
            throw BenchmarkError("Replica's tables differ from the C floor's: \(replica) (status \(status)) vs \(expected)")
        }
    }

    /// Removes a database file with its WAL and shared-memory files.
    private static func removeDatabase(_ path: String) throws {
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}
