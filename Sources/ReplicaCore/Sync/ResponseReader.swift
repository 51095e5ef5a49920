import Foundation

/// How the values found in a response map to entities.
package enum ResponseShape: Sendable {
    /// Objects of one entity, at any of these patterns (an envelope and namespaces).
    case entity(Int, patterns: [JSONPathPattern])
    /// MANY: collections keyed by entity or table name, under `envelope`, in RSAPI's
    /// shape `[{"User": [...]}]` or the plain `{"users": [...]}`.
    case many(envelope: [String])
    /// DATA: the whole value is parsed and handed back.
    case data(envelope: [String])
    /// Objects that name their entity by a discriminator (JSON:API's `type`), with the
    /// collection and the other objects of the document (`included`).
    case typed(TypedShape)

    var patterns: [JSONPathPattern] {
        switch self {
        case .entity(_, let patterns): return patterns
        case .many(let envelope):
            let prefix = envelope.map { JSONPathPattern.Component.key($0) }
            return [JSONPathPattern(prefix + [.anyKey]), JSONPathPattern(prefix + [.anyIndex, .anyKey])]
        case .data: return []
        case .typed(let typed): return typed.patterns
        }
    }
}

/// What the parsing thread sends the writer.
enum ReaderMessage: Sendable {
    case rows(RowBatch)
    case finished(ReaderSummary)
}

/// What the parsing thread learned about the whole response.
package struct ReaderSummary: Sendable {
    var statistics = PlanStatistics()
    /// Where values were found, and whether they were streamed arrays (complete collections).
    var matches: [JSONStreamMatch] = []
    /// The response with streamed arrays emptied (for DATA: the whole response).
    package var skeleton: JSONValue = .null
    /// Entities whose complete collections were seen, for stale-row deletion.
    package var completeCollections: Set<Int> = []
    package var byteCount: Int64 = 0
}

extension ReaderSummary {
    /// Objects read (including nested and skipped ones).
    package var objectCount: Int { statistics.objectCount }
    /// Objects skipped under ``InvalidObjectPolicy/skip``.
    package var skipped: [SkippedObject] { statistics.skipped }
    /// Occurrences of keys and collections that matched nothing.
    package var ignoredKeyCount: Int { statistics.ignoredKeyCount }
    /// The ignored keys, with the names of the entities by index.
    package func ignoredKeys(entityNames: [String]) -> [IgnoredKey] { statistics.ignored.keys(entityNames: entityNames) }
}

/// Parses a response on its own thread, maps its objects and hands planned rows to the writer
/// in batches, so that parsing and writing overlap.
final class ResponseReader: Sendable {
    let planner: RowPlanner
    let shape: ResponseShape
    let scope: RouteScope?
    let options: SyncOptions
    let source: String
    /// Rows per batch handed to the writer.
    let batchSize = 2048
    /// The hot path for the target entity's flat objects, when its map allows one.
    let fast: FastObjectDecoder?
    /// The schema's MANY routes (`GET /bootstrap`), suggested when an object of collections is
    /// read as one object.
    let manyRoutes: [String]
    /// The one-to-many claims of the sync's earlier pages: a child claimed there by another
    /// parent is shared across pages, and caught as within one.
    let priorClaims: [ClaimKey: ChildClaimRecord]

    init(planner: RowPlanner, shape: ResponseShape, scope: RouteScope?, options: SyncOptions, source: String,
         manyRoutes: [String] = [], priorClaims: [ClaimKey: ChildClaimRecord] = [:]) {
        self.planner = planner
        self.priorClaims = priorClaims
        self.manyRoutes = manyRoutes
        self.shape = shape
        self.scope = scope
        self.options = options
        self.source = source
        if case .entity(let entity, _) = shape {
            fast = FastObjectDecoder(map: planner.mapping.maps[entity])
        } else {
            fast = nil
        }
    }

