import ArgumentParser

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Show what Replica does.",
        discussion: """
            The full demo (mock server, sync, live view) arrives with the sync engine, the mock \
            server and live result sets; until then it lists what the tool can do today.
            """
    )

    func run() async throws {
        print(ReplicaCommand.helpMessage(columns: Terminal.width(of: 1)))
    }
}
