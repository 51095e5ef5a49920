import Foundation

/// The `sqlite3` shell and `sqlite-utils` rows of `import`: each pass is one run of the tool as
/// its user types it, timed from the spawn to the exit (process start, reading the file, parsing,
/// writing, commit). The worker that runs them is the child the runner measures, so its `wait4`
/// peak covers the tools it reaped. Preparing the empty database is not timed.
///
/// ```swift
/// let reply = try CompetitorImporter.runSQLiteShell("/usr/bin/sqlite3", shape: .people, database: path,
///                                                    passes: [("pass1", first), ("pass2", second), ("pass3", second)])
/// ```
enum CompetitorImporter {
    /// `sqlite3 DB "INSERT … SELECT … FROM json_each(readfile('FILE'))"` per pass: pass 1 a plain
    /// insert, the others the where-differs upsert (so the unchanged pass writes nothing). The
    /// table is Replica's (``ImportShape/createSQL``), made before timing, with the WAL journal;
    /// each pass sets `synchronous = NORMAL` as the other SQLite implementations do. Reply:
    /// `seconds[pass]`, `counts["pass.changes"]` from `changes()`, and ``ImportShape/countsSQL``.
    ///
    /// - Throws: ``BenchmarkError`` when the shell fails or prints no change count.
    static func runSQLiteShell(_ shell: String, shape: ImportShape, database: String,
                               passes: [(key: String, file: String)]) throws -> WorkerReply {
        _ = try run([shell, "-bail", database, "PRAGMA journal_mode = WAL; \(shape.createSQL);"])
        var reply = WorkerReply()
        for (index, pass) in passes.enumerated() {
            let sql = "PRAGMA synchronous = NORMAL; \(shape.jsonEachSQL(file: pass.file, upsert: index > 0)); SELECT changes();"
            let (output, seconds) = try timed([shell, "-bail", database, sql])
            guard let changes = output.split(separator: "\n").last.flatMap({ Int($0) }) else {
                throw BenchmarkError("sqlite3 \(pass.key) printed no change count: \(output.suffix(200))")
            }
            reply.seconds[pass.key] = seconds
            reply.counts["\(pass.key).changes"] = changes
        }
        reply.checksum = try CFloorImporter.query(database: database, sql: shape.countsSQL)
        return reply
    }

    /// `sqlite-utils insert DB TABLE FIRST --pk id` (pass 1) and `sqlite-utils upsert DB TABLE FILE
    /// --pk id` (passes 2 and 3), in a database made before timing by `sqlite-utils create-database
    /// DB --enable-wal`. sqlite-utils makes its own table from the JSON keys and reports no change
    /// count. Reply: `seconds[pass]` and ``ImportShape/countsSQL``.
    ///
    /// - Throws: ``BenchmarkError`` when sqlite-utils fails.
    static func runSQLiteUtils(_ executable: String, shape: ImportShape, database: String,
                               passes: [(key: String, file: String)]) throws -> WorkerReply {
        _ = try run([executable, "create-database", database, "--enable-wal"])
        var reply = WorkerReply()
        for (index, pass) in passes.enumerated() {
            let command = index == 0 ? "insert" : "upsert"
            reply.seconds[pass.key] = try timed([executable, command, database, shape.table, pass.file, "--pk", "id"]).seconds
        }
        reply.checksum = try CFloorImporter.query(database: database, sql: shape.countsSQL)
        return reply
    }

    /// Runs `arguments` and returns its standard output and how long it took, spawn to exit.
    private static func timed(_ arguments: [String]) throws -> (output: String, seconds: Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let output = try run(arguments)
        return (output, start.duration(to: clock.now).seconds)
    }

    private static func run(_ arguments: [String]) throws -> String {
        let result = try ChildProcess.run(arguments)
        let output = String(decoding: result.standardOutput, as: UTF8.self)
        guard result.exitStatus == 0 else {
            throw BenchmarkError("\(arguments.prefix(3).joined(separator: " ")) exited with \(result.exitStatus)"
                                 + (output.isEmpty ? "" : ": \(output.suffix(300))"))
        }
        return output
    }
}

extension ImportShape {
    /// Each column of Replica's table and how SQLite's JSON functions get it from `json_each`'s
    /// `value`: the same values as Replica's, except `avatar`, which stays base64 text (SQLite 3.40
    /// has no `unhex()` or base64 decoder). Dates become Unix seconds through `unixepoch()`.
    var jsonEachColumns: [(column: String, expression: String)] {
        switch self {
        case .items:
            [("id", "value->>'id'"), ("name", "value->>'name'"), ("email", "value->>'email'"), ("city", "value->>'city'"),
             ("age", "value->>'age'"), ("score", "value->>'score'"), ("active", "value->>'active'"),
             ("createdAt", "unixepoch(value->>'created_at')")]
        case .people:
            [("id", "value->>'id'"), ("name", "value->>'name'"), ("numberOfKids", "value->>'numberOfKids'"),
             ("kilometersWalked", "value->>'kilometersWalked'"), ("avatar", "value->>'avatar'")]
        }
    }

    /// The non-key columns in the order the where-differs test compares them: numbers, then text
    /// and blobs, as Replica and the C floor order it (SQLite stops at the first difference).
    var comparisonOrder: [String] {
        switch self {
        case .items: ["age", "score", "active", "createdAt", "name", "email", "city"]
        case .people: ["numberOfKids", "kilometersWalked", "name", "avatar"]
        }
    }

    /// `INSERT INTO t (…) SELECT … FROM json_each(readfile('FILE'))`, with the where-differs
    /// upsert when `upsert` is set (`WHERE true` keeps the parser from reading `ON` as a join's).
    func jsonEachSQL(file: String, upsert: Bool) -> String {
        let quoted = jsonEachColumns.map { "\"\($0.column)\"" }
        var sql = "INSERT INTO \"\(table)\" (\(quoted.joined(separator: ", "))) SELECT "
            + jsonEachColumns.map(\.expression).joined(separator: ", ")
            + " FROM json_each(readfile('\(file.replacingOccurrences(of: "'", with: "''"))'))"
        if upsert {
            let rest = comparisonOrder.map { "\"\($0)\"" }
            sql += " WHERE true ON CONFLICT (\"id\") DO UPDATE SET "
                + rest.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
                + " WHERE " + rest.map { "\($0) IS NOT excluded.\($0)" }.joined(separator: " OR ")
        }
        return sql
    }

    /// Row count, sum of ids and sum of the integer column every second file changes (items `age`,
    /// people `numberOfKids`): what every tool's table can be compared on, whatever its column
    /// types. Works in SQLite and DuckDB; its tokens (`n=… id=… age=…`) are a subset of
    /// ``checksumSQL``'s.
    var countsSQL: String {
        let changed = self == .items ? ("age", "age") : ("kids", "numberOfKids")
        return "SELECT 'n=' || count(*) || ' id=' || sum(\"id\") || ' \(changed.0)=' || sum(\"\(changed.1)\") FROM \"\(table)\""
    }
}