    /// Reads chunks from `next` until it returns `nil`, pushing rows to `queue`.
    /// Ends with `.finished`, or throws (malformed JSON, an invalid object under `fail`, cancellation).
    /// Batches come from `pool`, where the writer returns them once written.
    func run(next: () throws -> [UInt8]?, totalBytes: Int64?, queue: ReaderOutput,
             pool: RowBatchPool, cancellation: Latch) throws {
        if options.format == .ndjson, case .entity(let entity, _) = shape {
            try runLines(entity: entity, next: next, totalBytes: totalBytes, queue: queue, pool: pool, cancellation: cancellation)
            return
        }
        var summary = ReaderSummary()
        summary.statistics.claims = priorClaims
        if case .data(let envelope) = shape {
            var bytes: [UInt8] = []
            while let chunk = try next() {
                if cancellation.isSet { throw SyncError(.cancelled, "cancelled", source: source) }
                bytes += chunk
            }
            summary.byteCount = Int64(bytes.count)
            let value = try parse { try JSONValue(parsing: bytes, limits: options.limits) }
            summary.skeleton = try unwrap(value, envelope: envelope)
            queue.push(.finished(summary))
            return
        }
        var parser = JSONStreamParser(patterns: shape.patterns, limits: options.limits)
        var batch = pool.take()
        var planned: [PlannedRow] = []
        var nextProgress = options.progressInterval
        var order = fast?.makeKeyOrder() ?? FastObjectDecoder.KeyOrder(count: 0)
        // The element handlers are closures passed straight to the parser (non-escaping), so the
        // variables they change are not boxed and cost no dynamic exclusivity check per object.
        while let chunk = try next() {
            if cancellation.isSet { throw SyncError(.cancelled, "cancelled", source: source) }
            try parse {
                try chunk.withUnsafeBytes { bytes in
                    try parser.feed(bytes, direct: { tokenizer in
                        self.decodeInPlace(&tokenizer, batch: &batch, order: &order, statistics: &summary.statistics)
                    }, { element in
                        try self.handle(element, batch: &batch, planned: &planned, statistics: &summary.statistics)
                    })
                }
            }
            summary.byteCount += Int64(chunk.count)
            guard afterChunk(&batch, objects: summary.statistics.objectCount, bytes: summary.byteCount,
                             nextProgress: &nextProgress, totalBytes: totalBytes, queue: queue, pool: pool) else { return }
        }
        summary.skeleton = try parse {
            try parser.finish(direct: { tokenizer in
                self.decodeInPlace(&tokenizer, batch: &batch, order: &order, statistics: &summary.statistics)
            }, { element in
                try self.handle(element, batch: &batch, planned: &planned, statistics: &summary.statistics)
            })
        }
        try finishKeys(&summary.statistics)
        if !batch.isEmpty { guard queue.push(.rows(batch)) else { return } }
        summary.matches = parser.matches
        try checkShape(parser: parser, summary: &summary)
        options.progress?(SyncProgress(bytesRead: summary.byteCount, totalBytes: totalBytes,
                                       objectsWritten: summary.statistics.objectCount))
        queue.push(.finished(summary))
    }

    /// Plans one element into `batch`; `planned` is scratch space for the general path.
    /// After each chunk: hands a full batch to the writer and reports progress when due.
    ///
    /// - Returns: `false` when the writer has stopped taking batches (the read ends).
    func afterChunk(_ batch: inout RowBatch, objects: Int, bytes: Int64, nextProgress: inout Int, totalBytes: Int64?,
                    queue: ReaderOutput, pool: RowBatchPool) -> Bool {
        if batch.count >= batchSize {
            let full = batch
            batch = pool.take()
            guard queue.push(.rows(full)) else { return false }
        }
        if let progress = options.progress, objects >= nextProgress {
            nextProgress = objects + options.progressInterval
            progress(SyncProgress(bytesRead: bytes, totalBytes: totalBytes, objectsWritten: objects))
        }
        return true
    }

    func handle(_ element: borrowing JSONElement, batch: inout RowBatch, planned: inout [PlannedRow],
                        statistics: inout PlanStatistics) throws {
        if let fast, case .entity(let entity, _) = shape, decodeFast(element, fast: fast, entity: entity, batch: &batch,
                                                                      statistics: &statistics) {
            return
        }
        planned.removeAll(keepingCapacity: true)
        do {
            try plan(element, into: &planned, statistics: &statistics)
        } catch var error as SyncError where error.source == nil {
            // An object that cannot be stored names the input it is in (the file, the request).
            error.source = source
            throw error
        }
        let maps = planner.mapping.maps
        for row in planned {
            if !row.isLinks, maps[row.entity].primaryKeyIndexes.count > 1 {
                batch.append(row, keyIndexes: maps[row.entity].primaryKeyIndexes)
            } else {
                batch.append(row, keyIndex: row.isLinks ? 0 : maps[row.entity].primaryKeyIndex)
            }
        }
    }

