import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs one README console session and reports how it differs from what README.md shows.
///
/// How a session runs (README.md's testing section points here):
/// - In a new temporary directory holding a `Schemas` link to the package's `Schemas/`, each
///   command runs with `/bin/sh -c`, `swift run replica` replaced by the built executable;
///   standard output and error go to one file, in the order they are written, so the lines
///   compared are those a terminal would show (a last line without a newline counts as a line).
///   Standard input is empty and standard output is not a terminal: `replica` prints no progress
///   bar and `replica watch` prints JSON lines.
/// - A command ending in `&` runs in the background until the session ends. `--port N` in it
///   becomes `--port 0`; the port it printed (`http://HOST:PORT`) then replaces `:N` in every
///   later command and in the lines README shows. It is ready when it has printed the lines shown
///   under it or, when none are shown, when the file its standard output is redirected to holds a
///   line; at the end of the session, what it printed must be exactly the lines shown.
/// - `cat FILE` of a file a background command writes waits (up to ``readyTimeout``) until FILE
///   holds as many lines as README shows under it: the watcher or server may still be writing.
/// - Lines are compared exactly after ``OutputNormalization``. A command whose shown output has
///   an `Error: ` line must exit non-zero, any other must exit 0.
/// - Background commands are stopped at the end of the session (SIGTERM to their process group,
///   SIGKILL after 10 s), failed or not.
final class ConsoleSessionRunner {
    /// Seconds one command may take before it is stopped and the session fails.
    static let commandTimeout: TimeInterval = 300
    /// Seconds a background command may take to be ready, and a watched file to fill.
    static let readyTimeout: TimeInterval = 120

    /// A command running in the background, and the files its redirections write.
    private struct Background {
        var command: ConsoleCommand
        var job: ShellJob
        var writes: [String]
        var standardOutputFile: String?
    }

    private let session: ConsoleSession
    private let executable: String
    private let packageRoot: URL
    private let root: URL
    private let work: URL
    private var background: [Background] = []
    /// README port → port the server got.
    private var ports: [(readme: String, actual: String)] = []
    private var failures: [String] = []
    private var outputCount = 0

