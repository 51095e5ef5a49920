import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ReplicaTestSupport
import Testing

/// `replica serve` in a process of its own, on a free port, for the commands that talk to an API.
final class ServeProcess: @unchecked Sendable {
    let job: ShellJob
    let baseURL: String

    /// Starts `replica serve --schema Schemas/people.json --port 0 ARGUMENTS` and waits for its address.
    static func start(_ arguments: String = "", in directory: TemporaryDirectory) async throws -> ServeProcess {
        let replica = ShellJob.quoted(ReplicaTool.productsDirectory.appendingPathComponent("replica").path)
        let schema = ShellJob.quoted(packageRoot.appendingPathComponent("Schemas/people.json").path)
        let output = directory.path("serve-\(UUID().uuidString).out")
        let job = try ShellJob(command: "exec \(replica) serve --schema \(schema) --port 0 \(arguments) 2> /dev/null",
                               directory: directory.url.path, outputPath: output)
        // The job is waited for on one thread at a time: this one, then the stopping one.
        nonisolated(unsafe) let waited = job
        let address: String? = await withCheckedContinuation { continuation in
            Thread {
                let job = waited
                _ = job.wait(until: Date().addingTimeInterval(60)) { OutputFile.lineCount(output) >= 1 }
                let line = OutputFile.lines(output).first ?? ""
                continuation.resume(returning: line.firstMatch(of: #/http://127\.0\.0\.1:[0-9]+/#).map { String($0.0) })
            }.start()
        }
        guard let address else {
            job.stop()
            throw CLITestError("replica serve printed no address: \(OutputFile.lines(output))")
        }
        return ServeProcess(job: job, baseURL: address)
    }

    private init(job: ShellJob, baseURL: String) {
        self.job = job
        self.baseURL = baseURL
    }

    /// `POST /_replica/down` or `/_replica/up`, with curl.
    func control(_ action: String) async throws {
        let run = await ShellJob.run("curl -s -f -X POST \(baseURL)/_replica/\(action)", in: "/tmp",
                                     output: FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)").path,
                                     timeout: 30)
        guard run.status == 0 else { throw CLITestError("POST /_replica/\(action) failed: \(run.lines)") }
    }

    func stop() {
        job.stop(grace: 5)
    }
}

struct CLITestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `replica save`, `delete`, `outbox` and `push`, and `replica sync` pushing first.
@Suite("replica save, delete, outbox, push")
struct OutboxCommandTests {
    static let schema = "Schemas/people.json"

    /// A database with Person 7 (Bob) and Person 8 (Cy), imported (not on any server).
    static func makeStore(_ directory: TemporaryDirectory) async throws -> String {
        let db = directory.path("people.sqlite")
        let people = #"[{"id": 7, "name": "Bob", "numberOfKids": 0}, {"id": 8, "name": "Cy", "numberOfKids": 1}]"#
        let imported = try await ReplicaTool.run(["import", "--db", db, "--schema", schema, "--entity", "Person", "-"],
                                                 stdin: Data(people.utf8))
        #expect(imported.status == 0, "\(imported.stderr)")
        return db
    }

    static func rows(_ db: String, _ entity: String = "Person") async throws -> String {
        let output = try await ReplicaTool.run(["query", "--db", db, entity, "--sort", "id", "--format", "ndjson"])
        #expect(output.status == 0, "\(output.stderr)")
        return output.stdout
    }

