import ArgumentParser
import Foundation
import Replica
import ReplicaHTTP
import ReplicaOpenAPI

struct SchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Work with schema files.",
        subcommands: [Check.self, Infer.self]
    )

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate schema files and print their entities.",
            discussion: """
                Each file is checked as opening a store checks it (property maps, transforms, the database's \
                limits on columns and names), for SQLite and PostgreSQL unless --store names one; errors name \
                the file and the JSON pointer of the bad value.
                """
        )

        enum Database: String, ExpressibleByArgument, CaseIterable {
            case all
            case sqlite
            case postgres
        }

        @Argument(help: "Schema files to check.")
        var files: [String]

        @Flag(name: .shortAndLong, help: "Print only errors.")
        var quiet = false

        @Option(help: "The database whose limits to check: all, sqlite or postgres.")
        var store: Database = .all

        func validate() throws {
            if files.isEmpty { throw ValidationError("give at least one schema file") }
        }

        func run() async throws {
            var failures = 0
            for file in files {
                do {
                    let schema = try Schema(contentsOf: URL(fileURLWithPath: file))
                    for database in DatabaseKind.allCases where store == .all || store.rawValue == database.rawValue {
                        do {
                            try schema.checkOpening(in: database)
                        } catch {
                            var located = error
                            located.file = file
                            throw located
                        }
                    }
                    // Unbuffered, in order with the errors of other files on standard error.
                    if !quiet { Output.write(Self.describe(schema, file: file) + "\n", to: .standardOutput) }
                } catch {
                    failures += 1
                    printError("\(error)")
                }
            }
            if failures > 0 {
                throw ExitCode.failure
            }
        }

        static func describe(_ schema: Schema, file: String) -> String {
            var lines = ["\(file): schema '\(schema.name)' version \(schema.version), "
                + "\(schema.entities.count) \(schema.entities.count == 1 ? "entity" : "entities"), "
                + "\(schema.routes.count) \(schema.routes.count == 1 ? "route" : "routes"), keys \(schema.keyConvention.schemaName)"]
            for entity in schema.entities {
                lines.append(entity.hasCompositeKey
                             ? "  \(entity.name) (table \(entity.tableName), composite primary key (\(entity.primaryKeyNames.joined(separator: ", "))))"
                             : "  \(entity.name) (table \(entity.tableName), primary key \(entity.primaryKey), JSON id \(entity.jsonIDKey))")
                let width = entity.attributes.map(\.name.count).max() ?? 0
                for attribute in entity.attributes {
                    var line = "    " + attribute.name.padding(toLength: width, withPad: " ", startingAt: 0)
                    line += "  " + attribute.type.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
                    line += attribute.isNullable ? "  null" : "  not null"
                    if let value = attribute.defaultValue { line += "  default \(value)" }
                    if let key = attribute.jsonKey { line += "  json \(key)" }
                    if let transform = attribute.transform { line += "  transform \(transform)" }
                    if attribute.isUnmappedColumn { line += "  unmapped keys" }
                    lines.append(line)
                }
                for relationship in entity.relationships {
                    switch relationship.kind {
                    case .toOne:
                        lines.append("    \(relationship.name) -> \(relationship.destination) (to-one via \(relationship.foreignKey ?? "?"))")
                    case .toMany:
                        if let join = schema.joinTable(for: relationship, of: entity) {
                            lines.append("    \(relationship.name) <<->> \(relationship.destination) (many-to-many through "
                                         + "\(join.name): \(join.columns[0]), \(join.columns[1]))")
                        } else {
                            lines.append("    \(relationship.name) ->> \(relationship.destination) (to-many, inverse \(relationship.inverse ?? "?"))")
                        }
                    }
                }
                // What is done with keys that match nothing, when not the default (warn, no patterns).
                let policy = schema.unmappedKeyPolicy(of: entity)
                let globs = schema.ignoredKeyGlobs(of: entity).map(\.pattern)
                if policy != .warn || !globs.isEmpty {
                    var line = "    unmapped keys: \(policy.rawValue)"
                    if policy == .keep { line += " (column \(entity.unmappedColumnName))" }
                    if !globs.isEmpty { line += "; ignored: " + globs.joined(separator: ", ") }
                    lines.append(line)
                }
            }
            // A schema that loaded has a valid route table.
            if let table = try? RouteTable(schema: schema) {
                for entry in table.entries { lines.append("  " + Self.describe(entry)) }
            }
            for (name, value) in schema.headers.sorted(by: { $0.key < $1.key }) {
                lines.append("  header \(name): \(value)")
            }
            return lines.joined(separator: "\n")
        }

        /// One route: its target, then in parentheses its envelope, what its variables scope and
        /// whether it deletes stale rows (inside that scope).
        ///
        /// `route GET /users/:userID/posts -> Post (scope: userID = :userID; stale rows deleted)`
        static func describe(_ entry: RouteTable.Entry) -> String {
            let route = entry.route
            var notes: [String] = []
            if !entry.envelope.isEmpty { notes.append("envelope " + entry.envelope.joined(separator: ".")) }
            if entry.entity != nil {
                if entry.isSingleObject {
                    notes.append("one object")
                } else if entry.scopeAttributes.isEmpty {
                    notes.append("scope: all rows")
                } else {
                    notes.append("scope: " + entry.scopeAttributes.map { "\($0.attribute) = :\($0.variable)" }.joined(separator: " and "))
                }
            }
            if route.stalePolicy == .delete && !entry.isSingleObject {
                notes.append(entry.entity == nil ? "stale rows deleted in each collection" : "stale rows deleted")
            }
            return "route \(route.method) \(route.path) -> \(route.target)" + (notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")")
        }
    }
}

