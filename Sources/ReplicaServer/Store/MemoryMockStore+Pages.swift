extension MemoryMockStore: MockPageSource {
    /// The page's rows are taken under the lock (references, not copies) and rendered after it, so
    /// writers never wait for a page to be written out.
    func renderPage(_ resource: MockResource, query: MockQuery, with renderer: MockPageRenderer) async throws -> MockRenderedPage {
        let (rows, total) = storedRows(resource, query: query)
        return MockRenderedPage(body: await renderer.renderStored(rows), total: total)
    }
}
