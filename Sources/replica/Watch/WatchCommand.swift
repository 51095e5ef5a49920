import ArgumentParser
import Dispatch
import Foundation
import Replica
import ReplicaPostgres

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Watch a live result set: a terminal view redrawn on every change from any process.",
        discussion: """
            On a terminal: a header with the query and row count, sections as headings, rows fitted to the width, \
            rows that just changed highlighted (inserted green, updated yellow, deleted struck through for a moment), \
            and a position line ("rows 1,001–1,040 of 1,000,000"). Arrows (or k/j) scroll a line, PgUp/PgDn (or b/space) \
            a page, Home/End (or g/G) go to the first and last rows; the view follows the terminal's size. \
            q or Ctrl-C quits and restores the terminal. When standard output is not a terminal, each diff is printed \
            as one JSON line (the first line describes the initial result; a commit changing more than 10,000 rows \
            is one {"event":"reset","count":N} line).
            With --db postgres://USER@HOST:PORT/DATABASE the view follows a PostgreSQL replica: every process syncing \
            into that database announces its commits (NOTIFY), and the view updates as they commit.
            Example: replica watch --db blog.sqlite Post --where 'userID = ?' --arg 3 --sort -createdAt --section published
            """
    )

    @OptionGroup var query: QueryOptions

    @Option(help: "The attribute whose values make the sections.")
    var section: String?

    @Option(help: "Milliseconds between checks for writes by other processes (SQLite; PostgreSQL announces them).")
    var poll: Int = 200

    @Option(help: "Stop after this many seconds (for scripts).")
    var duration: Double?

    @Option(help: "Seconds a changed row stays highlighted on a terminal.")
    var highlight: Double = 1.5

    func validate() throws {
        try OptionChecks.integer(poll, option: "--poll", in: 10...3_600_000, unit: "of milliseconds")
        if let duration { try OptionChecks.seconds(duration, option: "--duration") }
        try OptionChecks.seconds(highlight, option: "--highlight", maximum: 3600)
    }

    func run() async throws {
        // Before the first snapshot: memory freed by one snapshot is reused by the next (WatchMemory).
        WatchMemory.configure()
        let watched = try await watch()
        defer { watched.stop() }
        let deadline = duration.map { ContinuousClock.now + .checkedSeconds($0) }
        // The views take the updates over (consuming): the first snapshot is not kept here for
        // the whole session, only as long as the view shows it.
        if Terminal.width(of: STDOUT_FILENO) != nil {
            var view = WatchTerminalView(title: title(), columns: watched.columns)
            view.highlightTime = .checkedSeconds(highlight)
            view.pending = PendingRows(keys: watched.pendingKeys, every: .milliseconds(poll))
            try await view.run(updates: watched.results.updates(), deadline: deadline)
        } else {
            let lines = WatchJSONLines(pending: PendingRows(keys: watched.pendingKeys, every: .milliseconds(poll)))
            try await lines.run(updates: watched.results.updates(), deadline: deadline)
        }
        await watched.close()
    }

    /// A live result set and what ends it.
    struct Watched {
        let results: LiveResultSet
        let columns: [String]
        /// The keys of the entity's rows that pending mutations of the outbox change.
        let pendingKeys: @Sendable () async -> [AttributeValue]
        /// Stops the updates (also when the view throws).
        let stop: () -> Void
        /// Closes the store once the view has ended.
        let close: () async -> Void
    }

    /// The query on `--db`'s entity, as a live query.
    func liveQuery(_ entity: Entity) throws -> LiveQuery {
        LiveQuery(entity.name, where: query.predicate ?? "1", arguments: query.boundArguments, sort: try query.sortKeys(),
                  sectionKey: section, limit: query.limit)
    }

    /// Opens `--db` and the live result set. Other processes' commits are seen as they commit:
    /// an SQLite file is polled every `--poll` milliseconds, PostgreSQL announces them (`LISTEN`).
    func watch() async throws -> Watched {
        let opened = PostgresURL.isPostgres(query.db) ? try await OpenedStore.open(db: query.db, schema: nil)
            : try OpenedStore.open(sqlite: query.openStore())
        let store = opened.store
        do {
            // Before the first snapshot: another process's commit after it is then reported, not lost.
            let monitor = store.detectExternalChanges(every: .milliseconds(poll))
            let results: LiveResultSet
            let entity: Entity
            do {
                entity = try store.requireEntity(query.entity)
                results = try await LiveResultSet(store: store, query: liveQuery(entity))
            } catch {
                monitor.stop()
                throw error
            }
            let name = entity.name
            let pendingKeys: @Sendable () async -> [AttributeValue] = {
                // A failed read keeps the marks as they were at the next check (nil is not "none").
                (try? await store.pendingKeys(name)).map(Array.init) ?? []
            }
            return Watched(results: results, columns: entity.attributes.map(\.name), pendingKeys: pendingKeys,
                           stop: { monitor.stop(); results.close() }, close: opened.close)
        } catch {
            await opened.close()
            switch error {
            case let error as StoreError: throw CLIError(error.description)
            case let error as SyncError: throw CLIError(error.description)
            case let error as LiveResultError: throw CLIError(error.description)
            default: throw error
            }
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

/// The rows of the watched entity with local changes the API has not confirmed (pending
/// mutations of the outbox): read after every update and every `every`, as the outbox changes
/// with commits that may leave the result as it was (a confirmation).
struct PendingRows: Sendable {
    let keys: @Sendable () async -> [AttributeValue]
    let every: Duration
    private let last = Locked<[AttributeValue]>([])

    init(keys: @escaping @Sendable () async -> [AttributeValue], every: Duration) {
        self.keys = keys
        self.every = every
    }

    /// Reads the keys; calls `changed` with them (under a lock, so calls come in order) when they
    /// differ from the last ones read.
    func refresh(_ changed: @Sendable ([AttributeValue]) -> Void) async {
        let now = await keys()
        last.withLock { last in
            guard now != last else { return }
            last = now
            changed(now)
        }
    }

    /// Refreshes every `every` until cancelled.
    func poll(_ changed: @escaping @Sendable ([AttributeValue]) -> Void) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: every)
            await refresh(changed)
        }
    }
}

