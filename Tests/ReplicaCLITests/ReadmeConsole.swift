import Foundation

/// A `$ ` line of a README ```console block and the output shown under it.
struct ConsoleCommand: Sendable {
    /// The README line of the command, from 1.
    var line: Int
    /// The command, without its `$ ` prompt; with a here-document (`<<'EOF'`), its lines and
    /// terminator too.
    var text: String
    /// The README line of the first line of output, after a here-document if there is one.
    var outputLine: Int
    /// The lines shown after the command, up to the next `$ ` line or the end of the block.
    var expected: [String]

    /// The command's first line, which names it in messages.
    var firstLine: String { text.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? text }

    /// `true` for a command that ends with `&`: it runs in the background while the session goes on.
    var isBackground: Bool { text.hasSuffix("&") && !text.hasSuffix("&&") }
}

/// A ```console block of the README.
struct ConsoleBlock: Sendable {
    /// The README line of the opening fence, from 1.
    var line: Int
    /// The name given by a `<!-- session: NAME -->` comment right before the fence, if any.
    var session: String?
    var commands: [ConsoleCommand]
}

/// The console blocks that run one after another in one directory: those with the same
/// `<!-- session: NAME -->`, or one block without such a comment.
struct ConsoleSession: Sendable, CustomStringConvertible {
    var name: String
    var blocks: [ConsoleBlock]

    var commands: [ConsoleCommand] { blocks.flatMap(\.commands) }
    var description: String { name }
}

/// A ```text block marked `<!-- check: NAME -->`: output that a test checks in its own way.
struct CheckedTextBlock: Sendable {
    var name: String
    /// The README line of the opening fence, from 1.
    var line: Int
    var lines: [String]
}

/// What README.md's fenced blocks say, for the session tests.
///
/// The rules, which README.md's testing section points to:
/// - every ```console block is run: each `$ ` line is a command, the lines under it (up to the
///   next `$ ` line) are what it prints, standard output and error together;
/// - `<!-- session: NAME -->` as the last non-blank line before a block's fence puts the block in
///   session NAME: its blocks run in README order, in one directory; a block without one is a
///   session of its own, named after its line;
/// - `<!-- check: NAME -->` before a ```text block hands it to a test of that name.
struct ReadmeConsole {
    var blocks: [ConsoleBlock] = []
    var checkedBlocks: [CheckedTextBlock] = []
    /// Malformed blocks and markers, each naming its README line.
    var problems: [String] = []

    /// The sessions, in the order of their first block.
    var sessions: [ConsoleSession] {
        var sessions: [ConsoleSession] = []
        for block in blocks {
            let name = block.session ?? "README.md:\(block.line)"
            if let index = sessions.firstIndex(where: { $0.name == name }) {
                sessions[index].blocks.append(block)
            } else {
                sessions.append(ConsoleSession(name: name, blocks: [block]))
            }
        }
        return sessions
    }

    /// Reads the ```console blocks, their session comments and the checked ```text blocks of `markdown`.
    init(markdown: String) {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var marker: (kind: String, name: String, line: Int)?
        var index = 0
        while index < lines.count {
            let trimmed = lines[index].trimmingCharacters(in: .whitespaces)
            if let found = Self.marker(in: trimmed) {
                if let pending = marker { problems.append(Self.unfollowed(pending)) }
                marker = (found.kind, found.name, index + 1)
                index += 1
                continue
            }
            guard trimmed.hasPrefix("```") else {
                if !trimmed.isEmpty, let pending = marker {
                    problems.append(Self.unfollowed(pending))
                    marker = nil
                }
                index += 1
                continue
            }
            let opening = index
            index += 1
            while index < lines.count, !lines[index].trimmingCharacters(in: .whitespaces).hasPrefix("```") { index += 1 }
            guard index < lines.count else {
                problems.append("README.md:\(opening + 1): the code block opened here is never closed")
                return
            }
            let body = Array(lines[(opening + 1) ..< index])
            index += 1
            let language = trimmed.dropFirst(3).trimmingCharacters(in: .whitespaces)
            defer { marker = nil }
            switch (language, marker?.kind) {
            case ("console", nil), ("console", "session"?):
                let block = consoleBlock(body, fenceLine: opening + 1, session: marker?.name)
                if block.commands.isEmpty { problems.append("README.md:\(opening + 1): a console block with no `$ ` command") }
                blocks.append(block)
            case ("text", "check"?):
                checkedBlocks.append(CheckedTextBlock(name: marker?.name ?? "", line: opening + 1, lines: body))
            case (_, let kind?):
                problems.append("README.md:\(marker?.line ?? 0): `<!-- \(kind): … -->` does not fit the ```\(language) block after it "
                                + "(session: goes before ```console, check: before ```text)")
            default:
                break
            }
        }
        if let pending = marker { problems.append(Self.unfollowed(pending)) }
    }

    /// The problem of a marker with something other than a code block after it.
    private static func unfollowed(_ marker: (kind: String, name: String, line: Int)) -> String {
        "README.md:\(marker.line): `<!-- \(marker.kind): \(marker.name) -->` is not followed by a code block"
    }

    /// `("session", "blog")` for `<!-- session: blog -->`, `("check", …)` likewise; `nil` for other lines.
    static func marker(in line: String) -> (kind: String, name: String)? {
        guard line.hasPrefix("<!--"), line.hasSuffix("-->") else { return nil }
        let inner = line.dropFirst(4).dropLast(3).trimmingCharacters(in: .whitespaces)
        for kind in ["session", "check"] where inner.hasPrefix(kind + ":") {
            let name = inner.dropFirst(kind.count + 1).trimmingCharacters(in: .whitespaces)
            return name.isEmpty ? nil : (kind, name)
        }
        return nil
    }

    /// Splits a console block's lines into commands and the output under each. A command with a
    /// here-document (`cat > users.json <<'EOF'`) takes the lines up to its terminator, as a
    /// shell does.
    private mutating func consoleBlock(_ body: [String], fenceLine: Int, session: String?) -> ConsoleBlock {
        var commands: [ConsoleCommand] = []
        var offset = 0
        while offset < body.count {
            let line = body[offset]
            let number = fenceLine + 1 + offset
            offset += 1
            guard line.hasPrefix("$ ") else {
                if commands.isEmpty {
                    problems.append("README.md:\(number): output before the first `$ ` command of the block")
                } else {
                    commands[commands.count - 1].expected.append(line)
                }
                continue
            }
            var text = String(line.dropFirst(2))
            if let match = text.firstMatch(of: #/<<-?\s*['"]?([A-Za-z_]+)['"]?/#) {
                let terminator = String(match.1)
                guard let end = body[offset...].firstIndex(of: terminator) else {
                    problems.append("README.md:\(number): the here-document is never ended by a line `\(terminator)`")
                    return ConsoleBlock(line: fenceLine, session: session, commands: commands)
                }
                text += "\n" + body[offset ... end].joined(separator: "\n")
                offset = end + 1
            }
            commands.append(ConsoleCommand(line: number, text: text, outputLine: fenceLine + 1 + offset, expected: []))
        }
        return ConsoleBlock(line: fenceLine, session: session, commands: commands)
    }
}
