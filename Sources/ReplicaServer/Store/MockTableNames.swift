/// The quoted names of one resource's table, as the SQLite and PostgreSQL mock stores both
/// quote them (double quotes, embedded ones doubled). `package`: the PostgreSQL store lives in
/// `ReplicaServerPostgres`.
///
/// ```swift
/// let names = MockTableNames(people)
/// let select = "SELECT \(names.columns) FROM \(names.table) WHERE \(names.key) = ?"
/// ```
package struct MockTableNames: Sendable {
    /// The resource whose table this names.
    package let resource: MockResource
    /// The table's quoted name.
    package let table: String
    /// The primary key's quoted column.
    package let key: String
    /// The primary key as a property (its name and type).
    package let keyProperty: MockProperty
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
        key = Self.quote(resource.primaryKey.name)
        keyProperty = MockProperty(resource.primaryKey.name, resource.primaryKey.type)
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

    /// The column definitions of the resource's `CREATE TABLE`: the key (its name, then
    /// `autoIncrementKey` or `textKey`), then every other property with its `columnType`.
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
        var columns = [key + " " + (primaryKey.kind == .autoIncrement ? autoIncrementKey : textKey)]
        for property in resource.properties where property.name != primaryKey.name {
            columns.append("\(Self.quote(property.name)) \(columnType(property.type))")
        }
        return columns.joined(separator: ", ")
    }
}
