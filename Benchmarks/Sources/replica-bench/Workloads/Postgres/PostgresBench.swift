import Foundation
import Replica
import ReplicaPostgres

/// A throwaway PostgreSQL cluster for the PostgreSQL workloads, started and stopped by
/// `Benchmarks/Scripts/postgres_cluster.sh` (initdb in the scratch folder, pg_ctl on a free
/// loopback port, trust authentication, PostgreSQL's default durability).
struct PostgresBenchCluster: Sendable {
    /// `postgres://postgres@127.0.0.1:PORT`, without a database.
    let server: String
    let directory: String

    static let script: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<5 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Scripts/postgres_cluster.sh").path
    }()

    /// Starts a cluster in `directory`.
    ///
    /// - Throws: ``BenchmarkError`` with the script's output when it cannot start.
    static func start(in directory: String) throws -> PostgresBenchCluster {
        // psql's notices ("database … does not exist, skipping") stay out of the report's log.
        setenv("PGOPTIONS", "-c client_min_messages=warning", 1)
        let result = try ChildProcess.run(["/bin/sh", script, "start", directory])
        let output = String(decoding: result.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard result.exitStatus == 0, output.hasPrefix("postgres://") else {
            throw BenchmarkError("cannot start PostgreSQL (\(script) start exited with \(result.exitStatus)): \(output)")
        }
        return PostgresBenchCluster(server: output, directory: directory)
    }

    func stop() {
        _ = try? ChildProcess.run(["/bin/sh", Self.script, "stop", directory], quiet: true)
    }

    /// Creates database `name` (dropping an older one) and returns its URL.
    func makeDatabase(_ name: String) throws -> String {
        _ = try psql(server + "/postgres", "DROP DATABASE IF EXISTS \(name)")
        _ = try psql(server + "/postgres", "CREATE DATABASE \(name)")
        return server + "/" + name
    }

    /// Runs SQL (or, with `file`, a psql script) against `url`; returns psql's unaligned output.
    func psql(_ url: String, _ sql: String? = nil, file: String? = nil) throws -> String {
        var arguments = [Self.psqlPath, "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"]
        if let sql { arguments += ["-c", sql] }
        if let file { arguments += ["-f", file] }
        arguments.append(url)
        let result = try ChildProcess.run(arguments)
        let output = String(decoding: result.standardOutput, as: UTF8.self)
        guard result.exitStatus == 0 else { throw BenchmarkError("psql exited with \(result.exitStatus): \(output)") }
        return output
    }

    /// psql beside the server's initdb, else on `PATH`.
    static let psqlPath: String = {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) })
        where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/psql") {
            return "\(root)/\(version)/bin/psql"
        }
        return ChildProcess.which("psql") ?? "psql"
    }()
}

extension PeopleImportData {
    /// Writes the people as PostgreSQL's COPY text format, the floor's input: tab-separated,
    /// `\N` for NULL, `avatar` as bytea hex (`\\x…`, its backslash escaped).
    ///
    /// - Returns: The bytes written.
    func writeCopyText(to path: String) throws -> Int {
        guard let file = fopen(path, "w") else { throw BenchmarkError("cannot write \(path)") }
        defer { fclose(file) }
        var line = ""
        var total = 0
        let hex = Array("0123456789abcdef")
        for index in 0..<count {
            let person = person(at: index)
            line.removeAll(keepingCapacity: true)
            line += "\(person.id)\t\(person.name)\t\(person.numberOfKids)\t\(person.kilometersWalked)\t"
            if let avatar = person.avatar {
                line += "\\\\x"
                for byte in avatar {
                    line.append(hex[Int(byte >> 4)])
                    line.append(hex[Int(byte & 15)])
                }
            } else {
                line += "\\N"
            }
            line += "\n"
            total += line.utf8.count
            guard fputs(line, file) >= 0 else { throw BenchmarkError("cannot write \(path)") }
        }
        return total
    }
}
