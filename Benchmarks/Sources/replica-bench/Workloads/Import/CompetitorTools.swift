import Foundation

/// The tools users would pick instead of Replica (issue 31), found or installed for one run.
///
/// - `sqlite3 json_each`: the `sqlite3` shell on `PATH` (its `readfile()` reads the file).
/// - `sqlite-utils` and `DuckDB` (and `dlt`, for `sync-offset`): installed into the benchmark's own virtual environment
///   (`Benchmarks/.venv` by default, `--venv` to move it; git-ignored), created when missing with
///   `python3 -m venv` and `pip install -r Scripts/competitors-requirements.txt` (pinned versions),
///   never into the project's dependencies. The environment is reused while its copy of the
///   requirements file is the same.
///
/// Each tool that cannot be had is skipped with a note saying why, as Python is with `--python none`.
///
/// ```swift
/// let tools = CompetitorTools.prepare(context)
/// if let duckDB = tools.venvPython { … }
/// ```
struct CompetitorTools: Sendable {
    /// The `sqlite3` shell, or `nil` (see ``missing``).
    var sqliteShell: String?
    /// The virtual environment's `sqlite-utils` executable, or `nil`.
    var sqliteUtils: String?
    /// The virtual environment's Python, which has `duckdb`, or `nil`.
    var venvPython: String?
    /// Why a tool is not measured, by implementation.
    var missing: [ImportWorkload.Implementation: String] = [:]

    /// `Benchmarks/Scripts/competitors-requirements.txt`.
    static let requirementsFile = ImportWorkload.scriptPath("competitors-requirements.txt")
    /// `Benchmarks/Scripts/import_duckdb.py`.
    static let duckDBScript = ImportWorkload.scriptPath("import_duckdb.py")
    /// The default virtual environment: `Benchmarks/.venv`.
    static let defaultVirtualEnvironment: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<5 { url.deleteLastPathComponent() }   // this file, Import, Workloads, replica-bench, Sources
        return url.appendingPathComponent(".venv").path
    }()

    /// Finds the `sqlite3` shell and makes sure the virtual environment has the pinned tools.
    ///
    /// - Parameter context: The run's Python (`nil` skips the environment) and where the environment goes.
    /// - Returns: The tools found, and a note for each one that is not.
    static func prepare(_ context: BenchmarkContext) -> CompetitorTools {
        var tools = CompetitorTools()
        if let shell = ChildProcess.which("sqlite3") {
            tools.sqliteShell = shell
        } else {
            tools.missing[.sqliteShell] = "no sqlite3 shell on PATH"
        }
        do {
            let python = try environmentPython(context)
            tools.venvPython = python
            tools.sqliteUtils = context.virtualEnvironment + "/bin/sqlite-utils"
        } catch {
            let note = "\(error)"
            context.log("import: sqlite-utils and DuckDB: \(note)")
            tools.missing[.sqliteUtils] = note
            tools.missing[.duckDB] = note
        }
        return tools
    }

    /// The virtual environment's Python, with every pinned tool installed (the environment is
    /// created, or its requirements installed, when its stamp says they are not there).
    ///
    /// - Parameter context: The run's Python (`nil` skips the environment) and where the environment goes.
    /// - Returns: The path of the environment's `bin/python`.
    /// - Throws: ``BenchmarkError`` saying why it cannot be had: `skipped: no python3 (--python none)`
    ///   or `not installed: …`.
    static func environmentPython(_ context: BenchmarkContext) throws -> String {
        guard let python = context.python else { throw BenchmarkError("skipped: no python3 (--python none)") }
        let environment = context.virtualEnvironment
        do {
            try ensureVirtualEnvironment(at: environment, python: python, context: context)
        } catch {
            throw BenchmarkError("not installed: \(error)")
        }
        return environment + "/bin/python"
    }

    /// Creates the environment and installs the requirements unless its stamp (a copy of the
    /// requirements file) says they are there.
    private static func ensureVirtualEnvironment(at directory: String, python: String, context: BenchmarkContext) throws {
        guard let requirements = try? String(contentsOfFile: requirementsFile, encoding: .utf8) else {
            throw BenchmarkError("cannot read \(requirementsFile)")
        }
        let stamp = directory + "/replica-bench-requirements.txt"
        let fileManager = FileManager.default
        if (try? String(contentsOfFile: stamp, encoding: .utf8)) == requirements,
           fileManager.isExecutableFile(atPath: directory + "/bin/python"),
           fileManager.isExecutableFile(atPath: directory + "/bin/sqlite-utils") {
            return
        }
        context.log("installing \(requirementsFile) into \(directory)…")
        if !fileManager.isExecutableFile(atPath: directory + "/bin/python") {
            try check(ChildProcess.run([python, "-m", "venv", directory]), "\(python) -m venv \(directory)")
        }
        try check(ChildProcess.run([directory + "/bin/python", "-m", "pip", "install", "--quiet",
                                    "--disable-pip-version-check", "-r", requirementsFile]),
                  "pip install -r \(requirementsFile)")
        try requirements.write(toFile: stamp, atomically: true, encoding: .utf8)
    }

    private static func check(_ result: ChildProcess.Result, _ command: String) throws {
        guard result.exitStatus == 0 else {
            let output = String(decoding: result.standardOutput, as: UTF8.self)
            throw BenchmarkError("\(command) exited with \(result.exitStatus)" + (output.isEmpty ? "" : ": \(output.suffix(300))"))
        }
    }
}
