import GRDB
import ReplicaSQLite

extension SQLiteMockStore: MockPageSource {
    /// The page's rows are rendered as the statement steps, on the reader's thread, each cell read
    /// as ``SQLiteMockStore/objects(_:query:)`` reads it, with no object built per row.
    func renderPage(_ resource: MockResource, query: MockQuery, parent: (parent: MockParent, id: JSONValue)?,
                    with renderer: MockPageRenderer) async throws -> MockRenderedPage {
        let query = MockPageRenderer.query(query, childrenOf: parent)
        let sql = SQLiteMockSQL(resource)
        let page = sql.page(query)
        let types = resource.properties.map(\.type)
        return try await read(resource) { db in
            let rows = try Row.fetchCursor(db.cachedStatement(sql: page.select), arguments: page.selectArguments)
            var writer = renderer.begin()
            var count = 0
            while let row = try rows.next() {
                renderer.writeCells({ SQLiteMockSQL.json(row.fullValue(atIndex: $0), type: types[$0]) }, first: count == 0, into: &writer)
                count += 1
            }
            let body = renderer.end(&writer)
            return MockRenderedPage(body: body, total: try page.total(db, rows: count))
        }
    }
}