    /// Runs `session` on a thread of its own (child processes are waited for there, never on
    /// Swift's cooperative threads) and returns its failures, each naming README lines.
    ///
    /// ```swift
    /// let failures = await ConsoleSessionRunner.run(session, executable: replica, packageRoot: root)
    /// ```
    static func run(_ session: ConsoleSession, executable: String, packageRoot: URL) async -> [String] {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                let runner = ConsoleSessionRunner(session: session, executable: executable, packageRoot: packageRoot)
                continuation.resume(returning: runner.runBlocking())
            }
            thread.start()
        }
    }

    private init(session: ConsoleSession, executable: String, packageRoot: URL) {
        self.session = session
        self.executable = executable
        self.packageRoot = packageRoot
        root = FileManager.default.temporaryDirectory.appendingPathComponent("replica-readme-\(UUID().uuidString)")
        work = root.appendingPathComponent("session")
    }

    private func runBlocking() -> [String] {
        do {
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: work.appendingPathComponent("Schemas"),
                                                       withDestinationURL: packageRoot.appendingPathComponent("Schemas"))
        } catch {
            return ["session \(session.name): cannot prepare its directory \(work.path): \(error)"]
        }
        defer {
            for running in background { running.job.stop() }
            try? FileManager.default.removeItem(at: root)
        }
        for command in session.commands {
            let goOn = command.isBackground ? start(command) : run(command)
            guard goOn else {
                failures.append("session \(session.name) stopped at README.md:\(command.line); its later commands did not run")
                return failures
            }
        }
        for running in background {
            compare(running.command, actual: OutputFile.lines(running.job.outputPath), status: nil,
                    what: "printed on the terminal, by the end of the session,")
        }
        return failures
    }

    // MARK: Commands

    /// Runs a foreground command and compares its output; `false` when the session cannot go on.
    private func run(_ command: ConsoleCommand) -> Bool {
        if let file = Self.catTarget(command.text) {
            let path = resolve(file)
            let writers = background.filter { $0.writes.contains(path) }
            if !writers.isEmpty {
                let deadline = Date().addingTimeInterval(Self.readyTimeout)
                while OutputFile.lineCount(path) < command.expected.count && Date() < deadline
                        && writers.contains(where: { $0.job.poll() == nil }) {
                    usleep(10_000)
                }
            }
        }
        let job: ShellJob
        do {
            job = try ShellJob(command: shellCommand(command.text), directory: work.path, outputPath: nextOutputPath())
        } catch {
            failures.append("README.md:\(command.line): `\(command.firstLine)` could not start: \(error)")
            return false
        }
        guard let status = job.wait(until: Date().addingTimeInterval(Self.commandTimeout)) else {
            job.stop()
            failures.append("README.md:\(command.line): `\(command.firstLine)` did not finish within \(Int(Self.commandTimeout)) s; "
                            + "its output:\n" + OutputFile.lines(job.outputPath).joined(separator: "\n"))
            return false
        }
        job.stop(grace: 2)   // anything it left running in its group
        compare(command, actual: OutputFile.lines(job.outputPath), status: status, what: "printed")
        return true
    }

    /// Starts a background command and waits until it is ready; `false` when the session cannot go on.
    private func start(_ command: ConsoleCommand) -> Bool {
        var text = String(command.text.dropLast()).trimmingCharacters(in: .whitespaces)
        var readmePort: String?
        if let match = text.firstMatch(of: #/--port[ =]([0-9]+)/#), match.1 != "0" {
            readmePort = String(match.1)
            text.replaceSubrange(match.range, with: "--port 0")
        }
        let redirects = Self.redirections(in: text)
        let standardOutputFile = redirects.first { $0.descriptor == 1 }.map { resolve($0.file) }
        let job: ShellJob
        do {
            job = try ShellJob(command: shellCommand(text), directory: work.path, outputPath: nextOutputPath())
        } catch {
            failures.append("README.md:\(command.line): `\(command.firstLine)` could not start: \(error)")
            return false
        }
        background.append(Background(command: command, job: job, writes: redirects.map { resolve($0.file) },
                                      standardOutputFile: standardOutputFile))
        let deadline = Date().addingTimeInterval(Self.readyTimeout)
        let ready: Bool
        let awaited: String
        if !command.expected.isEmpty {
            awaited = "the \(command.expected.count) lines README.md shows under it"
            ready = job.wait(until: deadline) { OutputFile.lineCount(job.outputPath) >= command.expected.count }
        } else if let standardOutputFile {
            awaited = "a first line in \(standardOutputFile)"
            ready = job.wait(until: deadline) { OutputFile.lineCount(standardOutputFile) >= 1 }
        } else {
            failures.append("README.md:\(command.line): the background command `\(command.firstLine)` shows no output and does "
                            + "not redirect its standard output to a file: the test cannot tell when it is ready")
            return false
        }
        guard ready, job.poll() == nil else {
            let why = job.poll().map { "ended with status \($0)" } ?? "is not ready after \(Int(Self.readyTimeout)) s"
            var message = "README.md:\(command.line): the background command `\(command.firstLine)` \(why) (awaiting \(awaited)); "
                + "it printed:\n" + OutputFile.lines(job.outputPath).joined(separator: "\n")
            for file in redirects.map({ resolve($0.file) }) {
                message += "\nand wrote to \(file):\n" + OutputFile.lines(file).joined(separator: "\n")
            }
            failures.append(message)
            return false
        }
        if let readmePort {
            let printed = OutputFile.lines(job.outputPath) + (standardOutputFile.map(OutputFile.lines) ?? [])
            guard let port = printed.lazy.compactMap({ $0.firstMatch(of: #/http://[^/:\s]+:([0-9]+)/#) }).first?.1 else {
                failures.append("README.md:\(command.line): `\(command.firstLine)` printed no http://HOST:PORT address: "
                                + printed.joined(separator: "\n"))
                return false
            }
            ports.append((readmePort, String(port)))
        }
        return true
    }

    // MARK: Comparing

    /// Records a failure when `actual` differs from the lines README shows under `command`
    /// (after normalization), or when the exit status does not fit them.
    private func compare(_ command: ConsoleCommand, actual: [String], status: Int32?, what: String) {
        let expected = command.expected.map(substitutingPorts)
        if expected.map(OutputNormalization.normalize) != actual.map(OutputNormalization.normalize) {
            var message = "README.md:\(command.line): `\(command.firstLine)` \(what) other lines than README.md shows under it"
            if !ports.isEmpty { message += " (ports: " + ports.map { "\($0.readme) is \($0.actual)" }.joined(separator: ", ") + ")" }
            var listed = 0
            for index in 0 ..< max(expected.count, actual.count) {
                let shown = index < expected.count ? expected[index] : nil
                let printed = index < actual.count ? actual[index] : nil
                guard shown.map(OutputNormalization.normalize) != printed.map(OutputNormalization.normalize) else { continue }
                listed += 1
                if listed > 20 { message += "\n  …"; break }
                let place = index < expected.count ? "README.md:\(command.outputLine + index)" : "after README.md:\(command.outputLine - 1 + expected.count)"
                message += "\n  \(place)\n    expected: \(shown ?? "(no line)")\n    actual:   \(printed ?? "(no line)")"
            }
            failures.append(message)
        }
        guard let status else { return }
        let showsError = expected.contains { $0.hasPrefix("Error: ") }
        if showsError && status == 0 {
            failures.append("README.md:\(command.line): `\(command.firstLine)` shows an error but exited 0")
        } else if !showsError && status != 0 {
            failures.append("README.md:\(command.line): `\(command.firstLine)` exited with status \(status), but README.md shows no error")
        }
    }

    // MARK: Helpers

    /// The command line for the shell: the built executable for `swift run replica`, the real ports.
    private func shellCommand(_ text: String) -> String {
        substitutingPorts(text.replacingOccurrences(of: "swift run replica", with: ShellJob.quoted(executable)))
    }

    /// `text` with `:PORT` of every README port replaced by the port the server got.
    private func substitutingPorts(_ text: String) -> String {
        var text = text
        for port in ports {
            text = text.replacing(#/:([0-9]+)(?![0-9])/#) { match in match.1 == port.readme ? ":" + port.actual : String(match.0) }
        }
        return text
    }

    /// The absolute path of a file a command names, relative to the session's directory.
    private func resolve(_ file: String) -> String {
        file.hasPrefix("/") ? file : work.appendingPathComponent(file).path
    }

    /// A new file outside the session's directory for a command's terminal output.
    private func nextOutputPath() -> String {
        outputCount += 1
        return root.appendingPathComponent("terminal-\(outputCount).txt").path
    }

    /// The file of a plain `cat FILE`, or `nil` for any other command.
    static func catTarget(_ text: String) -> String? {
        guard let match = text.wholeMatch(of: #/cat ([^\s;&|<>'"]+)/#) else { return nil }
        return String(match.1)
    }

    /// The files `text` redirects output to (`> FILE`, `2> FILE`, `>> FILE`), /dev/ excepted,
    /// with the descriptor each one is for.
    static func redirections(in text: String) -> [(descriptor: Int, file: String)] {
        text.matches(of: #/(?:^|\s)([0-9]?)>>?\s*([^\s;&|<>'"]+)/#).compactMap { match in
            let file = String(match.2)
            guard !file.hasPrefix("/dev/") else { return nil }
            return (Int(match.1) ?? 1, file)
        }
    }
}

/// The parts of the sessions' output that vary from run to run. Each is replaced by a placeholder,
/// in README's lines and the printed ones alike, before they are compared; everything else must
/// match exactly. Ports are not here: ``ConsoleSessionRunner`` puts the real ones in README's lines.
enum OutputNormalization {
    static func normalize(_ line: String) -> String {
        var line = line
        // `replica import`: "… in 0.01 s, 400 objects/s".
        line = line.replacing(#/\bin [0-9]+\.[0-9]+ s\b/#, with: "in ‹seconds› s")
        line = line.replacing(#/\b[0-9][0-9,]* objects\/s\b/#, with: "‹rate› objects/s")
        // `replica sync --every`'s status lines: "/people: ok 0.0 s ago (… in 4 ms), next in 30.0 s".
        line = line.replacing(#/\bok [0-9]+\.[0-9] s ago\b/#, with: "ok ‹seconds› s ago")
        line = line.replacing(#/\bin [0-9]+ ms\)/#, with: "in ‹milliseconds› ms)")
        // `replica serve`'s request log: "GET /people 200 0.55ms".
        line = line.replacing(#/^([A-Z]+ \S+ (?:[0-9]{3}|dropped)) [0-9]+\.[0-9]+ms$/#) { "\($0.1) ‹duration›ms" }
        // The mock server's change-feed cursor: its first part names the server's run.
        line = line.replacing(#/^X-Cursor: [0-9a-z]+\.[0-9]+$/#, with: "X-Cursor: ‹cursor›")
        // HTTP dates in response headers.
        line = line.replacing(#/^(Date|Last-Modified): [A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} GMT$/#) {
            "\($0.1): ‹HTTP date›"
        }
        return line
    }
}
