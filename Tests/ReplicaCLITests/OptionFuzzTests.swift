import Foundation
import ReplicaTestSupport
import Testing

/// Hostile values for every numeric option: each is refused with exit code 64 and an error line
/// naming the option and what to give, never a trap.
@Suite("replica options: hostile values")
struct OptionFuzzTests {
    static let badSeconds = ["inf", "-inf", "nan", "1e300", "-1", "0", "99999999999", "-0.5"]

    /// (arguments before the option, the option): every option that takes seconds.
    static let secondsOptions: [([String], String)] = [
        (["sync", "--db", "never.sqlite", "--base-url", "http://127.0.0.1:9", "/people"], "--every"),
        (["sync", "--db", "never.sqlite", "--base-url", "http://127.0.0.1:9", "/people"], "--timeout"),
        (["demo"], "--every"),
        (["demo"], "--change-every"),
        (["demo"], "--duration"),
        (["watch", "--db", "never.sqlite", "User"], "--duration"),
    ]

    static var secondsCases: [([String], String, String)] {
        secondsOptions.flatMap { prefix, option in badSeconds.map { (prefix, option, $0) } }
    }

    @Test("options that take seconds refuse non-finite, negative, zero and huge values", arguments: secondsCases)
    func seconds(prefix: [String], option: String, value: String) async throws {
        // `--option=value`: a negative value after a space would be read as another option.
        let output = try await ReplicaTool.run(prefix + ["\(option)=\(value)"])
        #expect(!output.signaled, "\(option) \(value) trapped")
        #expect(output.status == 64, "\(option) \(value): \(output.stderr)")
        let first = output.stderr.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("Error: \(option) takes a number of seconds above 0 up to 31536000, not "), "\(first)")
    }

    static let wholeNumberCases: [([String], String)] = [
        (["demo", "--users", "0"], "Error: --users takes a whole number from 1 to 1000000, not 0"),
        (["demo", "--latency", "60001"], "Error: --latency takes a whole number of milliseconds from 0 to 60000, not 60001"),
        (["demo", "--concurrency=-3"], "Error: --concurrency takes a whole number from 1 to 1024, not -3"),
        (["watch", "--db", "never.sqlite", "User", "--poll", "0"],
         "Error: --poll takes a whole number of milliseconds from 10 to 3600000, not 0"),
        (["query", "--db", "never.sqlite", "User", "--limit=-1"],
         "Error: --limit takes a whole number of rows from 0 to 2147483647, not -1"),
        (["serve", "--port", "70000"], "Error: --port takes a whole number from 0 to 65535, not 70000"),
        (["serve", "--max-body", "0"], "Error: --max-body takes a whole number of bytes from 1 to 1073741824, not 0"),
        (["serve", "--fail-rate", "nan"], "Error: --fail-rate takes a probability from 0 to 1, not nan"),
        (["serve", "--latency", "5-99999999999"],
         "Error: --latency takes MIN-MAX in milliseconds from 0 to 60000 (e.g. 50-200), not '5-99999999999'"),
        (["serve", "--page-size", "0"], "Error: --page-size takes a whole number from 1 to 1000000000, not 0"),
        (["serve", "--max-page-size", "1000000001"], "Error: --max-page-size takes a whole number from 1 to 1000000000, not 1000000001"),
        (["serve", "--rate-limit", "5/inf"], "Error: --rate-limit takes N/SECONDS, a whole number of requests from 1 and seconds above 0 up to 86400 (e.g. 5/1), not '5/inf'"),
        (["serve", "--rate-limit", "5/nan"], "Error: --rate-limit takes N/SECONDS, a whole number of requests from 1 and seconds above 0 up to 86400 (e.g. 5/1), not '5/nan'"),
        (["serve", "--rate-limit", "5/-1"], "Error: --rate-limit takes N/SECONDS, a whole number of requests from 1 and seconds above 0 up to 86400 (e.g. 5/1), not '5/-1'"),
        (["serve", "--rate-limit", "99999999999999999999/1"], "Error: --rate-limit takes N/SECONDS, a whole number of requests from 1 and seconds above 0 up to 86400 (e.g. 5/1), not '99999999999999999999/1'"),
        (["serve", "--pagination", "=cursor"], "Error: --pagination takes STYLE, RESOURCE=STYLE or /PATH=STYLE, not '=cursor'"),
        (["sync", "--db", "never.sqlite", "--base-url", "http://127.0.0.1:9", "/p", "--header", ": v"],
         "Error: --header takes 'Name: value' with a name of letters, digits and -, not ': v'"),
        (["sync", "--db", "never.sqlite", "--base-url", "http://127.0.0.1:9", "/p", "--header", "X"],
         "Error: --header takes 'Name: value' with a name of letters, digits and -, not 'X'"),
        (["sync", "--db", "never.sqlite", "--base-url", "http://127.0.0.1:9", "/p", "--header", "Bad Name: v"],
         "Error: --header takes 'Name: value' with a name of letters, digits and -, not 'Bad Name: v'"),
        (["demo", "--every", "abc"], "Error: The value 'abc' is invalid for '--every <every>'"),
    ]

    @Test("whole numbers, probabilities, ranges and headers out of range are refused with one line", arguments: wholeNumberCases)
    func wholeNumbers(arguments: [String], expected: String) async throws {
        let output = try await ReplicaTool.run(arguments)
        #expect(!output.signaled)
        #expect(output.status == 64, "\(output.stderr)")
        #expect(output.stderr.split(separator: "\n").first.map(String.init) == expected, "\(output.stderr)")
    }

    @Test("a header with an empty value is a header, not a trap")
    func emptyHeaderValue() async throws {
        let directory = try TemporaryDirectory("replica-opt")
        defer { directory.remove() }
        let output = try await ReplicaTool.run(["sync", "--db", directory.path("p.sqlite"),
                                          "--schema", "Schemas/people.json", "--base-url", "http://127.0.0.1:9",
                                          "--header", "X:", "--timeout", "2", "/people"])
        #expect(!output.signaled)
        #expect(output.status == 1, "\(output.stderr)")
        #expect(output.stderr.contains("/people: "), "\(output.stderr)")
    }
}