/// Prints one JSON line for the initial result and one per diff, for scripts and tests, and
/// `{"event":"pending","keys":[…]}` whenever the rows with unconfirmed local changes change.
struct WatchJSONLines {
    var pending: PendingRows? = nil

    func run(updates: consuming LiveResultUpdates, deadline: ContinuousClock.Instant?) async throws {
        emit(["event": "snapshot", "count": .int(Int64(updates.initial.count)),
              "keys": .array(updates.initial.rows.keys.map(\.jsonValue))])
        let pending = self.pending
        let emitPending: @Sendable ([AttributeValue]) -> Void = { keys in
            Output.write(JSONValue.object(["event": "pending", "keys": .array(keys.map(\.jsonValue))]).serialized() + "\n",
                         to: .standardOutput)
        }
        await pending?.refresh(emitPending)
        // The iterator alone from here: the initial snapshot is released once the result moves on.
        let iterator = updates.makeAsyncIterator()
        _ = consume updates
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var iterator = iterator
                while let update = await iterator.next() {
                    let diff = update.diff
                    var line = JSONObject()
                    if diff.isReset {
                        // More changes than the query lists (LiveQuery.resetThreshold): reload.
                        line["event"] = "reset"
                        line["count"] = .int(Int64(update.snapshot.count))
                        emit(.object(line))
                        continue
                    }
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
                    await pending?.refresh(emitPending)
                }
            }
            if let pending { group.addTask { await pending.poll(emitPending) } }
            group.addTask { await Deadline.sleep(until: deadline) }
            _ = try await group.next()
            group.cancelAll()
        }
    }

    func emit(_ value: JSONValue) {
        Output.write(value.serialized() + "\n", to: .standardOutput)
    }
}

/// The full-screen view: redraws on every update, on every key that scrolls, on a resize of the
/// terminal, and a moment after an update, to fade highlights.
struct WatchTerminalView {
    let title: String
    /// The attribute names, in the rows' value order.
    let columns: [String]
    /// The positions of the columns shown, all when `nil`.
    var visibleColumns: [Int]? = nil
    /// An extra header line, asked for on every redraw and once a second.
    var footer: (@Sendable () -> String)? = nil
    /// How long a changed row stays highlighted (a deleted one struck through).
    var highlightTime: Duration = .milliseconds(1500)
    /// Where the rows with unconfirmed local changes come from; they are marked `*`.
    var pending: PendingRows? = nil

