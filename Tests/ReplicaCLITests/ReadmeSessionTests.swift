import Foundation
import ReplicaTestSupport
import Testing

/// README.md's terminal sessions, run: every ```console block (see ``ReadmeConsole`` for the
/// markup, ``ConsoleSessionRunner`` for how a session runs and what may differ), and the summary
/// `replica demo` prints, compared line by line with its numbers left out.
@Suite("README console sessions")
struct ReadmeSessionTests {
    /// README.md, read once.
    static let readme: ReadmeConsole = {
        let url = packageRoot.appendingPathComponent("README.md")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else {
            var empty = ReadmeConsole(markdown: "")
            empty.problems.append("cannot read \(url.path)")
            return empty
        }
        return ReadmeConsole(markdown: text)
    }()

    /// The sessions' names, the test's arguments.
    static let sessionNames: [String] = readme.sessions.map(\.name)

    /// The built `replica`.
    static var executable: String { ReplicaTool.productsDirectory.appendingPathComponent("replica").path }

    @Test("README.md's console blocks and their markers are well formed, and the sessions are all there")
    func wellFormed() {
        let readme = Self.readme
        for problem in readme.problems { Issue.record(Comment(rawValue: problem)) }
        // The sessions README.md tells, so that one lost to a markup slip is noticed.
        let names = Set(readme.sessions.map(\.name))
        for name in ["blog", "resteasy", "sync", "paged", "writing"] {
            #expect(names.contains(name), "README.md has no console block in session '\(name)'")
        }
        #expect(readme.blocks.count >= 10, "README.md has \(readme.blocks.count) console blocks")
        #expect(readme.checkedBlocks.map(\.name) == ["demo-summary"])
    }

