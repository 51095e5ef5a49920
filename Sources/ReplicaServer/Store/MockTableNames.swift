/// The quoted names of one resource's table, as the SQLite and PostgreSQL mock stores both
/// quote them (double quotes, embedded ones doubled). `package`: the PostgreSQL store lives in
/// `ReplicaServerPostgres`.
///
/// ```swift
/// let names = MockTableNames(people)
/// let select = "SELECT \(names.columns) FROM \(names.table) WHERE \(names.keyCondition { _, _ in "?" })"
/// ```
package struct MockTableNames: Sendable {
    /// The resource whose table this names.
    package let resource: MockResource
    /// The table's quoted name.
    package let table: String
    /// The primary key's quoted columns: one, or a composite key's parts in order.
    package let keyColumns: [String]
    /// The primary key's properties (names and types), in the order of ``keyColumns``.
    package let keyParts: [MockProperty]
    /// Every property's column, in property order.
    package let columns: String

    /// The names of `resource`'s table.
    ///
    /// ```swift
    /// let names = MockTableNames(people)   // names.table == "\"people\""
    /// ```
    package init(_ resource: MockResource) {
        self.resource = resource
        table = Self.quote(resource.name)
        keyParts = resource.primaryKey.parts
        keyColumns = keyParts.map { Self.quote($0.name) }
        columns = resource.properties.map { Self.quote($0.name) }.joined(separator: ", ")
    }

    /// `"name"` with embedded quotes doubled (GRDB's `quotedDatabaseIdentifier` does not double them).
    ///
    /// ```swift
    /// MockTableNames.quote(#"a"b"#)   // "a""b" in double quotes
    /// ```
    package static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `"owner" = $1 AND "repo" = $2 AND "ref" = $3`: the key's columns equal to the marks `mark`
    /// gives for each part (its index and property).
    ///
    /// ```swift
    /// names.keyCondition { index, _ in "$\(index + 1)" }   // "id" = $1
    /// ```
    package func keyCondition(_ mark: (Int, MockProperty) -> String) -> String {
        zip(keyColumns, keyParts).enumerated().map { index, column in "\(column.0) = \(mark(index, column.1))" }
            .joined(separator: " AND ")
    }

    /// The column definitions of the resource's `CREATE TABLE`: the key (its name, then
    /// `autoIncrementKey` or `textKey`), then every other property with its `columnType`. A composite
    /// key's parts are columns of their types, `NOT NULL`, and a `PRIMARY KEY` constraint follows.
    ///
    /// ```swift
    /// let columns = names.columnDefinitions(autoIncrementKey: "INTEGER PRIMARY KEY AUTOINCREMENT",
    ///                                       textKey: "TEXT PRIMARY KEY NOT NULL", columnType: { _ in "TEXT" })
    /// ```
    ///
    /// - Parameters:
    ///   - autoIncrementKey: the key column's type and constraints for an auto-increment key.
    ///   - textKey: the key column's type and constraints for a string key.
    ///   - columnType: the column type of every other property.
    /// - Returns: the definitions, comma-separated.
    package func columnDefinitions(autoIncrementKey: String, textKey: String, columnType: (MockPropertyType) -> String) -> String {
        let primaryKey = resource.primaryKey
        var columns: [String]
        switch primaryKey.kind {
        case .autoIncrement: columns = [keyColumns.joined() + " " + autoIncrementKey]
        case .string: columns = [keyColumns.joined() + " " + textKey]
        case .composite: columns = zip(keyColumns, keyParts).map { "\($0.0) \(columnType($0.1.type)) NOT NULL" }
        }
        for property in resource.properties where !primaryKey.contains(property.name) {
            columns.append("\(Self.quote(property.name)) \(columnType(property.type))")
        }
        if primaryKey.kind == .composite { columns.append("PRIMARY KEY (\(keyColumns.joined(separator: ", ")))") }
        return columns.joined(separator: ", ")
    }
}