extension SchemaCommand {
    /// `replica schema infer`: a schema from sample files.
    struct Infer: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Infer a schema from sample JSON or NDJSON files, from a live API's paths, or from an OpenAPI document.",
            discussion: """
                Each FILE is the response of the route /<its name> (people.json: /people); --route PATTERN=FILE \
                names the route, whose :variables become scope attributes (and parts of a composite key when the \
                objects have no id); --route PATH=FILE names the concrete path that answered FILE, the sample of \
                the first --route PATTERN it matches, whose values tell what each variable names (:owner is the \
                owner's login). Files are read in bounded memory. With --base-url, the arguments are PATHs: \
                each is fetched with the pages its Link: rel="next" headers name (up to --max-pages), and is the \
                sample of the first --route PATTERN it matches, else of itself. Types are read over every value; \
                nested objects with an id become related entities, arrays of them many-to-many links, objects \
                without one dotted attributes. The schema goes to standard output (or -o FILE); what had to be \
                guessed goes to standard error, each with its file or URL and JSON pointer. With --openapi FILE \
                (OpenAPI 3.0 or 3.1, JSON or YAML), component schemas with an identity become entities and the \
                paths routes ({petId} is :petId), with their methods, so `replica serve --schema` answers them; \
                what could not be mapped (oneOf without a discriminator, say) is kept as json and noted with its pointer.
                Examples: replica schema infer --route /repos/:owner/:repo/issues=issues.json users.json -o schema.json
                          replica schema infer --base-url https://api.github.com --route /repos/:owner/:repo/issues \
                          --header 'Authorization: Bearer …' /repos/apple/swift/issues -o github.json
                          replica schema infer --openapi Schemas/openapi/petstore.yaml -o petstore.json
                """
        )

        @Argument(help: "Sample files, each the response of the route named after it; with --base-url, paths to fetch.")
        var files: [String] = []

        @Option(name: .customLong("route"),
                help: "A route pattern and the file it answered, PATTERN=FILE; a concrete path and its file, PATH=FILE; or a PATTERN the paths (PATH=FILE, or with --base-url the arguments) may match.")
        var routes: [String] = []

        @Option(help: "An OpenAPI 3.0 or 3.1 document (JSON or YAML) to import instead of samples.")
        var openapi: String?

        @Option(name: .customLong("base-url"), help: "The live API the PATH arguments are fetched from.")
        var baseURL: String?

        @Option(name: .customLong("header"), help: "A header sent with every request, 'Name: value'.")
        var headers: [String] = []

        @Option(name: .customLong("max-pages"), help: "The most pages fetched of each path.")
        var maxPages: Int = 10

        @Option(help: "Seconds each request may take.")
        var timeout: Double = 60

        @Option(help: "The schema's name (by default the first file's or path's name).")
        var name: String?

        @Option(name: .shortAndLong, help: "Write the schema to this file instead of standard output.")
        var output: String?

        @Option(help: "A schema file to add to what the samples show that it lacks (new attributes nullable, new entities and routes; nothing removed), raising its version; written back to it unless -o names another file.")
        var update: String?

        @Option(help: "json or ndjson; by default as each file's name says (.ndjson, .jsonl).")
        var format: InputFormat?

        func validate() throws {
            if openapi != nil {
                guard files.isEmpty, routes.isEmpty, baseURL == nil, headers.isEmpty, format == nil, update == nil else {
                    throw ValidationError("--openapi reads one document: give no sample files, paths, --route, --base-url, --header, --format or --update with it")
                }
                return
            }
            if files.isEmpty && routes.allSatisfy({ Self.split($0) == nil }) {
                throw ValidationError(baseURL == nil ? "give at least one sample file" : "give at least one path to fetch")
            }
            for route in routes where Self.split(route) == nil {
                guard route.hasPrefix("/"), !route.contains("=") else {
                    throw ValidationError("--route takes PATTERN=FILE (e.g. /repos/:owner/:repo/issues=issues.json), PATH=FILE "
                                          + "or a PATTERN the paths may match (e.g. /repos/:owner/:repo), not '\(route)'")
                }
            }
            if let baseURL {
                guard let url = URL(string: baseURL), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
                      url.host != nil else {
                    throw ValidationError("--base-url takes an http or https URL, not '\(baseURL)'")
                }
                for path in files where !path.hasPrefix("/") {
                    throw ValidationError("with --base-url, each argument is a path starting with /, not '\(path)'")
                }
            } else if !headers.isEmpty || maxPages != 10 {
                throw ValidationError("--header and --max-pages need --base-url")
            }
            for header in headers { _ = try OptionChecks.header(header) }
            try OptionChecks.integer(maxPages, option: "--max-pages", in: 1...100_000, unit: "of pages")
            try OptionChecks.seconds(timeout, option: "--timeout")
        }

        /// `/repos/:owner/:repo/issues=issues.json` → the pattern and the file.
        static func split(_ text: String) -> (pattern: String, file: String)? {
            guard let equals = text.firstIndex(of: "="), text.hasPrefix("/") else { return nil }
            let file = String(text[text.index(after: equals)...])
            return file.isEmpty ? nil : (String(text[..<equals]), file)
        }

        func run() async throws {
            if let openapi {
                do {
                    try write(try OpenAPISchemaImport.schema(contentsOf: URL(fileURLWithPath: openapi), name: name))
                } catch let error as SchemaError {
                    throw CLIError("\(error)")
                }
                return
            }
            let fileRoutes = routes.compactMap(Self.split)
            let live = baseURL != nil
            let patterns = routes.filter { Self.split($0) == nil }
            // PATH=FILE: a concrete path matching a PATTERN is a sample of the pattern, whose variables it gives values.
            let given = fileRoutes.map { sample -> (route: String?, file: String, requestPath: String?) in
                let concrete = !sample.pattern.contains(":") && !sample.pattern.contains("{")
                let pattern = concrete ? SchemaInference.route(for: sample.pattern, patterns: patterns) : sample.pattern
                return (pattern, sample.file, pattern == sample.pattern ? nil : sample.pattern)
            } + (live ? [] : files.map { (route: String?.none, file: $0, requestPath: String?.none) })
            let firstName = given.first.map { URL(fileURLWithPath: $0.file).deletingPathExtension().lastPathComponent }
                ?? files.first.flatMap { path in path.split(separator: "?").first?.split(separator: "/").last.map(String.init) }
            var inference = SchemaInference(name: name ?? firstName ?? "inferred")
            do {
                for sample in given {
                    try inference.addFile(sample.file, route: sample.route, requestPath: sample.requestPath, format: format)
                }
                if let baseURL, let base = URL(string: baseURL) {
                    try await fetch(files, from: base, into: &inference)
                }
                guard let update else {
                    try write(try inference.infer())
                    return
                }
                let existing = try Schema(contentsOf: URL(fileURLWithPath: update))
                let (updated, added) = try inference.infer().updating(existing)
                for note in updated.notes { Output.write("note: \(note)\n", to: .standardError) }
                let target = output ?? update
                do {
                    try updated.text.write(toFile: target, atomically: true, encoding: .utf8)
                } catch {
                    throw CLIError("cannot write \(target): \(error.localizedDescription)")
                }
                Output.write(added.isEmpty
                             ? "\(target): nothing to add; version \(existing.version) kept\n"
                             : "wrote \(target): version \(existing.version) → \(updated.schema.version), added \(added.joined(separator: ", "))\n",
                             to: .standardError)
            } catch let error as SchemaError {
                throw CLIError("\(error)")
            }
        }

        /// The notes on standard error, the schema to `-o FILE` (and a line saying so) or standard output.
        private func write(_ inferred: InferredSchema) throws {
            for note in inferred.notes { Output.write("note: \(note)\n", to: .standardError) }
            guard let output else {
                Output.write(inferred.text, to: .standardOutput)
                return
            }
            do {
                try inferred.text.write(toFile: output, atomically: true, encoding: .utf8)
            } catch {
                throw CLIError("cannot write \(output): \(error.localizedDescription)")
            }
            let entities = inferred.schema.entities.count, routes = inferred.schema.routes.count
            Output.write("wrote \(output): \(entities) \(entities == 1 ? "entity" : "entities"), "
                         + "\(routes) \(routes == 1 ? "route" : "routes")\n", to: .standardError)
        }

        /// Fetches each path with its pages; one line per path on standard error.
        private func fetch(_ paths: [String], from base: URL, into inference: inout SchemaInference) async throws {
            var fields = HeaderFields()
            for header in headers {
                let (name, value) = try OptionChecks.header(header)
                fields[name] = value
            }
            let patterns = routes.filter { Self.split($0) == nil }
            let transport = HTTPTransport()
            // `--header` values belong to the base URL's origin: a next link elsewhere is not followed.
            do {
                for path in paths {
                    let pages = try await inference.addPath(path, baseURL: base, routes: patterns, transport: transport,
                                                            headers: fields, maxPages: maxPages, timeout: .checkedSeconds(timeout))
                    let route = SchemaInference.route(for: String(path.split(separator: "?", maxSplits: 1).first ?? ""), patterns: patterns)
                    Output.write("fetched \(path): \(pages) \(pages == 1 ? "page" : "pages")"
                                 + (route.contains(":") ? " (route \(route))" : "") + "\n", to: .standardError)
                }
            } catch {
                try? await transport.shutdown()
                throw error
            }
            try? await transport.shutdown()
        }
    }
}

/// Writes one error line to standard error, as ArgumentParser prints errors.
func printError(_ message: String) {
    Output.write("Error: " + message + "\n", to: .standardError)
}

/// Writes one warning line to standard error.
func printWarning(_ message: String) {
    Output.write("warning: " + message + "\n", to: .standardError)
}
