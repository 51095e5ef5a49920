import ArgumentParser
import Foundation
import Replica
import ReplicaPostgres

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a JSON file (or standard input) into the store, in one transaction.",
        discussion: """
            With --entity the file holds a top-level array (or one object) of that entity; --var name=value \
            scopes it (fills the attribute where objects lack it, bounds stale-row deletion). With --route the \
            file is read as that path's response (envelope, namespace, DATA, MANY); --var fills the route's \
            :variables. Any error leaves the database unchanged.
            NDJSON (JSON Lines, one object per line; files named .ndjson or .jsonl, or --format ndjson) is read as \
            the array of its lines, with --entity or a --route that targets an entity.
            Example: replica import --db blog.sqlite --schema Schemas/blog.json --entity Post --var userID=3 posts.json
            With --db postgres://USER@HOST:PORT/DATABASE the rows go into a PostgreSQL replica that a fleet of \
            services shares (COPY into a temporary table, then one merge).
            """
    )

    @Option(help: "The SQLite database file (created when missing; needs --schema then), or a PostgreSQL database: postgres://USER@HOST:PORT/DATABASE[?sslmode=MODE&sslrootcert=FILE].")
    var db: String

    @Option(help: "The schema file; without it the schema recorded in the database is used.")
    var schema: String?

    @Option(help: "Import objects of this entity.")
    var entity: String?

    @Option(help: "Import the response of this route path (e.g. /users/3/posts or /users/:userID/posts).")
    var route: String?

    @Option(name: .customLong("var"), help: "A scope value or route variable, name=value.")
    var variables: [String] = []

    @Option(help: "delete or keep rows of the scope the file does not contain (default: the route's, or keep).")
    var stale: StalePolicy?

    @Option(name: .customLong("on-invalid"), help: "fail (roll back) or skip objects that cannot be mapped.")
    var onInvalid: InvalidObjectPolicy = .fail

    @OptionGroup var mapping: MappingChecks

    @Option(name: .customLong("busy-timeout"),
            help: "Seconds to wait while another process writes to the database before failing (writing nothing).")
    var busyTimeout: Double = StoreOptions().busyTimeout

    @Flag(name: .customLong("dry-run"), help: "Parse and map the file as an import would, report what it holds and any error, and write nothing (no database file is created).")
    var dryRun = false

    @Option(help: "json, or ndjson (JSON Lines: one object per line); default: ndjson for a file named .ndjson or .jsonl, json otherwise (and for -).")
    var format: InputFormat?

    @Argument(help: "The JSON or NDJSON file, or - for standard input.")
    var file: String

    func validate() throws {
        if (entity == nil) == (route == nil) { throw ValidationError("give exactly one of --entity and --route") }
        for variable in variables where !variable.contains("=") {
            throw ValidationError("--var takes name=value, not '\(variable)'")
        }
        try OptionChecks.busyTimeout(busyTimeout)
    }

    func run() async throws {
        if PostgresURL.isPostgres(db) && !dryRun {
            try await OpenedStore.open(db: db, schema: schema, busyTimeout: busyTimeout).using { try await importing(into: $0.store) }
            return
        }
        if dryRun {
            try await importing(into: try SQLiteReplica(store: openStoreForDryRun()))
            return
        }
        try await CreatedFile.removingOnFailure(db) {
            try await importing(into: try SQLiteReplica(store: openStore()))
        }
    }

    /// Imports (or, with --dry-run, validates) the file into `target`.
    func importing(into target: any ReplicaStore) async throws {
        let importTarget = try importTarget(schema: target.schema, location: target.location)
        let bar = ProgressBar(enabled: Terminal.width(of: STDERR_FILENO) != nil)
        var options = SyncOptions(stalePolicy: stale, onInvalid: onInvalid, busyTimeout: busyTimeout)
        mapping.apply(to: &options)
        options.format = format
        options.progress = { progress in bar.update(progress) }
        options.progressInterval = 5_000
        let started = ContinuousClock.now
        let result: SyncResult
        do {
            if dryRun {
                result = try await target.validateFile(file, into: importTarget, options: options)
            } else {
                result = try await target.importFile(file, into: importTarget, options: options)
            }
        } catch {
            bar.clear()
            throw CLIError(String(describing: error) + Self.hint(error, format: format ?? InputFormat(path: file)))
        }
        bar.clear()
        let elapsed = started.duration(to: .now)
        // Unbuffered, so that the summary comes before the warnings on standard error in a pipe or file too.
        let summary = dryRun ? Self.dryRunSummary(result, elapsed: elapsed)
            : Self.summary(result, elapsed: elapsed, entityOrder: target.schema.entities.map(\.name))
        Output.write(summary + "\n", to: .standardOutput)
        for line in KeyWarnings.lines(result, mapping: target.mapping, source: file == "-" ? "standard input" : file) {
            printWarning(line)
        }
        for skipped in result.skipped.prefix(10) { printWarning("skipped \(skipped)") }
        if result.skipped.count > 10 { printWarning("skipped \(result.skipped.count - 10) more objects") }
    }

    func openStore() throws -> Store {
        try Self.openStore(db: db, schema: schema, busyTimeout: busyTimeout)
    }

    /// For --dry-run: the schema file in memory (nothing created on disk), or the database's recorded schema.
    func openStoreForDryRun() throws -> Store {
        guard let schema else {
            if PostgresURL.isPostgres(db) {
                throw CLIError("--dry-run with --db postgres://… needs --schema (the dry run opens no database)")
            }
            return try openStore()
        }
        do {
            return try Store.inMemory(schema: try Schema(contentsOf: URL(fileURLWithPath: schema)))
        } catch let error as SchemaError {
            throw CLIError(error.description)
        } catch let error as StoreError {
            throw CLIError(error.description)
        }
    }

    /// Opens `db` with the schema file (creating it), or with its recorded schema.
    static func openStore(db: String, schema: String?, busyTimeout: Double) throws -> Store {
        do {
            let loaded = try schema.map { try Schema(contentsOf: URL(fileURLWithPath: $0)) }
            if loaded == nil && !FileManager.default.fileExists(atPath: db) {
                throw CLIError("\(db): no such database file (give --schema to create it)")
            }
            if let loaded, let file = schema {
                // As `replica schema check` does: this tool registers no transforms, so the built-in ones are all.
                do {
                    try loaded.checkOpening(in: .sqlite)
                } catch {
                    var located = error
                    located.file = file
                    throw located
                }
            }
            return try Store(path: db, schema: loaded, options: StoreOptions(busyTimeout: busyTimeout))
        } catch let error as SchemaError {
            throw CLIError(error.description)
        } catch let error as StoreError {
            throw CLIError(error.description)
        }
    }

    func importTarget(schema: Schema, location: String) throws -> ImportTarget {
        var values: [String: String] = [:]
        for variable in variables {
            let parts = variable.split(separator: "=", maxSplits: 1)
            values[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        if let route {
            let pattern: RoutePattern
            do {
                pattern = try RoutePattern(route)
            } catch {
                throw CLIError("--route \(route): \(error)")
            }
            // A name the route does not have would be ignored: say which it has.
            for name in values.keys.sorted() where !pattern.variables.contains(name) {
                let known = pattern.variables.isEmpty ? "it has none" : "its variables: " + pattern.variables.joined(separator: ", ")
                throw CLIError("--var \(name): route \(route) has no variable '\(name)' (\(known))")
            }
            do {
                let path = route.contains(":") || route.contains("{") ? try pattern.path(with: values) : route
                return .route(.get, path)
            } catch {
                throw CLIError("--route \(route): \(error)")
            }
        }
        let name = entity ?? ""
        guard let resolved = schema.entity(named: name) else {
            let known = schema.entities.map(\.name).joined(separator: ", ")
            throw CLIError("\(location): unknown entity '\(name)' (the schema has: \(known))")
        }
        var scope: [String: AttributeValue] = [:]
        for (attributeName, text) in values {
            guard let attribute = resolved.attribute(named: attributeName) else {
                throw CLIError("--var \(attributeName): entity '\(resolved.name)' has no such attribute")
            }
            guard let value = AttributeValue(text: text, type: attribute.type) else {
                throw CLIError("--var \(attributeName)=\(text): not a valid \(attribute.type)")
            }
            scope[attributeName] = value
        }
        return .entity(resolved.name, scope: scope)
    }

    /// For JSON that goes on after its value at the start of a line: the NDJSON that it likely is.
    static func hint(_ error: any Error, format: InputFormat) -> String {
        guard format == .json, let error = error as? SyncError,
              let parse = error.underlying as? JSONParseError, parse.code == .trailingCharacters, parse.column == 1
        else { return "" }
        return " (one JSON value per line is NDJSON: give --format ndjson)"
    }

    /// `dry run: 3 objects (286 bytes) read, 0 would be skipped; nothing written (in 0.01 s, 400 objects/s)`.
    static func dryRunSummary(_ result: SyncResult, elapsed: Duration) -> String {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Double(result.objectCount) / seconds : 0
        return "dry run: \(result.objectCount) objects (\(Format.bytes(result.byteCount))) read, "
            + "\(result.skipped.count) would be skipped; nothing written (in \(String(format: "%.2f", seconds)) s, "
            + "\(Format.integer(Int(rate))) objects/s)"
    }

    /// `inserted 3, updated 0, deleted 0, skipped 0 (3 objects, 286 bytes) in 0.01 s, 400 objects/s` when at most
    /// one entity changed; `User: inserted 2 · Post: inserted 1; skipped 0 (3 objects, …) …` when several did.
    static func summary(_ result: SyncResult, elapsed: Duration, entityOrder: [String]) -> String {
        let counts = ChangeSummary.counts(result.changes, entityOrder: entityOrder)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Double(result.objectCount) / seconds : 0
        return counts.text + (counts.isPerEntity ? "; " : ", ") + "skipped \(result.skipped.count) "
            + "(\(result.objectCount) objects, \(Format.bytes(result.byteCount))) in \(String(format: "%.2f", seconds)) s, "
            + "\(Format.integer(Int(rate))) objects/s"
    }
}

extension StalePolicy: ExpressibleByArgument {}
extension InvalidObjectPolicy: ExpressibleByArgument {}
extension InputFormat: ExpressibleByArgument {}

extension SharedChildPolicy: ExpressibleByArgument {
    /// `fail` or `last-parent-wins` on the command line.
    public init?(argument: String) {
        switch argument {
        case "fail": self = .fail
        case "last-parent-wins": self = .lastParentWins
        default: return nil
        }
    }

    public static var allValueStrings: [String] { ["fail", "last-parent-wins"] }
}
