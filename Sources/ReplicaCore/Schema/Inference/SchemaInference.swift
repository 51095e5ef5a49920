import Foundation

/// Infers a schema from sample responses: what a user already has (a live API's answers, a JSON
/// dump) instead of every entity and attribute written by hand.
///
/// Each sample is the JSON one route answered. Types are read over every value seen (integers
/// widen to double, strings are dates only when every one parses as ISO 8601, mixed values and
/// arrays of scalars are `json`); the id key is `id`, else a unique `*_id`/`login`/`slug`-like
/// key, else a composite of the route's variables and a unique key; nested objects with an id
/// become related entities (`toOne` with a foreign key), arrays of them `through` links, objects
/// without one dotted `jsonKey` attributes; an array of objects beside counts or cursors is an
/// envelope. Every key of every sample is placed, so the schema imports its own samples without
/// an unmapped-key warning. What had to be guessed is in ``InferredSchema/notes``.
///
/// ```swift
/// var inference = SchemaInference(name: "tracker")
/// inference.add(try JSONValue(parsing: issuesPage), route: "/repos/:owner/:repo/issues")
/// let inferred = try inference.infer()
/// print(inferred.text)                 // the schema file
/// for note in inferred.notes { print(note) }   // "Issue.closedAt at /0/closed_at: always null in 13 samples, typed string"
/// ```
public struct SchemaInference {
    /// Something inference had to guess, with where it saw it.
    public struct Note: Sendable, Hashable, CustomStringConvertible {
        /// The attribute or entity (`Issue.closedAt`).
        public var subject: String
        /// The sample and JSON pointer (`issues.json /0/closed_at`).
        public var place: String
        /// What was guessed.
        public var message: String

        /// A note.
        ///
        /// ```swift
        /// SchemaInference.Note(subject: "Pet.owner", place: "petstore.yaml #/components/schemas/Pet/properties/owner/oneOf",
        ///                      message: "oneOf without a discriminator: json")
        /// ```
        /// - Parameters:
        ///   - subject: the attribute, entity or route.
        ///   - place: the sample or document and the JSON pointer.
        ///   - message: what was guessed or done.
        public init(subject: String, place: String, message: String) {
            self.subject = subject
            self.place = place
            self.message = message
        }

        public var description: String { "\(subject) at \(place): \(message)" }
    }

    /// The schema's name.
    public var name: String
    /// Routes in the order first given, and what their samples held.
    private var routes: [RouteSamples] = []

    /// An inference with nothing seen yet.
    ///
    /// ```swift
    /// var inference = SchemaInference(name: "github")
    /// ```
    public init(name: String = "inferred") {
        self.name = name
    }

    /// Adds one sample: the JSON that `route` answered (an array of objects, an envelope object, a
    /// single object, or several collections keyed by name).
    ///
    /// ```swift
    /// inference.add(try JSONValue(parsing: page), route: "/repos/:owner/:repo/issues", source: "GET …/issues?page=1")
    /// inference.add(try JSONValue(parsing: repo), route: "/repos/:owner/:repo", requestPath: "/repos/octocat/Hello-World")
    /// ```
    /// - Parameters:
    ///   - value: the sample.
    ///   - route: a path pattern (`:variables` become scope attributes), or a concrete path.
    ///   - source: where the sample came from, for notes (a file, a URL).
    ///   - requestPath: the concrete path that answered it, when known: its segments are the values
    ///     of the route's variables, which tell what attribute a variable names (`octocat` is the
    ///     `owner`'s `login`). A path that does not match `route` gives none.
    public mutating func add(_ value: JSONValue, route: String, source: String = "sample", requestPath: String? = nil) {
        let samples = self.samples(for: route, source: source)
        if let requestPath { samples.record(requestPath: requestPath) }
        switch value {
        case .array(let items):
            for (index, item) in items.enumerated() { samples.element(item, collection: "", at: JSONPointer.root / index) }
        case .object(let object):
            var arrays: Set<String> = []
            for (key, member) in object {
                if case .array(let items) = member, items.contains(where: { $0.objectValue != nil }) {
                    arrays.insert(key)
                    for (index, item) in items.enumerated() { samples.element(item, collection: key, at: JSONPointer.root / key / index) }
                } else {
                    samples.member(key, member)
                }
            }
            samples.endObject(arrayMembers: arrays)
        default:
            samples.scalarSample()
        }
    }

