/// Receives a live result set's changes as a fetched-results-controller delegate does, on the
/// queue given to ``LiveResultSet/setDelegate(_:queue:)``.
///
/// For each diff: ``resultSetWillChange(_:diff:)``, then one call per change in the diff's batch
/// order (section deletes, row deletes, section inserts, row inserts, moves, updates — see
/// ``ResultDiff``), then ``resultSetDidFinishUpdating(_:snapshot:diff:)`` (RSDataFetcher's
/// `folioDataFetcherDidFinishUpdating`). A reset (``ResultDiff/isReset``: more changes than the
/// query's ``LiveQuery/resetThreshold``) makes one ``resultSet(_:didReset:)`` call instead of the
/// per-change calls: reload everything from its snapshot. The next diff is not delivered before these calls
/// return; commits made meanwhile arrive as one coalesced diff. Every method has an empty
/// default. The result set holds its delegate weakly.
///
/// ```swift
/// final class PostList: LiveResultSetDelegate {
///     func resultSet(_ resultSet: LiveResultSet, didInsertRow change: ResultDiff.RowChange) {
///         print("insert", change.row, "at", change.to!)
///     }
///     func resultSetDidFinishUpdating(_ resultSet: LiveResultSet, snapshot: ResultSnapshot, diff: ResultDiff) {
///         print(snapshot.count, "posts")
///     }
/// }
/// resultSet.setDelegate(list, queue: .main)
/// ```
public protocol LiveResultSetDelegate: AnyObject, Sendable {
    /// A diff is about to be reported.
    ///
    /// - Parameters:
    ///   - resultSet: The result set.
    ///   - diff: The whole diff that the following calls report change by change.
    func resultSetWillChange(_ resultSet: LiveResultSet, diff: ResultDiff)
    /// A section disappeared; `change.index` is in the old snapshot.
    ///
    /// - Parameters:
    ///   - resultSet: The result set.
    ///   - change: The section's old index (offset included) and key.
    func resultSet(_ resultSet: LiveResultSet, didDeleteSection change: ResultDiff.SectionChange)
    /// A section appeared; `change.index` is in the new snapshot.
    ///
    /// - Parameters:
    ///   - resultSet: The result set.
    ///   - change: The section's new index (offset included) and key.
    func resultSet(_ resultSet: LiveResultSet, didInsertSection change: ResultDiff.SectionChange)
    /// A row left the result; `change.from` is its old path, `change.row` its old value.
    ///
    /// - Parameters:
    ///   - resultSet: The result set.
    ///   - change: The deleted row.
    func resultSet(_ resultSet: LiveResultSet, didDeleteRow change: ResultDiff.RowChange)
    /// A row entered the result at `change.to`.
    ///
    /// - Parameters:
    ///   - resultSet: The result set.
    ///   - change: The inserted row.
    func resultSet(_ resultSet: LiveResultSet, didInsertRow change: ResultDiff.RowChange)
    /// A row moved from `change.from` (old) to `change.to` (new); `change.row` is its new value.
    ///
    /// - Parameters:
    ///   - resultSet: The result set.
    ///   - change: The moved row.
    func resultSet(_ resultSet: LiveResultSet, didMoveRow change: ResultDiff.RowChange)
    /// A row kept its place but its values changed; `change.row` is the new value.
    ///
    /// - Parameters:
    ///   - resultSet: The result set.
    ///   - change: The updated row, with its old and new paths.
    func resultSet(_ resultSet: LiveResultSet, didUpdateRow change: ResultDiff.RowChange)
    /// Too many rows changed to report them one by one (a reset): show `snapshot` afresh, as a
    /// table view's `reloadData`. Comes between ``resultSetWillChange(_:diff:)`` and
    /// ``resultSetDidFinishUpdating(_:snapshot:diff:)``, with no per-change call.
    ///
    /// - Parameters:
    ///   - resultSet: The result set.
    ///   - snapshot: The new state.
    func resultSet(_ resultSet: LiveResultSet, didReset snapshot: ResultSnapshot)
    /// All changes of the diff were reported; `snapshot` is the new state.
    ///
    /// - Parameters:
    ///   - resultSet: The result set.
    ///   - snapshot: The new snapshot.
    ///   - diff: The diff just reported.
    func resultSetDidFinishUpdating(_ resultSet: LiveResultSet, snapshot: ResultSnapshot, diff: ResultDiff)
    /// Evaluating a change failed (a database error); the next change re-runs the query.
    ///
    /// - Parameters:
    ///   - resultSet: The result set.
    ///   - error: The error, usually a ``StoreError``.
    func resultSet(_ resultSet: LiveResultSet, didFail error: any Error)
}

/// Empty defaults: implement only the calls you need.
extension LiveResultSetDelegate {
    public func resultSetWillChange(_ resultSet: LiveResultSet, diff: ResultDiff) {}
    public func resultSet(_ resultSet: LiveResultSet, didDeleteSection change: ResultDiff.SectionChange) {}
    public func resultSet(_ resultSet: LiveResultSet, didInsertSection change: ResultDiff.SectionChange) {}
    public func resultSet(_ resultSet: LiveResultSet, didDeleteRow change: ResultDiff.RowChange) {}
    public func resultSet(_ resultSet: LiveResultSet, didInsertRow change: ResultDiff.RowChange) {}
    public func resultSet(_ resultSet: LiveResultSet, didMoveRow change: ResultDiff.RowChange) {}
    public func resultSet(_ resultSet: LiveResultSet, didUpdateRow change: ResultDiff.RowChange) {}
    public func resultSet(_ resultSet: LiveResultSet, didReset snapshot: ResultSnapshot) {}
    public func resultSetDidFinishUpdating(_ resultSet: LiveResultSet, snapshot: ResultSnapshot, diff: ResultDiff) {}
    public func resultSet(_ resultSet: LiveResultSet, didFail error: any Error) {}
}