    /// Once the whole response is read: names it as the source of its ignored keys, and under
    /// ``SyncOptions/strictKeys`` fails listing every key that would not be stored (the writer
    /// then rolls back what it had).
    func finishKeys(_ statistics: inout PlanStatistics) throws {
        statistics.ignored.setSource(source)
        if options.strictKeys && statistics.ignored.total > 0 { throw strictError(statistics.ignored) }
    }

    /// The error of ``SyncOptions/strictKeys``: every key that was not stored, with counts and
    /// first pointers (one key: what it is and where).
    private func strictError(_ tally: IgnoredKeyTally) -> SyncError {
        let names = planner.mapping.maps.map(\.entity.name)
        let keys = tally.keys(entityNames: names)
        let unnamed = tally.unnamedCount > 0
            ? "; \(tally.unnamedCount) more past the first \(IgnoredKeyTally.distinctLimit) distinct keys" : ""
        guard let first = keys.first, keys.count == 1, tally.unnamedCount == 0 else {
            let unknown = keys.filter { $0.kind.dropsValue }
            let duplicates = keys.filter { $0.kind == .duplicateKey }
            let shared = keys.filter { $0.kind == .sharedChild }
            var parts: [String] = []
            if !unknown.isEmpty || tally.unnamedCount > 0 {
                let count = tally.ignoredCount
                parts.append("\(count) \(count == 1 ? "key" : "keys") matched no attribute or entity: "
                             + IgnoredKey.grouped(unknown) + unnamed)
            }
            if !duplicates.isEmpty {
                parts.append("keys given twice in one object: " + IgnoredKey.grouped(duplicates))
            }
            if !shared.isEmpty {
                parts.append("children nested under two parents: " + IgnoredKey.grouped(shared))
            }
            return SyncError(.ignoredKey, parts.joined(separator: "; ") + " (strict: nothing was written)", source: source)
        }
        let place = first.example.components.isEmpty ? "/" : first.example.description
        let what: String
        switch first.kind {
        case .unknownKey: what = "key '\(first.key)' matches no attribute or relationship of \(first.entity ?? "")"
        case .unknownCollection: what = "collection '\(first.key)' matches no entity"
        case .unknownType: what = "an object of type '\(first.key)' matches no entity of the route"
        case .duplicateKey: what = "key '\(first.key)' of \(first.entity ?? "") is given twice in one object"
        case .sharedChild: what = "\(first.entity ?? "") objects are nested under two parents through '\(first.key)'"
        }
        return SyncError(.ignoredKey, "\(what) at \(place) (strict: nothing was written)", source: source)
    }

