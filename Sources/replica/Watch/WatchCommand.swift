import ArgumentParser
import Dispatch
import Foundation
import Replica

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Watch a live result set: a terminal view redrawn on every change from any process.",
        discussion: """
            On a terminal: a header with the query and row count, sections as headings, rows fitted to the width, \
            rows that just changed highlighted (inserted green, updated yellow, deleted struck through for a moment). \
            q or Ctrl-C quits and restores the terminal. When standard output is not a terminal, each diff is printed \
            as one JSON line (the first line describes the initial result).
            Example: replica watch --db blog.sqlite Post --where 'userID = ?' --arg 3 --sort -createdAt --section published
            """
    )

    @OptionGroup var query: QueryOptions

    @Option(help: "The attribute whose values make the sections.")
    var section: String?

    @Option(help: "Milliseconds between checks for writes by other processes.")
    var poll: Int = 200

    @Option(help: "Stop after this many seconds (for scripts).")
    var duration: Double?

    func validate() throws {
        try OptionChecks.integer(poll, option: "--poll", in: 10...3_600_000, unit: "of milliseconds")
        if let duration { try OptionChecks.seconds(duration, option: "--duration") }
    }

    func run() async throws {
        let store = try query.openStore()
        let results: LiveResultSet
        let engine: SyncEngine
        let monitor: ExternalChangeMonitor
        do {
            engine = try SyncEngine(store: store)
            // Before the first snapshot: another process's commit after it is then reported, not lost.
            monitor = engine.detectExternalChanges(every: .milliseconds(poll))
            let live = LiveQuery(try store.requireEntity(query.entity).name, where: query.predicate ?? "1",
                                 arguments: query.boundArguments, sort: try query.sortKeys(), sectionKey: section,
                                 limit: query.limit)
            results = try LiveResultSet(engine: engine, query: live)
        } catch let error as StoreError {
            throw CLIError(error.description)
        } catch let error as SyncError {
            throw CLIError(error.description)
        }
        defer {
            monitor.stop()
            results.close()
        }
        let updates = results.updates()
        let deadline = duration.map { ContinuousClock.now + .checkedSeconds($0) }
        if Terminal.width(of: STDOUT_FILENO) != nil {
            try await WatchTerminalView(title: title(), columns: try store.requireEntity(query.entity).attributes.map(\.name))
                .run(updates: updates, deadline: deadline)
        } else {
            try await WatchJSONLines().run(updates: updates, deadline: deadline)
        }
    }

    func title() -> String {
        var text = "replica watch \(query.entity)"
        if let predicate = query.predicate { text += " where \(predicate)" }
        if !query.arguments.isEmpty { text += " [" + query.arguments.joined(separator: ", ") + "]" }
        if let sort = query.sort { text += " sort \(sort)" }
        if let section { text += " by \(section)" }
        if let limit = query.limit { text += " limit \(limit)" }
        return text
    }
}

/// Ends an update loop at a deadline (when given) by finishing a stream the loop races against.
enum Deadline {
    static func sleep(until deadline: ContinuousClock.Instant?) async {
        guard let deadline else {
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            return
        }
        try? await Task.sleep(until: deadline)
    }
}

/// Prints one JSON line for the initial result and one per diff, for scripts and tests.
struct WatchJSONLines {
    func run(updates: LiveResultUpdates, deadline: ContinuousClock.Instant?) async throws {
        emit(["event": "snapshot", "count": .int(Int64(updates.initial.count)),
              "keys": .array(updates.initial.rows.map(\.primaryKey.jsonValue))])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await update in updates {
                    let diff = update.diff
                    var line = JSONObject()
                    line["event"] = "diff"
                    line["count"] = .int(Int64(update.snapshot.count))
                    line["inserted"] = .array(diff.rowInserts.map(\.key.jsonValue))
                    line["updated"] = .array(diff.rowUpdates.map(\.key.jsonValue))
                    line["moved"] = .array(diff.rowMoves.map(\.key.jsonValue))
                    line["deleted"] = .array(diff.rowDeletes.map(\.key.jsonValue))
                    if !diff.sectionInserts.isEmpty || !diff.sectionDeletes.isEmpty {
                        line["sectionsInserted"] = .array(diff.sectionInserts.map { $0.key.jsonValue })
                        line["sectionsDeleted"] = .array(diff.sectionDeletes.map { $0.key.jsonValue })
                    }
                    emit(.object(line))
                }
            }
            group.addTask { await Deadline.sleep(until: deadline) }
            _ = try await group.next()
            group.cancelAll()
        }
    }

    func emit(_ value: JSONValue) {
        Output.write(value.serialized() + "\n", to: .standardOutput)
    }
}