    /// The samples of `route`, made on first use.
    package mutating func samples(for route: String, source: String) -> RouteSamples {
        if let existing = routes.first(where: { $0.pattern == route }) {
            existing.sources.append(source)
            return existing
        }
        let made = RouteSamples(pattern: route, source: source)
        routes.append(made)
        return made
    }

    /// The routes seen, in the order first given.
    var routeSamples: [RouteSamples] { routes }
}

/// What one route's samples held: collections by envelope key (`""` for a top-level array) and
/// single objects.
package final class RouteSamples {
    let pattern: String
    var sources: [String]
    /// The values each variable of the pattern had in the concrete paths the samples came from
    /// (`owner` → `octocat`), at most ``FieldShape/keptValueLimit`` each.
    private(set) var pathValues: [String: Set<String>] = [:]
    /// Whether the pattern has variables: then the identity-like keys of the objects nested in the
    /// samples' objects keep their first values, to learn which of them a variable's values are.
    private(set) lazy var hasVariables: Bool = pattern.split(separator: "/").contains {
        $0.hasPrefix(":") || ($0.hasPrefix("{") && $0.hasSuffix("}"))
    }
    /// The objects of each collection, by the key holding it (`""`: the top-level array).
    private(set) var collections: [(key: String, shape: ObjectShape)] = []
    /// Top-level objects that were one object each.
    private(set) var single: ObjectShape?
    /// Members of the object being read, while it is not known to be an envelope or one object.
    private var members = JSONObject()
    /// Samples that were not objects or arrays of objects.
    private(set) var scalars = 0
    /// Array elements that were not objects.
    private(set) var scalarElements = 0
    /// The first envelope's members beside its collection (`has_more`, `links`, `total`): what
    /// says how the collection pages (``PaginationRule/inferred(fromEnvelope:)``).
    private(set) var envelopeMembers: JSONObject?
    /// The JSON:API resource objects of the samples' `data` and `included`, by type.
    var typed: TypedSamples?
    /// Whether the object being read held resource objects: it is then a document, not one object.
    var holdsResources = false

    init(pattern: String, source: String) {
        self.pattern = pattern
        self.sources = [source]
    }

    /// Records the values of the pattern's variables in `requestPath` (its query ignored), when it
    /// matches the pattern.
    package func record(requestPath: String) {
        guard let values = Self.variableValues(in: requestPath, pattern: pattern) else { return }
        for (variable, value) in values where (pathValues[variable]?.count ?? 0) < FieldShape.keptValueLimit {
            pathValues[variable, default: []].insert(value)
        }
    }

    /// The values of `pattern`'s variables (`:owner`, `{owner}`) in a concrete path, percent-decoded;
    /// nil when the path does not match the pattern (another number of segments, another literal).
    ///
    /// ```swift
    /// RouteSamples.variableValues(in: "/repos/octocat/Hello-World", pattern: "/repos/:owner/:repo")
    /// // ["owner": "octocat", "repo": "Hello-World"]
    /// ```
    static func variableValues(in path: String, pattern: String) -> [String: String]? {
        let bare = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let segments = bare.split(separator: "/", omittingEmptySubsequences: true)
        let parts = pattern.split(separator: "/", omittingEmptySubsequences: true)
        guard segments.count == parts.count else { return nil }
        var values: [String: String] = [:]
        for (part, segment) in zip(parts, segments) {
            let name: Substring
            if part.hasPrefix(":") {
                name = part.dropFirst()
            } else if part.hasPrefix("{"), part.hasSuffix("}") {
                name = part.dropFirst().dropLast()
            } else {
                guard part == segment else { return nil }
                continue
            }
            values[String(name)] = PercentEncoding.decodeString(segment) ?? String(segment)
        }
        return values
    }

    func collection(_ key: String) -> ObjectShape {
        if let found = collections.first(where: { $0.key == key }) { return found.shape }
        let shape = ObjectShape(tracksUniqueness: true, nestedKeepValues: hasVariables)
        collections.append((key: key, shape: shape))
        return shape
    }

    /// One element of a collection.
    func element(_ value: JSONValue, collection key: String, at pointer: JSONPointer) {
        if takeResource(value, key: key, at: pointer) { return }
        guard case .object(let object) = value else {
            scalarElements += 1
            return
        }
        collection(key).observe(object, at: pointer)
    }

    /// One element of a collection that is an object, read from `reader` (just past its `{`).
    func element(_ reader: inout JSONReader, collection key: String, at pointer: JSONPointer) throws {
        try collection(key).observe(&reader, at: pointer)
    }

    /// A member of a top-level object that was not an array of objects.
    func member(_ key: String, _ value: JSONValue) {
        if takeResource(value, key: key, at: JSONPointer.root / key) { return }
        members[key] = value
    }

    /// The end of a top-level object whose array-of-objects members were streamed as
    /// collections: an envelope (one such member beside metadata, or one named like `items`),
    /// several collections, or one object after all (its arrays are then its own fields).
    func endObject(arrayMembers: Set<String>) {
        defer { members = JSONObject() }
        if holdsResources {
            // A JSON:API document: its other members (`links`, `meta`) say how it pages.
            holdsResources = false
            if envelopeMembers == nil { envelopeMembers = members }
            return
        }
        if RouteSamples.isEnvelope(members: members, arrays: arrayMembers) {
            if envelopeMembers == nil { envelopeMembers = members }
            return
        }
        if arrayMembers.count > 1 { return }
        let shape = single ?? ObjectShape(tracksUniqueness: true, nestedKeepValues: hasVariables)
        single = shape
        shape.count += 1
        for (key, value) in members { shape.field(key, in: .root).observe(value, in: .root, key: key) }
        for key in arrayMembers.sorted() {
            // The array's objects were observed as a collection: they are this object's field.
            guard let index = collections.firstIndex(where: { $0.key == key }) else { continue }
            let elements = collections.remove(at: index).shape
            let field = shape.field(key, in: .root)
            field.present += 1
            field.arrays += 1
            if let existing = field.element { existing.merge(elements) } else { field.element = elements }
        }
    }

    func scalarSample() { scalars += 1 }

    /// Keys that name a collection in an envelope.
    static let envelopeKeys: Set<String> = ["items", "data", "results", "records", "entries", "values", "nodes", "objects",
                                            "list", "hits", "rows", "elements", "collection", "content"]

    /// Whether an object whose array-of-objects members are `arrays` is an envelope around one of
    /// them: a collection key like `items`, or one array beside members that are no identity of
    /// their own (counts, cursors, links).
    static func isEnvelope(members: JSONObject, arrays: Set<String>) -> Bool {
        guard arrays.count == 1, let key = arrays.first else { return false }
        if envelopeKeys.contains(key.lowercased()) { return true }
        return !members.keys.contains { FieldShape.couldBeKey($0) && $0.lowercased() != "next" }
    }
}