    func run(updates: consuming LiveResultUpdates, deadline: ContinuousClock.Instant?) async throws {
        let session = TerminalSession()
        defer { session.restore() }
        let (events, event) = AsyncStream<TerminalSession.Key?>.makeStream()
        let state = ViewState(snapshot: updates.initial, highlightTime: highlightTime)
        // The iterator alone from here: the view state is the only holder of the initial snapshot,
        // which is released at the first update (a million rows' keys are not kept twice).
        let iterator = updates.makeAsyncIterator()
        _ = consume updates
        let highlightTime = self.highlightTime
        let (title, columns, visible, footer) = (title, columns, visibleColumns, footer)
        let redraw: @Sendable () -> Void = {
            let size = session.size
            let body = WatchScreen.bodyHeight(height: size.rows, hasFooter: footer != nil)
            var screen = state.screen(title: title, columns: columns, visible: visible, bodyHeight: body)
            screen.footer = footer?()
            session.draw(screen.render(width: size.columns, height: size.rows))
        }
        session.readKeys { key in event.yield(key) }
        session.onResize { event.yield(nil) }
        let pending = self.pending
        let markPending: @Sendable ([AttributeValue]) -> Void = { keys in state.setPending(keys) }
        await pending?.refresh(markPending)
        redraw()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var iterator = iterator
                while let update = await iterator.next() {
                    let releases = update.previous.count >= WatchMemory.trimRows
                    state.apply(update)
                    await pending?.refresh(markPending)
                    redraw()
                    // The previous snapshot is gone with the update: its pages go back to the system.
                    _ = consume update
                    if releases { WatchMemory.trim() }
                    // Fade the highlights once they have been seen.
                    Task {
                        try? await Task.sleep(for: highlightTime)
                        if state.expire() { redraw() }
                    }
                }
            }
            group.addTask {
                // Keys scroll; a resize (nil) redraws; quit ends the view.
                for await key in events {
                    guard let key else {
                        redraw()
                        continue
                    }
                    if key == .quit { return }
                    state.scroll(key)
                    redraw()
                }
            }
            group.addTask { await Deadline.sleep(until: deadline) }
            if let pending {
                group.addTask {
                    await pending.poll { keys in
                        state.setPending(keys)
                        redraw()
                    }
                }
            }
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

/// What the view shows, shared by the tasks that update, expire, scroll and draw it: one
/// ``ViewModel`` in a ``Locked``.
final class ViewState: Sendable {
    private let model: Locked<ViewModel>

    init(snapshot: ResultSnapshot, highlightTime: Duration) {
        model = Locked(ViewModel(snapshot: snapshot, highlightTime: highlightTime))
    }

    func apply(_ update: LiveResultUpdate) {
        model.withLock { $0.apply(update) }
    }

    /// The keys of the rows with unconfirmed local changes, marked `*`.
    func setPending(_ keys: [AttributeValue]) {
        model.withLock { $0.pending = Set(keys) }
    }

    /// Drops marks and ghosts older than the highlight time; `true` when something changed.
    func expire() -> Bool {
        model.withLock { $0.expire() }
    }

    /// Moves the view: a line, a page, or to either end. The next screen keeps it in range.
    func scroll(_ key: TerminalSession.Key) {
        model.withLock { $0.scroll(key) }
    }

    /// The screen for a body of `bodyHeight` lines, at the current scroll position.
    func screen(title: String, columns: [String], visible: [Int]? = nil, bodyHeight: Int) -> WatchScreen {
        model.withLock { $0.screen(title: title, columns: columns, visible: visible, bodyHeight: bodyHeight) }
    }
}

/// What the view shows: the current snapshot, the scroll position, recent marks and recently
/// deleted rows.
struct ViewModel: Sendable {
    private var snapshot: ResultSnapshot
    private var marks: [AttributeValue: (WatchScreen.Mark, ContinuousClock.Instant)] = [:]
    private var ghosts: [(row: EntityRow, section: Int, at: ContinuousClock.Instant)] = []
    private var updateCount = 0
    /// The keys of the rows with unconfirmed local changes: while there are any, a first column
    /// marks them `*`.
    var pending: Set<AttributeValue> = []
    /// The body line at the top of the view.
    private var top = 0
    /// The body lines the last screen showed (how far a page scrolls).
    private var page = 20

    /// How long marks and ghosts last.
    private let highlightTime: Duration

    init(snapshot: ResultSnapshot, highlightTime: Duration) {
        self.snapshot = snapshot
        self.highlightTime = highlightTime
    }

    mutating func apply(_ update: LiveResultUpdate) {
        let now = ContinuousClock.now
        snapshot = update.snapshot
        updateCount += 1
        // A reset lists no rows: nothing to highlight, nothing fading out.
        for change in update.diff.rowInserts { marks[change.key] = (.inserted, now) }
        for change in update.diff.rowUpdates + update.diff.rowMoves { marks[change.key] = (.updated, now) }
        for change in update.diff.rowDeletes {
            let section = (change.from?.section ?? update.previous.sectionOffset) - update.previous.sectionOffset
            ghosts.append((change.row, section, now))
        }
    }

    /// Drops marks and ghosts older than the highlight time; `true` when something changed.
    mutating func expire() -> Bool {
        let limit = ContinuousClock.now - highlightTime + .milliseconds(50)
        let before = marks.count + ghosts.count
        marks = marks.filter { $0.value.1 > limit }
        ghosts = ghosts.filter { $0.at > limit }
        return marks.count + ghosts.count != before
    }

