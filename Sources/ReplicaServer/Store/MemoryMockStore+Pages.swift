extension MemoryMockStore: MockPageSource {
    /// The page's rows are taken under the lock (references, not copies) and rendered after it, so
    /// writers never wait for a page to be written out. A flat resource's rows are kept as bytes too
    /// (``MockRowBytes``): a page without filter or sort is then a copy of them.
    func renderPage(_ resource: MockResource, query: MockQuery, parent: (parent: MockParent, id: JSONValue)?,
                    with renderer: MockPageRenderer) async throws -> MockRenderedPage {
        let query = MockPageRenderer.query(query, childrenOf: parent)
        if renderer.isFlat, let (page, total) = storedBytes(resource, query: query) {
            return MockRenderedPage(body: renderer.render(page), total: total)
        }
        let (rows, total) = storedRows(resource, query: query)
        return MockRenderedPage(body: await renderer.renderStored(rows), total: total)
    }
}
