import Foundation
import ReplicaTestSupport
import Testing

/// Two commands that create one new database file at the same moment both succeed: creating the
/// file, switching it to WAL and creating its tables wait for each other as any write waits for
/// the busy timeout, and neither removes a file the other has open.
@Suite("replica import: two processes creating one file")
struct ConcurrentCreationTests {
    @Test("Person and Car imported together into a file that does not exist yet: both succeed, every time")
    func twoImportsCreateOneFile() async throws {
        let directory = try TemporaryDirectory("replica-concurrent-create")
        defer { directory.remove() }
        let people = directory.url("people.json")
        let cars = directory.url("cars.json")
        try Data(("[" + (1...300).map { #"{"id": \#($0), "name": "person \#($0)"}"# }.joined(separator: ",") + "]").utf8).write(to: people)
        try Data(("[" + (1...300).map { #"{"id": \#($0), "name": "car \#($0)", "person_id": \#($0)}"# }.joined(separator: ",") + "]").utf8)
            .write(to: cars)
        // The race was lost about one time in fifteen: twenty rounds see it with odds of ~3 in 4.
        var failures: [String] = []
        for round in 1...20 {
            let db = directory.path("round-\(round).sqlite")
            async let first = ReplicaTool.run(["import", "--db", db, "--schema", "Schemas/people.json", "--entity", "Person", people.path])
            async let second = ReplicaTool.run(["import", "--db", db, "--schema", "Schemas/people.json", "--entity", "Car", cars.path])
            let outputs = try await [first, second]
            for (name, output) in zip(["Person", "Car"], outputs) where output.status != 0 {
                failures.append("round \(round), \(name): exit \(output.status): \(output.stderr)")
            }
            for entity in ["Person", "Car"] {
                let rows = try await ReplicaTool.run(["query", "--db", db, entity, "--format", "ndjson"])
                let count = rows.stdout.split(separator: "\n").count
                if rows.status != 0 || count != 300 { failures.append("round \(round): \(count) \(entity) rows \(rows.stderr)") }
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}
