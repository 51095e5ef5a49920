extension String {
    /// The string as a quoted SQLite identifier, with embedded double quotes doubled,
    /// so that any entity or attribute name is safe in SQL text.
    ///
    /// (GRDB's `quotedDatabaseIdentifier` only wraps the name in quotes.)
    package var quotedIdentifier: String {
        "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
