import NIOCore

/// A store that hands a page's rows to a ``MockPageRenderer`` as it holds them, without building
/// the completed `JSONObject`s of ``MockStore/objects(_:query:)`` first.
///
/// The closed set of conforming types: ``MemoryMockStore`` and ``SQLiteMockStore``, and the server's
/// `FeedRecordingStore`, which renders through the store it records for. Other stores are rendered
/// from `objects` (the same bytes).
protocol MockPageSource: Sendable {
    /// The page of `query` (children of `parent` when given) rendered as ``MockPageRenderer/render(_:)``
    /// would render `objects(resource, query:)`, and the total matching the filters.
    func renderPage(_ resource: MockResource, query: MockQuery, parent: (parent: MockParent, id: JSONValue)?,
                    with renderer: MockPageRenderer) async throws -> MockRenderedPage
}

extension MockPageSource {
    /// The page of `query`, of no parent.
    func renderPage(_ resource: MockResource, query: MockQuery, with renderer: MockPageRenderer) async throws -> MockRenderedPage {
        try await renderPage(resource, query: query, parent: nil, with: renderer)
    }
}

/// A page rendered to bytes and the number of objects matching its filters (`X-Total-Count`).
struct MockRenderedPage: Sendable {
    var body: MockRenderedBody
    var total: Int
}

/// Renders a page of a resource to the bytes the default serializer (``PassThroughSerializer``) and
/// `JSONValue.serializedBytes()` give for it: `[` objects in their wire shape `]`, inside the route's
/// envelope if it has one. Taken only when nothing can see the `JSONValue` body (the default controller
/// and serializer, no body fault), so that it changes no answer, only how fast it is made.
///
/// ```swift
/// let renderer = MockPageRenderer(resource: people, envelope: nil)
/// var writer = renderer.begin()
/// renderer.writeStored(["id": 1, "name": "ann"], into: &writer)
/// let body = renderer.end(&writer)   // [{"id":1,"name":"ann",…}]
/// ```
struct MockPageRenderer: Sendable {
    let resource: MockResource
    /// The envelope's keys, outermost first (`data.items` → `data`, `items`).
    let envelope: [String]
    /// Whether rows go on the wire as stored: no dotted property nests, no kept unmapped keys merge in, no
    /// to-one value is left out.
    let isFlat: Bool
    /// `{"id":` then `,"name":` …: each property's key as it precedes its value.
    private let keyPrefixes: [[UInt8]]

    init(resource: MockResource, envelope: String?) {
        self.resource = resource
        self.envelope = envelope.map { $0.split(separator: ".").map(String.init) } ?? []
        isFlat = Self.isFlat(resource)
        keyPrefixes = resource.properties.enumerated().map { index, property in
            var writer = MockPageWriter(capacity: 64)
            writer.byte(index == 0 ? UInt8(ascii: "{") : UInt8(ascii: ","))
            writer.string(property.name)
            writer.byte(UInt8(ascii: ":"))
            return writer.finish().bytes
        }
    }

    /// Whether `resource`'s rows go on the wire as stored (``isFlat``).
    static func isFlat(_ resource: MockResource) -> Bool {
        !resource.keyPaths.nests && resource.unmappedProperty == nil && resource.toOne.isEmpty
    }

    /// A writer with the envelope and `[` written.
    func begin() -> MockPageWriter {
        var writer = MockPageWriter()
        for key in envelope {
            writer.byte(UInt8(ascii: "{"))
            writer.string(key)
            writer.byte(UInt8(ascii: ":"))
        }
        writer.byte(UInt8(ascii: "["))
        return writer
    }

    /// Closes the array and the envelope; the body.
    func end(_ writer: inout MockPageWriter) -> MockRenderedBody {
        writer.byte(UInt8(ascii: "]"))
        for _ in envelope { writer.byte(UInt8(ascii: "}")) }
        return writer.finish()
    }

    /// A row as a store keeps it (keyed by property name, perhaps lacking some): written as
    /// `resource.wire(resource.complete(values))` serializes.
    func writeStored(_ values: JSONObject, first: Bool, into writer: inout MockPageWriter) {
        if !first { writer.byte(UInt8(ascii: ",")) }
        if isFlat {
            writeFlatObject(values, into: &writer)
        } else {
            writer.write(.object(resource.wire(resource.complete(values))))
        }
        writer.flushIfFull()
    }