extension SchemaInference {
    /// Adds a file's samples, read in 64 KiB chunks in bounded memory: a top-level array's objects
    /// and an envelope's collection are observed one object at a time (a 1 GB dump needs no
    /// more memory than its keys). NDJSON is read line by line.
    ///
    /// ```swift
    /// try inference.addFile("people.json")                                  // route /people
    /// try inference.addFile("issues.json", route: "/repos/:owner/:repo/issues")
    /// try inference.addFile("repo.json", route: "/repos/:owner/:repo", requestPath: "/repos/octocat/Hello-World")
    /// ```
    /// - Parameters:
    ///   - path: the file.
    ///   - route: the route its content answers; by default `/` and the file's name without
    ///     its extension (`people.json` → `/people`).
    ///   - requestPath: the concrete path that answered the file, when known: the values of the
    ///     route's variables (see ``add(_:route:source:requestPath:)``).
    ///   - format: JSON or NDJSON; by default as the file's name says (``InputFormat/init(path:)``).
    /// - Throws: ``SchemaError`` `.unreadableFile` naming the file, `.invalidJSON` with the byte
    ///   offset of malformed JSON, `.cannotInfer` when `requestPath` does not match `route`.
    public mutating func addFile(_ path: String, route: String? = nil, requestPath: String? = nil, format: InputFormat? = nil) throws {
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let pattern = route ?? "/" + name
        if let requestPath, RouteSamples.variableValues(in: requestPath, pattern: pattern) == nil {
            throw SchemaError(.cannotInfer, "\(requestPath) does not match the route \(pattern) that \(path) is given for", file: path)
        }
        let samples = self.samples(for: pattern, source: URL(fileURLWithPath: path).lastPathComponent)
        if let requestPath { samples.record(requestPath: requestPath) }
        // One read(2) per chunk straight into the chunk's buffer, as the import reads files.
        let chunks: FileChunks
        do {
            chunks = try FileChunks(path: path, chunkSize: 1 << 16)
        } catch {
            throw SchemaError(.unreadableFile, "cannot be opened (no such file, or not readable)", file: path)
        }
        defer { chunks.close() }
        let reader = SampleStream(samples, format: format ?? InputFormat(path: path), source: path)
        while true {
            let chunk: [UInt8]?
            do {
                chunk = try chunks.next()
            } catch let error as SyncError {
                throw SchemaError(.unreadableFile, error.message, file: path)
            }
            guard let chunk else { break }
            try reader.feed(chunk)
        }
        try reader.finish()
    }
}