    @Test("save queues a create (temporary key) or an update, delete a deletion; outbox lists them; discard and retry")
    func saveDeleteList() async throws {
        let directory = try TemporaryDirectory("replica-outbox-cli")
        defer { directory.remove() }
        let db = try await Self.makeStore(directory)

        let created = try await ReplicaTool.run(["save", "--db", db, "Person", #"{"name": "Ann", "numberOfKids": 2}"#])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout == "queued #1 create Person -1 (name, numberOfKids)\n")
        #expect(created.stderr == "")
        let updated = try await ReplicaTool.run(["save", "--db", db, "Person", #"{"id": 7, "name": "Bobby"}"#])
        #expect(updated.stdout == "queued #2 update Person 7 (id, name)\n")
        let deleted = try await ReplicaTool.run(["delete", "--db", db, "Person", "8"])
        #expect(deleted.stdout == "queued #3 delete Person 8\n")
        #expect(deleted.status == 0, "\(deleted.stderr)")

        #expect(try await Self.rows(db) == """
            {"id":-1,"name":"Ann","numberOfKids":2,"kilometersWalked":null,"avatar":null}
            {"id":7,"name":"Bobby","numberOfKids":0,"kilometersWalked":null,"avatar":null}

            """)
        let list = try await ReplicaTool.run(["outbox", "--db", db])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout == """
            id  state    kind    entity  key  attempts  error
            --  -------  ------  ------  ---  --------  -----
            1   pending  create  Person  -1   0
            2   pending  update  Person  7    0
            3   pending  delete  Person  8    0
            (3 mutations)

            """)

        let discarded = try await ReplicaTool.run(["outbox", "--db", db, "discard", "2"])
        #expect(discarded.stdout == "discarded #2 update Person 7 (id, name)\n")
        #expect(discarded.status == 0, "\(discarded.stderr)")
        let notRejected = try await ReplicaTool.run(["outbox", "--db", db, "retry", "1"])
        #expect(notRejected.status == 1)
        #expect(notRejected.stderr == "Error: mutation #1 is pending, not rejected: there is nothing to retry\n")
        let missing = try await ReplicaTool.run(["outbox", "--db", db, "discard", "9"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "Error: the outbox has no mutation #9\n")
        let list2 = try await ReplicaTool.run(["outbox", "list", "--db", db])
        #expect(list2.stdout.hasSuffix("(2 mutations)\n"))
    }

    @Test("delete of a row whose create was never sent takes the create back: it says so, and the outbox is empty")
    func deleteTakesBack() async throws {
        let directory = try TemporaryDirectory("replica-outbox-cli")
        defer { directory.remove() }
        let db = try await Self.makeStore(directory)
        let created = try await ReplicaTool.run(["save", "--db", db, "Person", #"{"name": "Ann"}"#])
        #expect(created.stdout == "queued #1 create Person -1 (name)\n")
        let deleted = try await ReplicaTool.run(["delete", "--db", db, "Person", "-1"])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.stdout == "deleted Person -1 locally: its create was never sent, so it left the outbox and nothing is queued\n")
        let list = try await ReplicaTool.run(["outbox", "--db", db])
        #expect(list.stdout.hasSuffix("(0 mutations)\n"), "\(list.stdout)")
        #expect(try await Self.rows(db) == """
            {"id":7,"name":"Bob","numberOfKids":0,"kilometersWalked":null,"avatar":null}
            {"id":8,"name":"Cy","numberOfKids":1,"kilometersWalked":null,"avatar":null}

            """)
    }

    @Test("bad JSON, an unknown entity, key or value: one error line naming it, exit 1, nothing written",
          arguments: [
            (["save", "Person", #"{"name": "#], "Error: invalid JSON for Person: "),
            (["save", "Person", "[1]"], "Error: expected one JSON object for Person, found array; nothing was written\n"),
            (["save", "Pet", #"{"name": "Rex"}"#],
             "Error: unknown entity 'Pet' (the schema has: Person, Car); nothing was written\n"),
            (["save", "Person", #"{"name": "Ann", "shoe": 44}"#],
             "Error: Person has no attribute for the JSON key 'shoe' (its keys: id, name, numberOfKids, kilometersWalked, avatar); nothing was written\n"),
            (["save", "Person", #"{"numberOfKids": "two"}"#], "Error: Person.numberOfKids at /numberOfKids: "),
            (["save", "Person", "{}"], "Error: the JSON object gives no attribute of Person; nothing was written\n"),
            (["delete", "Person", "seven"], "Error: 'seven' is not a key of Person (id is integer)\n"),
            (["delete", "Pet", "1"], "Error: unknown entity 'Pet' (the schema has: Person, Car); nothing was written\n"),
            (["outbox", "retry", "x"], "Error: a mutation id is a whole number from 1 (as replica outbox lists it), not 'x'\n"),
            (["outbox", "resend", "1"], "Error: unknown action 'resend': give list, retry ID [JSON] or discard ID\n"),
          ])
    func refused(_ arguments: [String], _ error: String) async throws {
        let directory = try TemporaryDirectory("replica-outbox-cli-errors")
        defer { directory.remove() }
        let db = try await Self.makeStore(directory)
        let output = try await ReplicaTool.run([arguments[0], "--db", db] + arguments.dropFirst())
        #expect(output.status == (arguments[0] == "outbox" ? 64 : 1))
        #expect(output.stdout == "")
        if error.hasSuffix("\n") {
            #expect(output.stderr == error || output.stderr.hasPrefix(error + "Usage:"), "\(output.stderr)")
        } else {
            #expect(output.stderr.hasPrefix(error), "\(output.stderr)")
            #expect(output.stderr.hasSuffix("; nothing was written\n"), "\(output.stderr)")
            #expect(output.stderr.split(separator: "\n").count == 1, "\(output.stderr)")
        }
        let list = try await ReplicaTool.run(["outbox", "--db", db])
        #expect(list.stdout.hasSuffix("(0 mutations)\n"))
    }

    @Test("push: pending while the API is down (exit 2), confirmed once it is up (exit 0), the row takes the API's key")
    func pushDownThenUp() async throws {
        let directory = try TemporaryDirectory("replica-push-cli")
        defer { directory.remove() }
        let server = try await ServeProcess.start("--down", in: directory)
        defer { server.stop() }
        let db = directory.path("people.sqlite")
        let saved = try await ReplicaTool.run(["save", "--db", db, "--schema", Self.schema, "Person", #"{"name": "Ann"}"#])
        #expect(saved.stdout == "queued #1 create Person -1 (name)\n")

        let down = try await ReplicaTool.run(["push", "--db", db, "--base-url", server.baseURL, "--retries", "0"])
        #expect(down.status == 2)
        #expect(down.stdout == "0 confirmed, 0 rejected, 1 still pending\n")
        #expect(down.stderr.hasPrefix("Error: #1 create Person -1 (name) still pending: "), "\(down.stderr)")
        #expect(down.stderr.contains("503"), "\(down.stderr)")
        let list = try await ReplicaTool.run(["outbox", "--db", db])
        #expect(list.stdout.contains("1   pending  create  Person  -1   1         "), "\(list.stdout)")

        try await server.control("up")
        let up = try await ReplicaTool.run(["push", "--db", db, "--base-url", server.baseURL, "--header", "X-Test: 1"])
        #expect(up.status == 0, "\(up.stderr)")
        #expect(up.stdout == "1 confirmed, 0 rejected, 0 still pending\n")
        #expect(up.stderr == "")
        #expect(try await Self.rows(db) == #"{"id":1,"name":"Ann","numberOfKids":null,"kilometersWalked":null,"avatar":null}"# + "\n")
        let empty = try await ReplicaTool.run(["push", "--db", db, "--base-url", server.baseURL])
        #expect(empty.status == 0)
        #expect(empty.stdout == "0 confirmed, 0 rejected, 0 still pending\n")
    }

    @Test("push: a rejected update (404) exits 3 with the API's error; outbox shows it; discard removes it")
    func pushRejected() async throws {
        let directory = try TemporaryDirectory("replica-push-rejected")
        defer { directory.remove() }
        let server = try await ServeProcess.start(in: directory)
        defer { server.stop() }
        // Person 7 is local only: the API has no such person.
        let db = try await Self.makeStore(directory)
        _ = try await ReplicaTool.run(["save", "--db", db, "Person", #"{"id": 7, "name": "Bobby"}"#])
        let pushed = try await ReplicaTool.run(["push", "--db", db, "--base-url", server.baseURL])
        #expect(pushed.status == 3)
        #expect(pushed.stdout == "0 confirmed, 1 rejected, 0 still pending\n")
        #expect(pushed.stderr == """
            Error: #1 update Person 7 (id, name) rejected: HTTP 404 no people with id 7

            """)
        let list = try await ReplicaTool.run(["outbox", "--db", db])
        let error = "HTTP 404 no people with id 7"
        #expect(list.stdout == """
            id  state     kind    entity  key  attempts  error
            --  --------  ------  ------  ---  --------  \(String(repeating: "-", count: error.count))
            1   rejected  update  Person  7    1         \(error)
            (1 mutation)

            """)
        let retried = try await ReplicaTool.run(["outbox", "--db", db, "retry", "1", #"{"name": "Bob again"}"#])
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(retried.stdout == "pending again: #1 update Person 7 (name)\n")
        let discarded = try await ReplicaTool.run(["outbox", "--db", db, "discard", "1"])
        #expect(discarded.stdout == "discarded #1 update Person 7 (name)\n")
        #expect(try await ReplicaTool.run(["outbox", "--db", db]).stdout.hasSuffix("(0 mutations)\n"))
    }

    @Test("sync pushes the outbox before it pulls, and a push that cannot connect leaves the pull its own error")
    func syncPushesFirst() async throws {
        let directory = try TemporaryDirectory("replica-sync-push")
        defer { directory.remove() }
        let server = try await ServeProcess.start(in: directory)
        defer { server.stop() }
        let db = directory.path("people.sqlite")
        _ = try await ReplicaTool.run(["save", "--db", db, "--schema", Self.schema, "Person", #"{"name": "Ann"}"#])
        let synced = try await ReplicaTool.run(["sync", "--db", db, "--base-url", server.baseURL, "/people"])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stdout == "push: 1 confirmed, 0 rejected, 0 still pending\n/people: 200, inserted 0, updated 0, deleted 0 (1 objects)\n")
        #expect(try await Self.rows(db) == #"{"id":1,"name":"Ann","numberOfKids":null,"kilometersWalked":null,"avatar":null}"# + "\n")

        _ = try await ReplicaTool.run(["save", "--db", db, "Person", #"{"name": "Bea"}"#])
        // A port nothing listens on any more (the transport keeps trying to connect until --timeout).
        let gone = try await ServeProcess.start(in: directory)
        gone.stop()
        let closed = gone.baseURL
        let failed = try await ReplicaTool.run(["sync", "--db", db, "--base-url", closed, "--retries", "0", "--timeout", "3", "/people"])
        #expect(failed.status == 1)
        #expect(failed.stdout == "push: 0 confirmed, 0 rejected, 1 still pending\n")
        let errors = failed.stderr.split(separator: "\n")
        #expect(errors.count == 2, "\(failed.stderr)")
        #expect(errors.first?.hasPrefix("Error: #2 create Person -1 (name) still pending: ") == true, "\(failed.stderr)")
        #expect(errors.last?.hasPrefix("Error: /people: ") == true, "\(failed.stderr)")
    }

    @Test("watch marks the rows with pending mutations: a pending line when they change")
    func watchMarksPending() async throws {
        let directory = try TemporaryDirectory("replica-watch-pending")
        defer { directory.remove() }
        let db = try await Self.makeStore(directory)
        let watch = try LineReader.watch(["--db", db, "Person", "--sort", "id", "--poll", "20", "--duration", "60"])
        defer { watch.stop() }
        let lines = watch.lines
        #expect(await lines.next() == #"{"event":"snapshot","count":2,"keys":[7,8]}"#)
        _ = try await ReplicaTool.run(["save", "--db", db, "Person", #"{"name": "Ann"}"#])
        // The diff and the outbox are read by two checks: either may come first.
        let two = [await lines.next() ?? "", await lines.next() ?? ""].sorted()
        #expect(two == [#"{"event":"diff","count":3,"inserted":[-1],"updated":[],"moved":[],"deleted":[]}"#,
                        #"{"event":"pending","keys":[-1]}"#])
        _ = try await ReplicaTool.run(["outbox", "--db", db, "discard", "1"])
        // Discarded: the row keeps its local change, and is no longer marked.
        #expect(await lines.next() == #"{"event":"pending","keys":[]}"#)
    }
}