    /// A stored row of a flat resource (``isFlat``) as its object goes on the wire: each property in order,
    /// `null` for those it lacks, other keys left out. The chunk is not ended (``MockRowBytes`` keeps these bytes).
    func writeFlatObject(_ values: JSONObject, into writer: inout MockPageWriter) {
        let properties = resource.properties
        guard !properties.isEmpty else { return writer.raw(Self.emptyObject) }
        for index in properties.indices {
            writer.raw(keyPrefixes[index])
            writer.write(values[properties[index].name] ?? .null)
        }
        writer.byte(UInt8(ascii: "}"))
    }

    /// A row given as one value per property, in property order (a database row): written as the
    /// object of those values in its wire shape.
    func writeCells(_ cell: (Int) -> JSONValue, first: Bool, into writer: inout MockPageWriter) {
        if !first { writer.byte(UInt8(ascii: ",")) }
        let properties = resource.properties
        if isFlat {
            guard !properties.isEmpty else { return writer.raw(Self.emptyObject) }
            for index in properties.indices {
                writer.raw(keyPrefixes[index])
                writer.write(cell(index))
            }
            writer.byte(UInt8(ascii: "}"))
        } else {
            var object = JSONObject()
            for index in properties.indices { object[properties[index].name] = cell(index) }
            writer.write(.object(resource.wire(object)))
        }
        writer.flushIfFull()
    }

    private static let emptyObject = Array("{}".utf8)

    /// Pages of at least this many rows are rendered in two halves at once (the server has cores to spare
    /// while a client waits for a large page's headers).
    static let parallelRows = 20_000

    /// Renders rows as a store keeps them (``writeStored(_:first:into:)``), a large page in two halves at once.
    func renderStored(_ rows: [JSONObject]) async -> MockRenderedBody {
        guard rows.count >= Self.parallelRows else {
            var writer = begin()
            for index in rows.indices { writeStored(rows[index], first: index == 0, into: &writer) }
            return end(&writer)
        }
        let middle = rows.count / 2
        async let second: MockPageWriter.Part = {
            var writer = MockPageWriter(hashing: false)
            for index in middle..<rows.count { writeStored(rows[index], first: false, into: &writer) }
            writer.byte(UInt8(ascii: "]"))
            for _ in envelope { writer.byte(UInt8(ascii: "}")) }
            return writer.finishPart()
        }()
        var writer = begin()
        for index in 0..<middle { writeStored(rows[index], first: index == 0, into: &writer) }
        let first = writer.finishPart()
        return MockPageWriter.join([first, await second])
    }

    /// Renders rows a store keeps as bytes (``MockRowBytes``, written by a renderer of the same properties):
    /// a copy of them into the chunks, hashed as each fills.
    func render(_ page: MockRowBytes.Page) -> MockRenderedBody {
        var writer = begin()
        page.forEachRun { writer.rendered($0) }
        return end(&writer)
    }

    /// Renders objects already complete (as `MockStore.objects` returns them).
    func render(_ objects: [JSONObject]) -> MockRenderedBody {
        var writer = begin()
        for (index, object) in objects.enumerated() {
            if index > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.write(.object(resource.wire(object)))
            writer.flushIfFull()
        }
        return end(&writer)
    }

    /// The page of `query` from `store` (children of `parent` when given, as `MockStore.children` filters
    /// them), straight from the rows when the store is a ``MockPageSource``.
    func page(from store: any MockStore, query: MockQuery,
              parent: (parent: MockParent, id: JSONValue)?) async throws -> MockRenderedPage {
        if let source = store as? any MockPageSource {
            return try await source.renderPage(resource, query: query, parent: parent, with: self)
        }
        let page: MockPage
        if let parent {
            page = try await store.children(resource, of: parent.parent, id: parent.id, query: query)
        } else {
            page = try await store.objects(resource, query: query)
        }
        return MockRenderedPage(body: render(page.objects), total: page.total)
    }

    /// `query` narrowed to the children of `parent`, as `MockStore.children` filters them (neither
    /// the memory store nor the SQLite one replaces that): what a page source renders.
    static func query(_ query: MockQuery, childrenOf parent: (parent: MockParent, id: JSONValue)?) -> MockQuery {
        guard let parent else { return query }
        var query = query
        query.filters.insert(MockQuery.Filter(property: parent.parent.key, value: parent.id), at: 0)
        return query
    }
}
