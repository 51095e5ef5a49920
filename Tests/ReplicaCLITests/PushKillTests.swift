import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ReplicaCore
import ReplicaTestSupport
import Testing

/// `replica push` killed with SIGKILL at random moments and run again: every queued write reaches
/// the API exactly once (its Idempotency-Key is the same across runs), and the outbox ends empty.
@Suite("replica push, killed with SIGKILL and run again")
struct PushKillTests {
    /// Starts `replica push` in a process group of its own, waits `delay` seconds and kills the
    /// group with SIGKILL; `true` when the push was still running when it was killed.
    static func pushKilled(after delay: TimeInterval, db: String, baseURL: String, output: String) async -> Bool {
        let replica = ShellJob.quoted(ReplicaTool.productsDirectory.appendingPathComponent("replica").path)
        let command = "exec \(replica) push --db \(ShellJob.quoted(db)) --base-url \(baseURL) --concurrency 2 --retries 0"
        return await withCheckedContinuation { continuation in
            Thread {
                guard let job = try? ShellJob(command: command, directory: "/tmp", outputPath: output) else {
                    continuation.resume(returning: false)
                    return
                }
                let ended = job.wait(until: Date().addingTimeInterval(delay))
                if ended == nil { killpg(job.pid, SIGKILL) }
                _ = job.wait(until: Date().addingTimeInterval(30))
                continuation.resume(returning: ended == nil)
            }.start()
        }
    }

    @Test("rounds of 3 creates and an update, pushes killed at seeded random moments (24 times): each write lands once")
    func killedPushes() async throws {
        let directory = try TemporaryDirectory("replica-push-kill")
        defer { directory.remove() }
        let data = directory.path("data.json")
        try Data(#"{"people": [{"id": 1, "name": "Ann", "numberOfKids": 0}]}"#.utf8).write(to: URL(fileURLWithPath: data))
        let server = try await ServeProcess.start("--data \(ShellJob.quoted(data)) --latency 20-50", in: directory)
        defer { server.stop() }
        let db = directory.path("people.sqlite")
        let first = try await ReplicaTool.run(["sync", "--db", db, "--schema", "Schemas/people.json", "--base-url", server.baseURL, "/people"])
        #expect(first.status == 0, "\(first.stderr)")

        var random = SeededRandom(seed: 20_260_522)
        var kills = 0
        var names: [String] = []
        var round = 0
        // Until 24 pushes were killed while running (some finish before their moment comes).
        while kills < 24 && round < 60 {
            round += 1
            for index in 1...3 {
                let name = "round \(round) person \(index)"
                names.append(name)
                let saved = try await ReplicaTool.run(["save", "--db", db, "Person", #"{"name": "\#(name)", "numberOfKids": \#(index)}"#])
                #expect(saved.status == 0, "\(saved.stderr)")
            }
            let kids = try await ReplicaTool.run(["save", "--db", db, "Person", #"{"id": 1, "numberOfKids": \#(round)}"#])
            #expect(kids.status == 0, "\(kids.stderr)")
            let delay = Double.random(in: 0.02...0.5, using: &random)
            if await Self.pushKilled(after: delay, db: db, baseURL: server.baseURL, output: directory.path("push-\(round).out")) {
                kills += 1
            }
        }
        #expect(kills >= 24, "only \(kills) of \(round) pushes were still running when killed")

        let last = try await ReplicaTool.run(["push", "--db", db, "--base-url", server.baseURL])
        #expect(last.status == 0, "\(last.stdout)\(last.stderr)")
        #expect(last.stderr == "")
        let outbox = try await ReplicaTool.run(["outbox", "--db", db])
        #expect(outbox.stdout.hasSuffix("(0 mutations)\n"), "\(outbox.stdout)")

        // The API's people, read into a store of their own: Ann, with the last round's kids, and each new person once.
        let check = directory.path("check.sqlite")
        let synced = try await ReplicaTool.run(["sync", "--db", check, "--schema", "Schemas/people.json", "--base-url", server.baseURL, "/people"])
        #expect(synced.status == 0, "\(synced.stderr)")
        let remote = try await Self.people(check)
        let expected = [["Ann", "\(round)"]] + names.map { [$0, String($0.suffix(1))] }
        #expect(remote.map { [$0[1], $0[2]] }.sorted { $0[0] < $1[0] } == expected.sorted { $0[0] < $1[0] })
        #expect(remote.count == 1 + 3 * round)
        // The local rows are the API's, under its keys: no temporary key is left.
        let local = try await Self.people(db)
        #expect(local == remote)
    }

    /// `[id, name, numberOfKids]` of every person, by id.
    static func people(_ db: String) async throws -> [[String]] {
        let output = try await ReplicaTool.run(["query", "--db", db, "Person", "--sort", "id", "--format", "ndjson"])
        #expect(output.status == 0, "\(output.stderr)")
        return output.stdout.split(separator: "\n").compactMap { line in
            guard case let object as [String: Any] = try? JSONSerialization.jsonObject(with: Data(line.utf8)) else { return nil }
            return ["\(object["id"] ?? "")", "\(object["name"] ?? "")", "\(object["numberOfKids"] ?? "")"]
        }
    }
}
