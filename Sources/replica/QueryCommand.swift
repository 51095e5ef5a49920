import ArgumentParser
import Foundation
import Replica

struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print rows of an entity.",
        discussion: """
            The where-clause is SQL over attribute names with ? placeholders, bound in order to the \
            --arg values (numbers are bound as numbers, anything else as text; booleans are 1 and 0).
            Example: replica query --db blog.sqlite Post --where 'userID = ?' --arg 3 --sort -createdAt --limit 5
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table
        case json
    }

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

    @Option(help: "The most rows to print.")
    var limit: Int?

    @Option(help: "table (aligned, for terminals) or json (one object per line, for scripts).")
    var format: Format = .table

    func run() async throws {
        guard FileManager.default.fileExists(atPath: db) else {
            throw CLIError("\(db): no such database file")
        }
        do {
            let store = try Store(path: db)
            let sortKeys = try sort.map(SortKey.parseList) ?? []
            let rows = try store.rows(entity, where: predicate, arguments: arguments.map(Self.argument),
                                      sort: sortKeys, limit: limit)
            let resolved = try store.requireEntity(entity)
            switch format {
            case .table:
                let table = TextTable(columns: resolved.attributes.map(\.name),
                                      rows: rows.map { $0.values.map(TextTable.cell) })
                print(table.render(maxWidth: Terminal.width(of: STDOUT_FILENO)), terminator: "")
                print("(\(rows.count) \(rows.count == 1 ? "row" : "rows"))")
            case .json:
                print("[" + rows.map { JSONValue.object($0.jsonObject).serialized() }.joined(separator: ",\n") + "]")
            }
        } catch let error as StoreError {
            throw CLIError(error.description)
        }
    }

    /// A command-line value bound as an integer, a double or text.
    static func argument(_ text: String) -> AttributeValue {
        if let integer = Int64(text) { return .integer(integer) }
        if let double = Double(text), double.isFinite, text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            return .double(double)
        }
        return .string(text)
    }
}