    /// Maps an element through the general path.
    private func plan(_ element: borrowing JSONElement, into rows: inout [PlannedRow],
                      statistics: inout PlanStatistics) throws {
        let value = try element.value()
        switch shape {
        case .entity(let entity, _):
            do {
                try planner.planTopLevel(value, entity: entity, at: element.pointer, scope: scope,
                                         policy: options.onInvalid, sharedChildren: options.sharedChildren, source: source,
                                         into: &rows, statistics: &statistics)
            } catch let error as SyncError where element.pointer.components.isEmpty {
                throw collectionsHint(value, entity: entity) ?? error
            }
        case .many(let envelope):
            let pointer = element.pointer
            let keyPosition = element.patternIndex == 0 ? envelope.count : envelope.count + 1
            guard keyPosition < pointer.components.count, case .key(let name) = pointer.components[keyPosition],
                  let entity = planner.index(of: name)
            else {
                let key: String
                if keyPosition < pointer.components.count, case .key(let name) = pointer.components[keyPosition] {
                    key = name
                } else {
                    key = pointer.description
                }
                statistics.ignored.record(entity: -1, kind: .unknownCollection, key: key,
                                          at: JSONPointer(components: Array(pointer.components.prefix(keyPosition + 1))))
                return
            }
            // A collection's elements arrive one by one; a lone object under the key is one object.
            try planner.planTopLevel(value, entity: entity, at: pointer, scope: nil, policy: options.onInvalid,
                                     sharedChildren: options.sharedChildren, source: source, into: &rows, statistics: &statistics)
        case .typed(let typed):
            let pointer = element.pointer
            switch typed.resolve(value, at: pointer, maps: planner.mapping.maps) {
            case .unknownType(let type, let at):
                statistics.objectCount += 1
                statistics.ignored.record(entity: -1, kind: .unknownType, key: type, at: at)
            case .nothing:
                break
            case .invalid(let error, let entity, let id):
                statistics.objectCount += 1
                let map = planner.mapping.maps[entity]
                switch options.onInvalid {
                case .fail:
                    throw SyncError(.invalidObject, error.description, underlying: error)
                case .skip:
                    // Its id still counts as seen: a skipped object never makes its row stale.
                    let key = map.primaryKey(ofInvalid: .object([PropertyMap.primaryKeyJSONKey(of: map.entity): id]), scope: nil)
                    statistics.skipped.append(SkippedObject(entity: map.entity.name, pointer: pointer, reason: error.description, key: key))
                }
            case .object(let object):
                let isCollection = typed.isCollection(patternIndex: element.patternIndex)
                // The route's scope fills what the collection's objects of its entity leave out.
                let scope = isCollection && object.entity == typed.target ? self.scope : nil
                try planner.planTopLevel(object.value, entity: object.entity, at: pointer, scope: scope,
                                         policy: options.onInvalid, sharedChildren: options.sharedChildren, source: source,
                                         locate: object.places.isEmpty ? nil : { object.locate($0, base: pointer) },
                                         into: &rows, statistics: &statistics)
            }
        case .data:
            break
        }
    }

    /// When a whole input read as one object of `entity` is really an object of collections keyed
    /// by entity names (a MANY response), the error says so instead of "object has no id".
    private func collectionsHint(_ value: JSONValue, entity: Int) -> SyncError? {
        guard case .object(let object) = value else { return nil }
        let collections = object.keys.filter { key in
            planner.index(of: key) != nil && object[key].map { if case .array = $0 { true } else { false } } == true
        }
        guard !collections.isEmpty else { return nil }
        let name = planner.mapping.maps[entity].entity.name
        let routes = manyRoutes.isEmpty ? "a route whose target is MANY" : "the MANY route " + manyRoutes.joined(separator: " or ")
        return SyncError(.unexpectedShape, "the input is an object of collections (\(collections.joined(separator: ", "))), "
                         + "not \(name) objects: import it through \(routes)", source: source)
    }

    /// Maps a streamed object of the target entity in place, before the parser looks for its
    /// end (``JSONStreamParser/Direct``): the one-pass hot path. `false` leaves the object to
    /// the parser's regular path, which calls ``handle(_:batch:planned:statistics:)``.
    private func decodeInPlace(_ tokenizer: inout JSONTokenizer, batch: inout RowBatch,
                               order: inout FastObjectDecoder.KeyOrder, statistics: inout PlanStatistics) -> Bool {
        guard let fast, case .entity(let entity, _) = shape else { return false }
        batch.beginRow(entity: entity, attributeCount: fast.attributeCount)
        guard fast.decodeInPlace(&tokenizer, into: &batch, order: &order), completeRow(fast: fast, batch: &batch) else {
            batch.discardRow()
            return false
        }
        statistics.objectCount += 1
        batch.commitRow(isTopLevel: true)
        return true
    }

    /// Fills the route scope's values the object left out, and checks its primary key: `false`
    /// when the row needs the general path.
    func completeRow(fast: FastObjectDecoder, batch: inout RowBatch) -> Bool {
        if let scope, !scope.conditions.isEmpty {
            let map = fast.map
            for condition in scope.conditions {
                if let index = map.index(ofAttribute: condition.attribute), batch.kind(index) == .absent {
                    batch.set(condition.value, index)
                }
            }
        }
        guard let keyKind = fast.keyCellKind else { return false }
        return batch.kind(fast.primaryKeyIndex) == keyKind
    }

