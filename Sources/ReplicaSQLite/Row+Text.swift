import Foundation
import GRDB
import ReplicaCore

extension Row {
    /// The value of column `index`, with TEXT read by its byte length: GRDB's `DatabaseValue`
    /// decodes TEXT as a C string and so stops at the first NUL byte, losing the rest.
    ///
    /// Use it on rows of a cursor (they read the statement's current row); a copied row
    /// already holds the shortened text.
    ///
    /// ```swift
    /// let rows = try Row.fetchCursor(db, sql: "SELECT name FROM people")
    /// while let row = try rows.next() { print(row.fullValue(atIndex: 0)) }   // "a\u{0}b", not "a"
    /// ```
    ///
    /// - Parameter index: The column's index.
    /// - Returns: The column's value.
    public func fullValue(atIndex index: Int) -> DatabaseValue {
        let value: DatabaseValue = self[index]
        guard case .string(let text) = value.storage else { return value }
        let full = try? withUnsafeData(atIndex: index) { data in
            data.flatMap { $0.count > text.utf8.count ? String(decoding: $0, as: UTF8.self) : nil }
        }
        return full.flatMap { $0 }.map(\.databaseValue) ?? value
    }
}