    /// Moves the view: a line, a page, or to either end. The next screen keeps it in range.
    mutating func scroll(_ key: TerminalSession.Key) {
        switch key {
        case .up: top -= 1
        case .down: top += 1
        case .pageUp: top -= max(1, page - 1)
        case .pageDown: top += max(1, page - 1)
        case .home: top = 0
        case .end: top = Int.max / 2
        case .quit: break
        }
        top = max(0, top)
    }

    /// Whether sections are shown as headings: there is a section key.
    private var sectioned: Bool {
        snapshot.isSectioned
    }

    /// The body's parts, in order: each section's heading (when sectioned), rows and fading
    /// deleted rows, then deleted rows of sections that are gone.
    private enum Part {
        case heading(Int)
        case rows(section: Int, count: Int, firstRow: Int)
        case ghosts(section: Int)
        case orphans
    }

    private func parts(_ sections: [ResultSnapshot.Section]) -> [(part: Part, lines: Int)] {
        var parts: [(Part, Int)] = []
        var flat = 0
        let sectioned = self.sectioned
        for (index, section) in sections.enumerated() {
            if sectioned { parts.append((.heading(index), 1)) }
            parts.append((.rows(section: index, count: section.rows.count, firstRow: flat), section.rows.count))
            flat += section.rows.count
            let fading = ghosts.filter { $0.section == index }.count
            if fading > 0 { parts.append((.ghosts(section: index), fading)) }
        }
        let orphans = ghosts.filter { $0.section >= sections.count }.count
        if orphans > 0 { parts.append((.orphans, orphans + 1)) }
        return parts
    }

    /// The screen for a body of `bodyHeight` lines, at the current scroll position (clamped so
    /// that the last line of the result ends the view, as a pager does).
    mutating func screen(title: String, columns: [String], visible: [Int]? = nil, bodyHeight: Int) -> WatchScreen {
        let pending = self.pending
        let pick: (EntityRow) -> [String] = { row in
            let cells = visible.map { $0.map { row.values.indices.contains($0) ? TextTable.cell(row.values[$0]) : "" } }
                ?? row.values.map(TextTable.cell)
            guard !pending.isEmpty else { return cells }
            return [pending.contains(row.primaryKey) ? "*" : " "] + cells
        }
        var shownColumns = visible.map { $0.map { columns.indices.contains($0) ? columns[$0] : "" } } ?? columns
        if !pending.isEmpty { shownColumns.insert(" ", at: 0) }
        page = bodyHeight
        // Built once per screen: a snapshot's sections are views made on each access.
        let sections = snapshot.sections
        let parts = parts(sections)
        let total = parts.reduce(0) { $0 + $1.lines }
        top = min(top, max(0, total - bodyHeight))
        var lines: [WatchScreen.Line] = []
        var first: Int?
        var last: Int?
        var start = 0
        for (part, count) in parts where lines.count < bodyHeight {
            defer { start += count }
            guard start + count > top else { continue }
            let from = max(0, top - start)
            let upTo = min(count, from + bodyHeight - lines.count)
            switch part {
            case .heading(let index):
                lines.append(.section(sections[index].key.description))
            case .rows(let index, _, let firstRow):
                let rows = sections[index].rows
                for offset in from ..< upTo {
                    let row = rows[offset]
                    lines.append(.row(WatchScreen.Row(cells: pick(row), mark: marks[row.primaryKey]?.0 ?? .none)))
                }
                if upTo > from {
                    first = first ?? firstRow + from + 1
                    last = firstRow + upTo
                }
            case .ghosts(let index):
                let fading = ghosts.filter { $0.section == index }
                for offset in from ..< upTo { lines.append(.row(WatchScreen.Row(cells: pick(fading[offset].row), mark: .deleted))) }
            case .orphans:
                let fading = ghosts.filter { $0.section >= sections.count }
                for offset in from ..< upTo {
                    if offset == 0 {
                        lines.append(.section("deleted"))
                    } else {
                        lines.append(.row(WatchScreen.Row(cells: pick(fading[offset - 1].row), mark: .deleted)))
                    }
                }
            }
        }
        let time = Date().formatted(.dateTime.hour().minute().second())
        let unconfirmed = pending.isEmpty ? "" : " · * \(pending.count) not yet confirmed by the API"
        return WatchScreen(title: title, status: "\(updateCount) updates · \(time)\(unconfirmed)", columns: shownColumns, lines: lines,
                           rowCount: snapshot.count, visibleRows: first.flatMap { f in last.map { f ... $0 } })
    }
}