/// One sample read as it arrives, in chunks (a file's, a response body's): the elements of a
/// top-level array and of an envelope's collection are observed one object at a time, so memory
/// stays bounded by the keys, not the sample; NDJSON is read line by line.
package final class SampleStream {
    private let samples: RouteSamples
    private let format: InputFormat
    /// The file or URL, for errors.
    private let source: String
    /// Made at the first byte that is not blank: a top-level array is streamed element by element
    /// (its elements are counted, not kept), a top-level object member by member, its arrays
    /// streamed in turn.
    private var parser: JSONStreamParser?
    /// Blank bytes before the first value, fed once the parser is made (so offsets stay right).
    private var leading: [UInt8] = []
    private var arrays: Set<String> = []
    private var scalarArrays: [String: [JSONValue]] = [:]
    private var topLevelArray = false
    /// NDJSON: the bytes of the line being read, and the lines read.
    private var pending: [UInt8] = []
    private var line = 0

    package init(_ samples: RouteSamples, format: InputFormat, source: String) {
        self.samples = samples
        self.format = format
        self.source = source
    }

    /// Reads the next chunk.
    /// - Throws: ``SchemaError`` `.invalidJSON` naming the source and the byte offset or line.
    package func feed(_ chunk: [UInt8]) throws {
        if format == .ndjson {
            pending += chunk
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: 10) {
                try takeLine(pending[start..<newline])
                start = newline + 1
            }
            pending.removeSubrange(..<start)
            return
        }
        do {
            if parser == nil {
                guard let first = chunk.first(where: { ![32, 9, 10, 13].contains($0) }) else {
                    leading += chunk
                    // A megabyte of blanks: whatever follows is parsed as an object's members would be.
                    if leading.count > 1 << 20 { try start(with: UInt8(ascii: "{")) }
                    return
                }
                try start(with: first)
            }
            try parser?.feed(chunk) { try take($0) }
        } catch let error as JSONParseError {
            throw SchemaError(.invalidJSON, "\(error)", file: source)
        }
    }

    /// Ends the sample: a top-level object's members are placed (an envelope, several collections
    /// or one object).
    /// - Throws: ``SchemaError`` `.invalidJSON` for a sample that ends early.
    package func finish() throws {
        if format == .ndjson {
            if !pending.isEmpty { try takeLine(pending[...]) }
            return
        }
        let skeleton: JSONValue
        do {
            if parser == nil { try start(with: UInt8(ascii: "{")) }
            skeleton = try parser?.finish { try take($0) } ?? .null
        } catch let error as JSONParseError {
            throw SchemaError(.invalidJSON, "\(error)", file: source)
        }
        guard !topLevelArray else { return }
        guard case .object(let object) = skeleton else {
            if case .array = skeleton { return }   // an empty top-level array
            samples.scalarSample()
            return
        }
        // Arrays of scalars, and empty arrays, are the object's own members.
        for (key, member) in object where !arrays.contains(key) {
            if case .array = member { samples.member(key, .array(scalarArrays[key] ?? [])) }
        }
        samples.endObject(arrayMembers: arrays)
    }

    /// Makes the parser for a document starting with `first` and feeds it the blanks before it.
    private func start(with first: UInt8) throws {
        var made = JSONStreamParser(patterns: first == UInt8(ascii: "[") ? [.root] : [[.anyKey]])
        if !leading.isEmpty { try made.feed(leading) { try take($0) } }
        leading = []
        parser = made
    }

    /// Elements of a top-level array, and the members of a top-level object (arrays streamed).
    private func take(_ element: borrowing JSONElement) throws {
        let pointer = element.pointer
        // An object in a collection (a top-level array's, an envelope's) is read token by token,
        // never made into a value.
        if element.bytes.first == UInt8(ascii: "{") {
            var collection: String?
            switch (pointer.components.first, pointer.components.last, pointer.components.count) {
            case (.index?, _, 1):
                topLevelArray = true
                collection = ""
            case (.key(let key)?, .index?, 2) where key != "data" && key != "included":
                // JSON:API's `data` and `included` are read as values, to see each resource's type.
                arrays.insert(key)
                collection = key
            default:
                break
            }
            if let collection {
                var reader = element.reader()
                _ = try reader.next()
                try samples.element(&reader, collection: collection, at: pointer)
                while try reader.next() != .end {}
                return
            }
        }
        let value = try element.value()
        switch (pointer.components.first, pointer.components.count) {
        case (.index?, 1):
            topLevelArray = true
            samples.element(value, collection: "", at: pointer)
        case (.key(let key)?, 1):
            samples.member(key, value)
        case (.key(let key)?, 2):
            if value.objectValue != nil {
                arrays.insert(key)
                samples.element(value, collection: key, at: pointer)
            } else if arrays.contains(key) {
                samples.element(value, collection: key, at: pointer)
            } else {
                scalarArrays[key, default: []].append(value)
            }
        default:
            break
        }
    }

    /// One NDJSON line: one object of the route's collection.
    private func takeLine(_ bytes: ArraySlice<UInt8>) throws {
        line += 1
        guard let first = bytes.first(where: { $0 != 32 && $0 != 9 && $0 != 13 }) else { return }
        let pointer = JSONPointer.root / (line - 1)
        do {
            guard first == UInt8(ascii: "{") else {
                samples.element(try JSONValue(parsing: Array(bytes)), collection: "", at: pointer)
                return
            }
            // An object line is read token by token, as a JSON array's objects are.
            try bytes.withUnsafeBytes { raw in
                var reader = JSONReader(bytes: raw)
                _ = try reader.next()
                try samples.element(&reader, collection: "", at: pointer)
                while try reader.next() != .end {}
            }
        } catch {
            throw SchemaError(.invalidJSON, "line \(line): \(error)", file: source)
        }
    }
}