    /// Maps a flat object on the hot path; `false` sends it to the general path.
    private func decodeFast(_ element: borrowing JSONElement, fast: FastObjectDecoder, entity: Int,
                            batch: inout RowBatch, statistics: inout PlanStatistics) -> Bool {
        batch.beginRow(entity: entity, attributeCount: fast.attributeCount)
        if !statistics.found.isEmpty { statistics.found.removeAll(keepingCapacity: true) }
        var reader = element.reader()
        guard fast.decode(&reader, into: &batch, entity: entity, tally: &statistics.ignored, found: &statistics.found),
              completeRow(fast: fast, batch: &batch)
        else {
            batch.discardRow()
            return false
        }
        statistics.objectCount += 1
        if !statistics.found.isEmpty {
            // The pointer is made only for a key's first occurrence.
            var pointer: JSONPointer?
            for found in statistics.found {
                var example = JSONPointer(components: [])
                if let index = found.index, statistics.ignored.needsExample(index) {
                    let base = pointer ?? element.pointer
                    pointer = base
                    example = base / statistics.ignored.key(index)
                }
                statistics.ignored.count(found.index, kind: found.kind, at: example)
            }
        }
        batch.commitRow(isTopLevel: true)
        return true
    }

    /// Runs a parser call, turning its errors into ``SyncError``s naming the source.
    func parse<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as JSONParseError {
            throw SyncError(.malformedJSON, error.description, source: source, underlying: error)
        }
    }

    private func unwrap(_ value: JSONValue, envelope: [String]) throws -> JSONValue {
        guard !envelope.isEmpty else { return value }
        do {
            return try Envelope(keys: envelope).unwrap(value).0
        } catch let error as MappingError {
            throw SyncError(.unexpectedShape, error.description, source: source, underlying: error)
        }
    }

    /// Checks that the route's envelope and namespace were there, and records complete collections.
    private func checkShape(parser: borrowing JSONStreamParser, summary: inout ReaderSummary) throws {
        switch shape {
        case .entity(let entity, let patterns):
            if parser.matches.isEmpty {
                let map = planner.mapping.maps[entity]
                let expected = patterns.map { pattern in
                    "/" + pattern.components.compactMap { component -> String? in
                        if case .key(let key) = component { return key }
                        return nil
                    }.joined(separator: "/")
                }
                throw SyncError(.unexpectedShape, "expected \(map.entity.name) objects at \(expected.joined(separator: " or ")), "
                                + "found \(summary.skeleton.typeName) \(summary.skeleton.excerpt())", source: source)
            }
            if parser.matches.contains(where: \.isStreamedArray) { summary.completeCollections.insert(entity) }
        case .many(let envelope):
            if !envelope.isEmpty && parser.matches.isEmpty {
                _ = try unwrap(summary.skeleton, envelope: envelope)
            }
            for match in parser.matches where match.isStreamedArray {
                let keyPosition = match.patternIndex == 0 ? envelope.count : envelope.count + 1
                if keyPosition < match.pointer.components.count, case .key(let name) = match.pointer.components[keyPosition],
                   let entity = planner.index(of: name) {
                    summary.completeCollections.insert(entity)
                }
            }
        case .typed(let typed):
            if !parser.matches.contains(where: { typed.isCollection(patternIndex: $0.patternIndex) }) {
                let expected = typed.collection.components.compactMap { component -> String? in
                    if case .key(let key) = component { return key }
                    return nil
                }.joined(separator: "/")
                throw SyncError(.unexpectedShape, "expected objects typed by '\(typed.key)' at /\(expected), "
                                + "found \(summary.skeleton.typeName) \(summary.skeleton.excerpt())", source: source)
            }
            // Only the collection is complete: `included` holds what its objects refer to.
            if parser.matches.contains(where: { typed.isCollection(patternIndex: $0.patternIndex) && $0.isStreamedArray }) {
                summary.completeCollections.insert(typed.target)
            }
        case .data:
            break
        }
    }
}
