/// The quoted names of one resource's table, as the SQLite and PostgreSQL mock stores both
/// quote them (double quotes, embedded ones doubled).
struct MockTableNames: Sendable {
    let resource: MockResource
    let table: String
    let key: String
    let keyProperty: MockProperty
    /// Every property's column, in property order.
    let columns: String

    init(_ resource: MockResource) {
        self.resource = resource
        table = Self.quote(resource.name)
        key = Self.quote(resource.primaryKey.name)
        keyProperty = MockProperty(resource.primaryKey.name, resource.primaryKey.type)
        columns = resource.properties.map { Self.quote($0.name) }.joined(separator: ", ")
    }

    /// `"name"` with embedded quotes doubled (GRDB's `quotedDatabaseIdentifier` does not double them).
    static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
