import Foundation
import Replica

/// One generated issue, as every implementation should store it.
struct GeneratedIssue: Sendable {
    var id: Int64
    var number: Int64
    var title: String
    var state: String
    /// The keys of its labels, in the order the JSON lists them (distinct).
    var labels: [Int64]
}

/// Deterministic (seeded) issues for the `import-links` workload, each with
/// ``linksPerIssue`` labels drawn uniformly from a pool of ``labelCount`` shared labels and
/// nested in full (`{"id", "name", "color"}`), the same label object repeated in every issue
/// that carries it, as a real API sends it. Issue `index` is always the same.
///
/// Revision 1 changes every issue's links: one of its three labels (which one is seeded) is
/// replaced by a label it did not have; issues with an even id also flip `state` (open ⇄
/// closed). Labels themselves are the same in both revisions.
///
/// ```swift
/// try ImportLinksData(count: 1_000_000, revision: 0).writeJSON(to: "/tmp/links-0.json")
/// // [{"id":1,"number":1,"title":"Typo in docs for login on Android (#18536)","state":"closed","labels":[{"id":392,...},...]}, ...]
/// ```
struct ImportLinksData: Sendable {
    /// The shared labels' pool: keys 1 ... labelCount.
    static let labelCount = 1_000
    static let linksPerIssue = 3

    let count: Int
    let revision: Int

    private static let verbs = ["Crash when", "Slow", "Wrong result when", "Hang while", "Typo in docs for",
                                "Support", "Flaky test for", "Memory leak in", "Regression in", "Cannot"]
    private static let objects = ["saving a draft", "opening large files", "syncing über-long names", "parsing dates",
                                  "the settings page", "exporting to CSV", "login on Android", "résumé uploads",
                                  "dark mode", "the \"Quick Look\" panel", "retrying requests", "paging results"]
    private static let labelKinds = ["bug", "enhancement", "documentation", "question", "good first issue",
                                     "help wanted", "performance", "area: sync", "area: UI", "won't fix"]

    /// The label with key `id`: its name and color (the same in every issue and revision).
    static func label(_ id: Int64) -> (name: String, color: String) {
        var random = SplitMix64(seed: 0x1A_BE15_0000 &+ UInt64(bitPattern: id))
        let bits = random.next()
        let name = "\(labelKinds[Int(bits % UInt64(labelKinds.count))]) \(id)"
        let hex = Array("0123456789abcdef".utf8)
        var color = ""
        for nibble in 0..<6 { color.append(Character(UnicodeScalar(hex[Int((bits >> (8 + 4 * UInt64(nibble))) & 15)]))) }
        return (name, color)
    }

    /// Issue `index`'s label keys (its id is `index + 1`).
    func labelIDs(at index: Int) -> [Int64] {
        var random = SplitMix64(seed: 0x11_4B5_0000_0000 &+ UInt64(index))
        var labels: [Int64] = []
        labels.reserveCapacity(Self.linksPerIssue)
        while labels.count < Self.linksPerIssue {
            let label = Int64(random.next() % UInt64(Self.labelCount)) + 1
            if !labels.contains(label) { labels.append(label) }
        }
        if revision == 1 {
            let slot = Int(random.next() % UInt64(Self.linksPerIssue))
            var replacement: Int64
            repeat {
                replacement = Int64(random.next() % UInt64(Self.labelCount)) + 1
            } while labels.contains(replacement)
            labels[slot] = replacement
        }
        return labels
    }

    /// Issue `index` (0-based; its id and number are `index + 1`).
    func issue(at index: Int) -> GeneratedIssue {
        var random = SplitMix64(seed: 0x155_0E00_0000_0000 &+ UInt64(index))
        let a = random.next()
        let id = Int64(index + 1)
        var open = (a & 1) == 0
        if revision == 1 && id % 2 == 0 { open.toggle() }
        let title = "\(Self.verbs[Int((a >> 8) % UInt64(Self.verbs.count))]) "
            + "\(Self.objects[Int((a >> 16) % UInt64(Self.objects.count))]) (#\((a >> 24) % 100_000))"
        return GeneratedIssue(id: id, number: id, title: title, state: open ? "open" : "closed", labels: labelIDs(at: index))
    }

    /// Writes the issues as one JSON array, one issue a line, labels nested in full.
    ///
    /// - Returns: The file size in bytes.
    /// - Throws: ``BenchmarkError`` when the file cannot be written.
    @discardableResult
    func writeJSON(to path: String) throws -> Int {
        // The pool's JSON, built once.
        let labelJSON: [[UInt8]] = (0...Self.labelCount).map { id in
            guard id > 0 else { return [] }
            let label = Self.label(Int64(id))
            var bytes = Array("{\"id\":\(id),\"name\":".utf8)
            JSONText.appendString(label.name, to: &bytes)
            bytes.append(contentsOf: ",\"color\":\"\(label.color)\"}".utf8)
            return bytes
        }
        return try JSONText.writeArray(to: path, count: count) { index, buffer in
            let issue = issue(at: index)
            buffer.append(contentsOf: "{\"id\":\(issue.id),\"number\":\(issue.number),\"title\":".utf8)
            JSONText.appendString(issue.title, to: &buffer)
            buffer.append(contentsOf: ",\"state\":\"\(issue.state)\",\"labels\":[".utf8)
            for (position, label) in issue.labels.enumerated() {
                if position > 0 { buffer.append(UInt8(ascii: ",")) }
                buffer.append(contentsOf: labelJSON[Int(label)])
            }
            buffer.append(contentsOf: "]}".utf8)
        }
    }

