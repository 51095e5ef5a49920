import ArgumentParser
import Foundation
import Replica
import ReplicaPostgres

struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print rows of an entity.",
        discussion: """
            The where-clause is SQL over attribute names with ? placeholders, bound in order to the \
            --arg values: numbers as numbers, anything else as text, or as typed with s:TEXT, i:INTEGER, \
            d:DECIMAL and null (booleans are 1 and 0). --format json prints one JSON array, ndjson one \
            JSON object per line.
            Example: replica query --db blog.sqlite Post --where 'userID = ?' --arg 3 --sort -createdAt --limit 5
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table
        case json
        case ndjson
    }

    @OptionGroup var query: QueryOptions

    @Option(help: "table (aligned, for terminals), json (one JSON array) or ndjson (one JSON object per line).")
    var format: Format = .table

    func run() async throws {
        let opened = PostgresURL.isPostgres(query.db) ? try await OpenedStore.open(db: query.db, schema: nil)
            : try OpenedStore.open(sqlite: query.openStore())
        try await opened.using { try await printRows(of: $0.store) }
    }

    func printRows(of store: any ReplicaStore) async throws {
        do {
            let rows = try await store.rows(RowQuery(query.entity, where: query.predicate, arguments: query.boundArguments,
                                                     sort: try query.sortKeys(), limit: query.limit))
            guard let resolved = store.schema.entity(named: query.entity) else {
                let known = store.schema.entities.map(\.name).joined(separator: ", ")
                throw StoreError(.unknownEntity, "unknown entity '\(query.entity)' (the schema has: \(known))", path: store.location)
            }
            switch format {
            case .table:
                let table = TextTable(columns: resolved.attributes.map(\.name),
                                      rows: rows.map { $0.values.map(TextTable.cell) })
                print(table.render(maxWidth: Terminal.width(of: STDOUT_FILENO)), terminator: "")
                print("(\(rows.count) \(rows.count == 1 ? "row" : "rows"))")
            case .json:
                print("[" + rows.map { JSONValue.object($0.jsonObject).serialized() }.joined(separator: ",\n") + "]")
            case .ndjson:
                for row in rows { print(JSONValue.object(row.jsonObject).serialized()) }
            }
        } catch let error as StoreError {
            throw CLIError(error.description)
        }
    }
}
