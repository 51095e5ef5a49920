import ArgumentParser

/// The `replica` command-line tool.
@main
struct ReplicaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replica",
        abstract: "Keep a local SQLite replica of a REST/JSON API.",
        discussion: """
            Schemas describe entities and routes (see Schemas/ for examples). Every subcommand \
            has --help.
            """,
        subcommands: [DemoCommand.self, SchemaCommand.self, ImportCommand.self, QueryCommand.self, WatchCommand.self, ServeCommand.self, SyncCommand.self,
                      SaveCommand.self, DeleteCommand.self, PushCommand.self, OutboxCommand.self]
    )
}

/// A user error: printed as one line on stderr, exit status 1.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
