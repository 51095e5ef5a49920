import Foundation
import ReplicaTestSupport
import Testing

/// A fenced ```swift block of the README.
struct ReadmeBlock {
    /// The line of the opening fence, from 1.
    var line: Int
    /// The block's text, dedented.
    var text: String
    var firstLine: String { text.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? "" }
}

/// The text between `// README: <name>` and `// README: end` in a ReplicaExamples source file.
struct MarkedSnippet {
    var name: String
    var file: String
    var line: Int
    var text: String
}

/// Removes the indentation common to every non-blank line; blank lines become empty.
func dedent(_ lines: [Substring]) -> String {
    let indents = lines.filter { !$0.allSatisfy(\.isWhitespace) }.map { $0.prefix(while: { $0 == " " || $0 == "\t" }).count }
    let common = indents.min() ?? 0
    return lines.map { $0.allSatisfy(\.isWhitespace) ? "" : String($0.dropFirst(common)) }.joined(separator: "\n")
}

/// Every ```swift block of a Markdown text.
func swiftBlocks(inMarkdown text: String) -> [ReadmeBlock] {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    var blocks: [ReadmeBlock] = []
    var index = 0
    while index < lines.count {
        let fence = lines[index].trimmingCharacters(in: .whitespaces)
        guard fence.hasPrefix("```") else { index += 1; continue }
        let opening = index
        index += 1
        while index < lines.count, !lines[index].trimmingCharacters(in: .whitespaces).hasPrefix("```") { index += 1 }
        guard index < lines.count else {
            Issue.record("README.md:\(opening + 1): the code block opened here is never closed")
            return blocks
        }
        if fence == "```swift" {
            blocks.append(ReadmeBlock(line: opening + 1, text: dedent(Array(lines[(opening + 1)..<index]))))
        }
        index += 1
    }
    return blocks
}

/// Every marked snippet of a Swift source text.
func markedSnippets(inSwift text: String, file: String) -> [MarkedSnippet] {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    var snippets: [MarkedSnippet] = []
    var open: (name: String, line: Int)?
    for (number, line) in lines.enumerated() {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("// README:") else { continue }
        let name = trimmed.dropFirst("// README:".count).trimmingCharacters(in: .whitespaces)
        if name == "end" {
            if let start = open {
                snippets.append(MarkedSnippet(name: start.name, file: file, line: start.line + 1,
                                              text: dedent(Array(lines[(start.line + 1)..<number]))))
            } else {
                Issue.record("\(file):\(number + 1): '// README: end' without an opening marker")
            }
            open = nil
        } else {
            if let start = open { Issue.record("\(file):\(number + 1): snippet '\(start.name)' is not closed before '\(name)'") }
            open = (name, number)
        }
    }
    if let start = open { Issue.record("\(file):\(start.line + 1): snippet '\(start.name)' is never closed") }
    return snippets
}

@Suite("README samples")
struct ReadmeSnippetTests {
    @Test("every ```swift block of README.md is a compiled snippet of ReplicaExamples, and every snippet is used")
    func readmeMatchesExamples() throws {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = swiftBlocks(inMarkdown: readme)
        #expect(!blocks.isEmpty, "README.md has no ```swift block")

        let sources = packageRoot.appendingPathComponent("Sources/ReplicaExamples")
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        let files = (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }
            .sorted { $0.path < $1.path }
        #expect(!files.isEmpty, "no Swift file under \(sources.path)")
        var snippets: [MarkedSnippet] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            snippets += markedSnippets(inSwift: text, file: "Sources/ReplicaExamples/" + file.lastPathComponent)
        }

        var names: [String: MarkedSnippet] = [:]
        for snippet in snippets {
            if let other = names[snippet.name] {
                Issue.record("snippet '\(snippet.name)' is marked twice: \(other.file):\(other.line) and \(snippet.file):\(snippet.line)")
            }
            names[snippet.name] = snippet
        }

        let snippetTexts = Set(snippets.map(\.text))
        for block in blocks where !snippetTexts.contains(block.text) {
            let nearest = snippets.first { $0.text.hasPrefix(block.firstLine) }
            let hint = nearest.map { " (the snippet '\($0.name)' in \($0.file):\($0.line) starts the same but differs)" } ?? ""
            Issue.record("README.md:\(block.line): the swift block starting `\(block.firstLine)` has no matching snippet in Sources/ReplicaExamples\(hint)")
        }
        let blockTexts = Set(blocks.map(\.text))
        for snippet in snippets where !blockTexts.contains(snippet.text) {
            Issue.record("\(snippet.file):\(snippet.line): snippet '\(snippet.name)' is not a swift block of README.md (stale example)")
        }
    }

    @Test("the extraction sees blocks, markers and indentation as the README check assumes")
    func extraction() {
        let markdown = "Text\n\n```swift\nlet a = 1\n    a + 1\n```\n\n```sh\nls\n```\n\n  ```swift\n  f()\n  ```\n"
        let blocks = swiftBlocks(inMarkdown: markdown)
        #expect(blocks.map(\.text) == ["let a = 1\n    a + 1", "f()"])
        #expect(blocks.map(\.line) == [3, 12])

        let source = "func f() {\n    // README: one\n    let a = 1\n\n        a + 1\n    // README: end\n}\n"
        let snippets = markedSnippets(inSwift: source, file: "F.swift")
        #expect(snippets.map(\.name) == ["one"])
        #expect(snippets.first?.text == "let a = 1\n\n    a + 1")
        #expect(snippets.first?.line == 2)   // the opening marker
    }
}
