import ArgumentParser
import Foundation
import Replica

/// The options that select rows, shared by `replica query` and `replica watch`.
struct QueryOptions: ParsableArguments {
    @Option(help: "The SQLite database file, or a PostgreSQL database: postgres://USER@HOST:PORT/DATABASE[?sslmode=MODE&sslrootcert=FILE].")
    var db: String

    @Argument(help: "The entity (or table) name.")
    var entity: String

    @Option(name: .customLong("where"), help: "An SQL where-clause over attribute names.")
    var predicate: String?

    @Option(name: .customLong("arg"), parsing: .unconditionalSingleValue,
            help: "A value for the next ? in --where (may start with '-'): a number or text as written, or typed: s:TEXT, i:INTEGER, d:DECIMAL, null.")
    var arguments: [String] = []

    @Option(parsing: .unconditional, help: "Comma-separated attributes; '-' means descending (-createdAt,name).")
    var sort: String?

    @Option(help: "The most rows.")
    var limit: Int?

    func validate() throws {
        for argument in arguments { _ = try Self.argument(argument) }
        if let limit { try OptionChecks.integer(limit, option: "--limit", in: 0...Int(Int32.max), unit: "of rows") }
    }

    /// The store at `db`, with its recorded schema, opened read-only: it never takes the write
    /// lock, so it reads while other processes write. A missing file is an error, not a new database.
    func openStore() throws -> Store {
        guard FileManager.default.fileExists(atPath: db) else { throw CLIError("\(db): no such database file") }
        do {
            return try Store(path: db, options: StoreOptions(readOnly: true))
        } catch let error as StoreError {
            throw CLIError(error.description)
        }
    }

    /// The `--arg` values: integers and decimals as numbers, anything else as text.
    var boundArguments: [AttributeValue] { arguments.compactMap { try? Self.argument($0) } }

    /// The `--sort` keys.
    func sortKeys() throws -> [SortKey] { try sort.map(SortKey.parseList) ?? [] }

    /// A command-line value: `s:TEXT` is text (`s:02134` keeps its zero), `i:INTEGER` an
    /// integer, `d:DECIMAL` a double, `null` NULL; anything else an integer or a decimal when it
    /// reads as one, else text.
    ///
    /// ```swift
    /// try QueryOptions.argument("02134")     // .integer(2134)
    /// try QueryOptions.argument("s:02134")   // .string("02134")
    /// ```
    ///
    /// - Throws: `ValidationError` when a typed value is not of its type.
    static func argument(_ text: String) throws -> AttributeValue {
        if text == "null" { return .null }
        if text.hasPrefix("s:") { return .string(String(text.dropFirst(2))) }
        if text.hasPrefix("i:") {
            guard let integer = Int64(text.dropFirst(2)) else {
                throw ValidationError("--arg \(text): i: takes a whole number from \(Int64.min) to \(Int64.max)")
            }
            return .integer(integer)
        }
        if text.hasPrefix("d:") {
            guard let double = Double(text.dropFirst(2)), double.isFinite else {
                throw ValidationError("--arg \(text): d: takes a finite decimal number such as 1.5 or 2e-3")
            }
            return .double(double)
        }
        if let integer = Int64(text) { return .integer(integer) }
        if let double = Double(text), double.isFinite, text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            return .double(double)
        }
        return .string(text)
    }
}