/// The full-screen view: redraws on every update and a moment later, to fade highlights.
struct WatchTerminalView {
    let title: String
    /// The attribute names, in the rows' value order.
    let columns: [String]
    /// The positions of the columns shown, all when `nil`.
    var visibleColumns: [Int]? = nil
    /// An extra header line, asked for on every redraw and once a second.
    var footer: (@Sendable () -> String)? = nil
    static let highlightTime: Duration = .milliseconds(1500)

    func run(updates: LiveResultUpdates, deadline: ContinuousClock.Instant?) async throws {
        let session = TerminalSession()
        defer { session.restore() }
        let (quit, quitSignal) = AsyncStream<Void>.makeStream()
        session.readKeys { quitSignal.yield() }
        let state = ViewState(snapshot: updates.initial)
        let (title, columns, visible, footer) = (title, columns, visibleColumns, footer)
        let redraw: @Sendable () -> Void = {
            let size = session.size
            var screen = state.screen(title: title, columns: columns, visible: visible)
            screen.footer = footer?()
            session.draw(screen.render(width: size.columns, height: size.rows))
        }
        redraw()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await update in updates {
                    state.apply(update)
                    redraw()
                    // Fade the highlights once they have been seen.
                    Task {
                        try? await Task.sleep(for: Self.highlightTime)
                        if state.expire() { redraw() }
                    }
                }
            }
            group.addTask {
                var iterator = quit.makeAsyncIterator()
                _ = await iterator.next()
            }
            group.addTask { await Deadline.sleep(until: deadline) }
            if footer != nil {
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .seconds(1))
                        redraw()
                    }
                }
            }
            _ = await group.next()
            group.cancelAll()
        }
    }
}

/// What the view shows: the current snapshot, recent marks and recently deleted rows.
/// `@unchecked Sendable`: every access goes through `lock`.
final class ViewState: @unchecked Sendable {
    private let lock = NSLock()
    private var snapshot: ResultSnapshot
    private var marks: [AttributeValue: (WatchScreen.Mark, ContinuousClock.Instant)] = [:]
    private var ghosts: [(row: EntityRow, section: Int, at: ContinuousClock.Instant)] = []
    private var updateCount = 0

    init(snapshot: ResultSnapshot) { self.snapshot = snapshot }

    func apply(_ update: LiveResultUpdate) {
        lock.withLock {
            let now = ContinuousClock.now
            snapshot = update.snapshot
            updateCount += 1
            for change in update.diff.rowInserts { marks[change.key] = (.inserted, now) }
            for change in update.diff.rowUpdates + update.diff.rowMoves { marks[change.key] = (.updated, now) }
            for change in update.diff.rowDeletes {
                let section = (change.from?.section ?? update.previous.sectionOffset) - update.previous.sectionOffset
                ghosts.append((change.row, section, now))
            }
        }
    }

    /// Drops marks and ghosts older than the highlight time; `true` when something changed.
    func expire() -> Bool {
        lock.withLock {
            let limit = ContinuousClock.now - WatchTerminalView.highlightTime + .milliseconds(50)
            let before = marks.count + ghosts.count
            marks = marks.filter { $0.value.1 > limit }
            ghosts = ghosts.filter { $0.at > limit }
            return marks.count + ghosts.count != before
        }
    }

    func screen(title: String, columns: [String], visible: [Int]? = nil) -> WatchScreen {
        let pick: (EntityRow) -> [String] = { row in
            guard let visible else { return row.values.map(TextTable.cell) }
            return visible.map { row.values.indices.contains($0) ? TextTable.cell(row.values[$0]) : "" }
        }
        let shownColumns = visible.map { $0.map { columns.indices.contains($0) ? columns[$0] : "" } } ?? columns
        return lock.withLock {
            var sections: [WatchScreen.Section] = []
            let sectioned = snapshot.sections.count > 1 || snapshot.sections.first.map { !$0.key.isNull } == true
            for (index, section) in snapshot.sections.enumerated() {
                var rows = section.rows.map { row in
                    WatchScreen.Row(cells: pick(row), mark: marks[row.primaryKey]?.0 ?? .none)
                }
                for ghost in ghosts where ghost.section == index {
                    rows.append(WatchScreen.Row(cells: pick(ghost.row), mark: .deleted))
                }
                sections.append(WatchScreen.Section(title: sectioned ? section.key.description : nil, rows: rows))
            }
            let orphans = ghosts.filter { $0.section >= snapshot.sections.count }
            if !orphans.isEmpty {
                sections.append(WatchScreen.Section(title: "deleted", rows: orphans.map {
                    WatchScreen.Row(cells: pick($0.row), mark: .deleted)
                }))
            }
            let time = Date().formatted(.dateTime.hour().minute().second())
            return WatchScreen(title: title, status: "\(updateCount) updates · \(time)", columns: shownColumns, sections: sections)
        }
    }
}
