import ArgumentParser
import Foundation
import Replica

/// The options that select rows, shared by `replica query` and `replica watch`.
struct QueryOptions: ParsableArguments {
    @Option(help: "The SQLite database file.")
    var db: String

    @Argument(help: "The entity (or table) name.")
    var entity: String

    @Option(name: .customLong("where"), help: "An SQL where-clause over attribute names.")
    var predicate: String?

    @Option(name: .customLong("arg"), parsing: .unconditionalSingleValue, help: "A value for the next ? in --where (may start with '-').")
    var arguments: [String] = []

    @Option(parsing: .unconditional, help: "Comma-separated attributes; '-' means descending (-createdAt,name).")
    var sort: String?

    @Option(help: "The most rows.")
    var limit: Int?

    func validate() throws {
        if let limit { try OptionChecks.integer(limit, option: "--limit", in: 0...Int(Int32.max), unit: "of rows") }
    }

    /// The store at `db`, with its recorded schema; a missing file is an error, not a new database.
    func openStore() throws -> Store {
        guard FileManager.default.fileExists(atPath: db) else { throw CLIError("\(db): no such database file") }
        do {
            return try Store(path: db)
        } catch let error as StoreError {
            throw CLIError(error.description)
        }
    }

    /// The `--arg` values: integers and decimals as numbers, anything else as text.
    var boundArguments: [AttributeValue] { arguments.map(Self.argument) }

    /// The `--sort` keys.
    func sortKeys() throws -> [SortKey] { try sort.map(SortKey.parseList) ?? [] }

    /// A command-line value bound as an integer, a double or text.
    static func argument(_ text: String) -> AttributeValue {
        if let integer = Int64(text) { return .integer(integer) }
        if let double = Double(text), double.isFinite, text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            return .double(double)
        }
        return .string(text)
    }
}