    @Test("malformed markup is reported with its README line")
    func malformedMarkup() {
        let markdown = """
            <!-- session: lost -->
            Some prose.

            ```console
            stray output
            $ cat > a.txt <<'EOF'
            never ended
            ```

            <!-- check: demo-summary -->
            ```console
            $ true
            ```
            """
        #expect(ReadmeConsole(markdown: markdown).problems == [
            "README.md:1: `<!-- session: lost -->` is not followed by a code block",
            "README.md:5: output before the first `$ ` command of the block",
            "README.md:6: the here-document is never ended by a line `EOF`",
            "README.md:4: a console block with no `$ ` command",
            "README.md:10: `<!-- check: … -->` does not fit the ```console block after it "
                + "(session: goes before ```console, check: before ```text)",
        ])
    }

    @Test("every README console session prints what README.md shows", arguments: sessionNames)
    func session(_ name: String) async throws {
        let session = try #require(Self.readme.sessions.first { $0.name == name })
        let failures = await ConsoleSessionRunner.run(session, executable: Self.executable, packageRoot: packageRoot)
        for failure in failures { Issue.record(Comment(rawValue: failure)) }
    }

    @Test("a shown line that differs fails, naming its README line, the command, and the lines expected and printed")
    func mismatchIsReported() async throws {
        let markdown = """
            Intro.

            <!-- session: self-test -->
            ```console
            $ printf 'one\\ntwo\\n'
            one
            too
            $ echo 'Error: shown'
            Error: shown
            $ true
            ```
            """
        let readme = ReadmeConsole(markdown: markdown)
        #expect(readme.problems.isEmpty, "\(readme.problems)")
        let session = try #require(readme.sessions.first)
        #expect(session.name == "self-test")
        #expect(session.commands.map(\.line) == [5, 8, 10])
        let failures = await ConsoleSessionRunner.run(session, executable: Self.executable, packageRoot: packageRoot)
        #expect(failures.count == 2, "\(failures)")
        #expect(failures.first == """
            README.md:5: `printf 'one\\ntwo\\n'` printed other lines than README.md shows under it
              README.md:7
                expected: too
                actual:   two
            """)
        #expect(failures.last == "README.md:8: `echo 'Error: shown'` shows an error but exited 0")
    }

    @Test("background commands: a rewritten port, readiness from the first lines, a `cat` that waits, a stop at the end")
    func backgroundCommands() async throws {
        // A stand-in server: prints an address with the port it "got" (4 and its pid), writes a
        // line to standard error a moment later, then waits to be stopped.
        let markdown = """
            <!-- session: self-test -->
            ```console
            $ printf '%s\\n' 'echo "Listening on http://127.0.0.1:4$$"' 'sleep 0.5' 'echo late >&2' 'exec sleep 600' > server.sh
            $ sh server.sh --port 8888 2> late.txt &
            Listening on http://127.0.0.1:8888
            $ cat late.txt
            late
            $ echo 8888 http://127.0.0.1:8888/people
            8888 http://127.0.0.1:8888/people
            $ printf '%s\\n' ':8''888'
            :8888
            $ sh -c 'echo up; exec sleep 600' &
            up
            ```
            """
        let readme = ReadmeConsole(markdown: markdown)
        #expect(readme.problems.isEmpty, "\(readme.problems)")
        let session = try #require(readme.sessions.first)
        let started = Date()
        let failures = await ConsoleSessionRunner.run(session, executable: Self.executable, packageRoot: packageRoot)
        // `cat late.txt` waited for the line; `echo` got the real port in its command and its
        // expected line alike; the literal ":8888" printed is not README's ":8888" any more.
        #expect(failures.count == 1, "\(failures)")
        let failure = failures.first ?? ""
        #expect(failure.hasPrefix("README.md:10: `printf '%s\\n' ':8''888'` printed other lines"), "\(failure)")
        #expect(failure.contains("expected: :4"), "\(failure)")
        #expect(failure.contains("actual:   :8888"), "\(failure)")
        // The sleeps were stopped at the end, not waited for.
        #expect(Date().timeIntervalSince(started) < 120)
    }

    @Test("README.md's `replica demo` summary has the lines a short demo prints, numbers and times aside")
    func demoSummary() async throws {
        let block = try #require(Self.readme.checkedBlocks.first { $0.name == "demo-summary" })
        let directory = try TemporaryDirectory("replica-readme-demo")
        defer { directory.remove() }
        // TMPDIR puts the default database (and the demo's server file) in `directory`.
        let command = "TMPDIR=\(ShellJob.quoted(directory.path)) \(ShellJob.quoted(Self.executable)) demo "
            + "--users 40 --latency 2 --change-every 0.2 --every 0.3 --duration 2"
        let run = await ShellJob.run(command, in: directory.path, output: directory.path("terminal.txt"),
                                     timeout: ConsoleSessionRunner.commandTimeout)
        #expect(run.status == 0, "\(run.lines.joined(separator: "\n"))")
        let printed = run.lines.map { $0.replacingOccurrences(of: directory.path + "/replica-demo/", with: "/tmp/replica-demo/") }
        let shown = block.lines
        #expect(printed.count == shown.count,
                "README.md:\(block.line): \(shown.count) lines shown, the demo printed:\n\(run.lines.joined(separator: "\n"))")
        for (index, line) in shown.enumerated() {
            let actual = index < printed.count ? printed[index] : "(no line)"
            #expect(Self.withoutNumbers(line) == Self.withoutNumbers(actual),
                    "README.md:\(block.line + 1 + index)\n  expected: \(line)\n  actual:   \(actual)")
        }
    }

    /// `line` with every number (`1,000`, `0.2`, the parts of an address) as `#`.
    static func withoutNumbers(_ line: String) -> String {
        line.replacing(#/[0-9][0-9,]*(?:\.[0-9]+)?/#, with: "#")
    }

    @Test("the normalization leaves out times, rates and HTTP dates, nothing else")
    func normalization() {
        #expect(OutputNormalization.normalize("inserted 3, updated 0, deleted 0, skipped 0 (3 objects, 286 bytes) in 0.01 s, 400 objects/s")
                == "inserted 3, updated 0, deleted 0, skipped 0 (3 objects, 286 bytes) in ‹seconds› s, ‹rate› objects/s")
        #expect(OutputNormalization.normalize("GET /cars?color=red&_page=1&_limit=1 200 12.5ms") == "GET /cars?color=red&_page=1&_limit=1 200 ‹duration›ms")
        #expect(OutputNormalization.normalize("Date: Sun, 22 Nov 2026 05:05:47 GMT") == "Date: ‹HTTP date›")
        #expect(OutputNormalization.normalize("Last-Modified: Sun, 22 Nov 2026 05:05:47 GMT") == "Last-Modified: ‹HTTP date›")
        for kept in ["ETag: \"6f53a9c296ea14b2\"", "X-Total-Count: 1", "/people: 200, inserted 2, updated 0, deleted 0 (2 objects)"] {
            #expect(OutputNormalization.normalize(kept) == kept)
        }
    }
}
