import Foundation
import Replica

/// `infer`: `replica schema infer` over the import workload's people file, against importing the
/// same file, in one run.
///
/// The parent writes the people file (1,000,000 objects, `ImportShape.people`), then runs two
/// implementations in their own child processes, alternating, `runs` times each:
/// - `infer`: ``SchemaInference/addFile(_:route:format:)`` then ``SchemaInference/infer()``, the
///   work of `replica schema infer people.json`; the child checks that the inferred `Person` has
///   the five attributes with the types the hand-written schema gives them;
/// - `import`: Replica's import of the same file through the people route into an empty store
///   (the import workload's pass 1).
///
/// Targets: inferring takes at most 2× the time of importing (a rate ratio ≥ 0.5), and its peak
/// resident memory is at most 100 MB (the file is read in chunks; only keys and the hashes of
/// key-like values are kept).
struct InferWorkload: Workload {
    let name = "infer"
    let summary = "replica schema infer over the 1M-people file vs importing it: rows/s and peak memory"

    /// Inference's peak memory target.
    static let memoryLimit = 100_000_000

    enum Implementation: String, CaseIterable, Sendable {
        case infer
        case `import`
    }

    /// The attributes and types inference must find in the people file (Schemas/people.json's `Person`).
    static let expected: [String: AttributeType] = [
        "id": .integer, "name": .string, "numberOfKids": .integer, "kilometersWalked": .double, "avatar": .string,
    ]

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        let count = context.quick ? 100_000 : 1_000_000
        let runs = context.runs ?? 3
        let path = ImportShape.people.file(revision: 0, in: context.scratchDirectory)
        let bytes = try ImportShape.people.writeJSON(count: count, revision: 0, to: path)
        context.log(String(format: "infer: wrote %@ people, %.1f MB", Report.formatCount(count), Double(bytes) / 1e6))
        var seconds: [Implementation: [Double]] = [:]
        var peaks: [Implementation: Int] = [:]
        var failures: [Implementation: String] = [:]
        for run in 1...runs {
            for implementation in Implementation.allCases where failures[implementation] == nil {
                context.log("infer: run \(run)/\(runs), \(implementation.rawValue)…")
                let directory = (context.scratchDirectory as NSString).appendingPathComponent("infer-\(implementation.rawValue)")
                let request = WorkerRequest(implementation: implementation.rawValue,
                                            parameters: ["file": path, "count": String(count), "directory": directory])
                do {
                    let (reply, peak) = try context.runWorker(workload: name, request: request)
                    guard let time = reply.seconds["seconds"] else { throw BenchmarkError("no time in the reply") }
                    seconds[implementation, default: []].append(time)
                    peaks[implementation] = max(peaks[implementation] ?? 0, peak)
                    context.log(String(format: "infer: %@: %.2f s, peak %@", implementation.rawValue, time, Report.formatBytes(peak)))
                } catch {
                    context.log("infer: \(implementation.rawValue) failed: \(error)")
                    failures[implementation] = "failed: \(error)"
                }
            }
        }
        func cell(_ implementation: Implementation) -> Cell {
            if let failure = failures[implementation] { return Cell(note: failure) }
            guard let time = median(seconds[implementation] ?? []), time > 0 else { return Cell(note: "—") }
            return Cell(Double(count) / time)
        }
        var row = ResultRow(workload: "infer (\(Report.formatCount(count)) people, schema from the file)", unit: "rows/s",
                            replica: cell(.infer))
        row.baselines = [BaselineCell(name: "Replica import", cell: cell(.import), minimumRatio: 0.5)]
        row.peakMemory = [
            peaks[.infer].map { MemoryReading(name: "infer", bytes: $0, limit: Self.memoryLimit) },
            peaks[.import].map { MemoryReading(name: "import", bytes: $0) },
        ].compactMap { $0 }
        row.notes = [String(format: "infer: `replica schema infer`'s work (SchemaInference.addFile, infer) over the import "
                            + "workload's people file, %.0f MB, against Replica importing the same file into an empty "
                            + "store through the people route; each in its own child process, alternating, ", Double(bytes) / 1e6)
                     + (runs > 1 ? "median of \(runs) runs" : "one run")
                     + "; the ratio ≥ 0.5 is inference in at most 2× the import's time; peak RSS from wait4 ru_maxrss."]
        return [row]
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        guard let implementation = Implementation(rawValue: request.implementation) else {
            throw BenchmarkError("unknown infer implementation '\(request.implementation)'")
        }
        let file = try request.require("file")
        guard let count = Int(try request.require("count")) else { throw BenchmarkError("bad count") }
        var reply = WorkerReply()
        let clock = ContinuousClock()
        switch implementation {
        case .infer:
            let start = clock.now
            var inference = SchemaInference(name: "people")
            try inference.addFile(file, route: ImportShape.people.route)
            let inferred = try inference.infer()
            reply.seconds["seconds"] = start.duration(to: clock.now).seconds
            let person = try inferred.schema.requireEntity(ImportShape.people.entity)
            let found = Dictionary(uniqueKeysWithValues: person.attributes.map { ($0.name, $0.type) })
            guard found == Self.expected else {
                throw BenchmarkError("inferred \(found.sorted { $0.key < $1.key }), expected \(Self.expected.sorted { $0.key < $1.key })")
            }
            reply.counts["attributes"] = found.count
        case .import:
            let directory = try request.require("directory")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let database = (directory as NSString).appendingPathComponent("bench.sqlite")
            let imported = try await ReplicaImporter.run(shape: .people, mode: .route, database: database, passes: [("pass1", file)])
            reply.seconds["seconds"] = imported.seconds["pass1"]
            guard imported.counts["pass1.inserted"] == count else {
                throw BenchmarkError("imported \(imported.counts["pass1.inserted"] ?? -1) rows, expected \(count)")
            }
        }
        return reply
    }
}
