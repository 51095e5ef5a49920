import Foundation

extension MockServer {
    /// Loads objects from JSON: an array for `resource`, or (without it) one object keyed by resource
    /// names like a MANY response (`{"people": [...], "cars": [...]}`). Each object's known properties are
    /// harvested and unknown keys dropped, nested to-one objects stored in their own resources
    /// (``MockToOne``); objects with no known property, a wrongly typed value or a composite key lacking
    /// a part are rejected. Objects with a key replace or merge into the stored ones. Works before and
    /// while running; data clients must find from the first request goes in ``MockServerOptions/seeds``,
    /// loaded before the port opens.
    ///
    /// ```swift
    /// let result = try await server.load(json: try JSONValue(parsing: #"{"people": [{"name": "ann"}]}"#))
    /// // result.loaded == 1
    /// ```
    /// - Parameters:
    ///   - json: the data.
    ///   - resource: the resource an array (or single object) belongs to; nil for a MANY-shaped object.
    /// - Returns: loaded and rejected counts.
    /// - Throws: `MockServerError` `.invalidData` for JSON of another shape, `.unknownResource` for an unknown
    ///   `resource`, `.storeFailed` from the store.
    @discardableResult
    public func load(json: JSONValue, into resource: String? = nil) async throws -> MockLoadResult {
        var result = MockLoadResult()
        let known = registry.withLock { $0.resources }
        var batches: [(String, JSONValue)] = []
        if let resource {
            guard known[resource] != nil else { throw MockServerError(code: .unknownResource, message: "no resource '\(resource)'") }
            batches.append((resource, json))
        } else if case .object(let object) = json {
            batches = object.map { ($0.key, $0.value) }
        } else {
            throw MockServerError(code: .invalidData, message: "data must be an object keyed by resource names, or give a resource for an array")
        }
        for (name, value) in batches {
            let items: [JSONValue] = value.arrayValue ?? [value]
            guard let target = known[name] else {
                result.unknownResources.append(name)
                result.rejectedByResource[name, default: 0] += items.count
                continue
            }
            var harvested: [JSONObject] = []
            for (index, item) in items.enumerated() {
                do {
                    // An object lacking a part of a composite key is rejected alone, not with its batch.
                    var values = try target.harvest(item, keepingKey: true)
                    // Nested to-one objects are stored in their own resources, as a POST stores them.
                    if !target.toOne.isEmpty {
                        values = try await target.storingToOne(values, existing: nil, resources: known, store: recordingStore)
                    }
                    harvested.append(try target.assigningKey(to: values))
                } catch let error as MockHTTPError {
                    result.rejectedByResource[name, default: 0] += 1
                    if result.rejections.count < 20 { result.rejections.append("\(name)[\(index)]: \(error.message)") }
                }
            }
            let stored = try await recordingStore.upsert(target, objects: harvested)
            result.loadedByResource[name, default: 0] += stored
            if stored > 0 { touch(name) }
            for relation in target.toOne { touch(relation.resource) }
        }
        return result
    }

    /// Loads a JSON file (see `load(json:into:)`).
    ///
    /// ```swift
    /// let result = try await server.load(file: "seed.json")
    /// ```
    /// - Parameters:
    ///   - path: the file.
    ///   - resource: the resource for an array; nil for a MANY-shaped object.
    /// - Returns: loaded and rejected counts.
    /// - Throws: `MockServerError` `.invalidData` when the file cannot be read or parsed, and as `load(json:into:)`.
    @discardableResult
    public func load(file path: String, into resource: String? = nil) async throws -> MockLoadResult {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw MockServerError(code: .invalidData, message: "\(path): \(error)")
        }
        return try await load(json: json, into: resource)
    }
}
