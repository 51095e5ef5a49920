import GRDB

extension String {
    /// The string as a quoted SQLite identifier, with embedded double quotes doubled,
    /// so that any entity or attribute name is safe in SQL text.
    ///
    /// (GRDB's `quotedDatabaseIdentifier` only wraps the name in quotes.)
    package var quotedIdentifier: String {
        "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

extension Database {
    /// Whether a table named `name` exists, with the name bound, never spliced into SQL.
    func replicaTableExists(_ name: String) throws -> Bool {
        try Bool.fetchOne(self, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE)",
                          arguments: [name]) ?? false
    }

    /// The column names of table `name`, with the name bound.
    func replicaColumns(in name: String) throws -> [String] {
        try String.fetchAll(self, sql: "SELECT name FROM pragma_table_info(?)", arguments: [name])
    }
}
