/// When a resource last changed, for `Last-Modified` and `If-Modified-Since`: kept finer than the
/// one-second HTTP date, so that a write in the same second as an earlier read never gets a false 304.
///
/// ```swift
/// var modified = MockModification(time: 100.2)
/// modified.read()                  // a GET answered "Last-Modified: <second 100>"
/// modified.write(at: 100.7)        // a PUT in that same second
/// modified.isUnchanged(since: 100) // false: the copy dated 100 may predate the PUT
/// ```
struct MockModification: Sendable, Hashable {
    /// The last write, in seconds since 1970, with its fraction.
    private(set) var time: Double
    /// A read began since the last write (its answer carries the current second as `Last-Modified`).
    private var readSinceWrite = false
    /// A write followed such a read within the same second: that second no longer tells copies apart.
    private(set) var isAmbiguous = false

    init(time: Double) {
        self.time = time
    }

    /// The whole second of the last write: the `Last-Modified` date.
    var second: Int { Int(time.rounded(.down)) }

    /// Records that a read of the resource begins (before the store is read).
    mutating func read() {
        readSinceWrite = true
    }

    /// Records a write at `now` (never moving backwards if the wall clock does).
    mutating func write(at now: Double) {
        let now = max(now, time)
        if Int(now.rounded(.down)) == second {
            if readSinceWrite { isAmbiguous = true }
        } else {
            isAmbiguous = false
        }
        readSinceWrite = false
        time = now
    }

    /// Whether a copy the client dates `since` (`If-Modified-Since`, whole seconds) is still current:
    /// the last write is in an earlier second, or in that second with no read before a write in it.
    func isUnchanged(since: Int) -> Bool {
        second < since || (second == since && !isAmbiguous)
    }
}
