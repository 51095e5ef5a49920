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

    /// The column definitions of the resource's `CREATE TABLE`: the key (its name, then
    /// `autoIncrementKey` or `textKey`), then every other property with its `columnType`.
    func columnDefinitions(autoIncrementKey: String, textKey: String, columnType: (MockPropertyType) -> String) -> String {
        let primaryKey = resource.primaryKey
        var columns = [key + " " + (primaryKey.kind == .autoIncrement ? autoIncrementKey : textKey)]
        for property in resource.properties where property.name != primaryKey.name {
            columns.append("\(Self.quote(property.name)) \(columnType(property.type))")
        }
        return columns.joined(separator: ", ")
    }
}