    /// The distinct labels the file carries, by key.
    func distinctLabels() -> [Int64] {
        var used = [Bool](repeating: false, count: Self.labelCount + 1)
        for index in 0..<count { for label in labelIDs(at: index) { used[Int(label)] = true } }
        return used.indices.filter { used[$0] }.map(Int64.init)
    }

    /// The labels linked to or unlinked from any issue going from revision 0 to revision 1
    /// (Replica reports each as updated).
    static func relinkedLabels(count: Int) -> Int {
        let first = ImportLinksData(count: count, revision: 0), second = ImportLinksData(count: count, revision: 1)
        var touched = [Bool](repeating: false, count: labelCount + 1)
        for index in 0..<count {
            let before = first.labelIDs(at: index), after = second.labelIDs(at: index)
            for label in before where !after.contains(label) { touched[Int(label)] = true }
            for label in after where !before.contains(label) { touched[Int(label)] = true }
        }
        return touched.filter { $0 }.count
    }

    /// The C floor's values: the issues (id, number, title, state), the distinct labels (id,
    /// name, color) and the issues' label keys, ``linksPerIssue`` each.
    func floorValues() -> (issues: CRows, labels: CRows, links: [Int64]) {
        var links: [Int64] = []
        links.reserveCapacity(count * Self.linksPerIssue)
        let issues = CRows(columnCount: 4, rowCount: count) { index, row in
            let issue = issue(at: index)
            row.integer(issue.id); row.integer(issue.number); row.text(issue.title); row.text(issue.state)
            links += issue.labels
        }
        let keys = distinctLabels()
        let labels = CRows(columnCount: 3, rowCount: keys.count) { index, row in
            let label = Self.label(keys[index])
            row.integer(keys[index]); row.text(label.name); row.text(label.color)
        }
        return (issues, labels, links)
    }

    /// The benchmark's schema: `Issue` with `labels` through `issue_labels`, `Label`, and the
    /// route `GET /issues` that deletes stale issues.
    static func schema() throws -> Schema {
        try Schema(name: "bench-links", keyConvention: .snakeCase,
                   routes: [Route(.get, "/issues", target: .entity("Issue"), stale: .delete)]) {
            Entity("Issue", tableName: "issues") {
                Attribute("id", .integer); Attribute("number", .integer); Attribute("title", .string)
                Attribute("state", .string)
                Relationship.toMany("labels", "Label", through: "issue_labels")
            }
            Entity("Label", tableName: "labels") {
                Attribute("id", .integer); Attribute("name", .string); Attribute("color", .string)
            }
        }
    }

    /// The tables and index as Replica creates them (checked against Replica's `sqlite_master`).
    static let createStatements = [
        #"CREATE TABLE "issues" ("id" INTEGER NOT NULL PRIMARY KEY, "number" INTEGER, "title" TEXT, "state" TEXT)"#,
        #"CREATE TABLE "labels" ("id" INTEGER NOT NULL PRIMARY KEY, "name" TEXT, "color" TEXT)"#,
        #"CREATE TABLE "issue_labels" ("issueID" INTEGER NOT NULL, "labelID" INTEGER NOT NULL, "#
            + #"PRIMARY KEY ("issueID", "labelID")) WITHOUT ROWID"#,
        #"CREATE INDEX "issue_labels_labelID_index" ON "issue_labels" ("labelID", "issueID")"#,
    ]

    /// Replica's statements for the objects above, in the same order.
    static let layoutSQL = """
        SELECT group_concat(sql, ' ;; ') FROM (SELECT sql FROM sqlite_master WHERE name IN ('issues', 'labels', 'issue_labels', \
        'issue_labels_labelID_index') ORDER BY CASE name WHEN 'issues' THEN 0 WHEN 'labels' THEN 1 \
        WHEN 'issue_labels' THEN 2 ELSE 3 END)
        """

    /// Counts and sums over the three tables, formatted by SQLite (one text value).
    static let checksumSQL = """
        SELECT (SELECT 'issues n=' || count(*) || ' id=' || sum("id") || ' number=' || sum("number") \
        || ' title=' || sum(length("title")) || '/' || sum(unicode(substr("title", -3))) \
        || ' open=' || sum("state" = 'open') || ' state=' || sum(length("state")) FROM "issues") \
        || '; ' || (SELECT 'labels n=' || count(*) || ' id=' || sum("id") || ' name=' || sum(length("name")) \
        || '/' || sum(unicode("name")) || ' color=' || sum(length("color")) || '/' || sum(unicode(substr("color", 2))) \
        FROM "labels") \
        || '; ' || (SELECT 'links n=' || count(*) || ' issue=' || sum("issueID") || ' label=' || sum("labelID") \
        || ' pairs=' || sum("issueID" * "labelID") || '/' || sum(("issueID" % 7) * "labelID" * "labelID") \
        FROM "issue_labels")
        """
}
