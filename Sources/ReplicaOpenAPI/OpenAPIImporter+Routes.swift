import OpenAPIKit
import ReplicaCore

extension OpenAPIImporter {
    /// What an operation's JSON (its response, or its request body) holds.
    enum Payload {
        /// Objects of an entity: one, or a collection (an array, or a wrapper's array under `envelope`).
        case entity(String, collection: Bool, envelope: String?)
        /// JSON that is no entity: handed back as it is.
        case data
        /// No JSON.
        case none
    }

    /// The operations that become routes, in the order routes are written.
    private static func operations(of item: OpenAPI.PathItem) -> [(verb: String, method: HTTPMethod, operation: OpenAPI.Operation)] {
        let all: [(String, HTTPMethod, OpenAPI.Operation?)] = [("get", .get, item.get), ("post", .post, item.post), ("put", .put, item.put),
                                                              ("patch", .patch, item.patch), ("delete", .delete, item.delete)]
        return all.compactMap { verb, method, operation in operation.map { (verb, method, $0) } }
    }

    /// The variables of a path template, in order: `/pet/{petId}` → `["petId"]`.
    static func variables(of template: String) -> [String] {
        template.split(separator: "/").compactMap { segment in
            guard segment.hasPrefix("{"), let close = segment.firstIndex(of: "}") else { return nil }
            return String(segment[segment.index(after: segment.startIndex)..<close])
        }
    }

    /// `/pet/{petId}` → `/pet/:petId`.
    static func routePath(_ template: String) -> String {
        template.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
            guard segment.hasPrefix("{"), let close = segment.firstIndex(of: "}") else { return String(segment) }
            let name = segment[segment.index(after: segment.startIndex)..<close]
            return ":" + name + segment[segment.index(after: close)...]
        }.joined(separator: "/")
    }

    /// The routes of every path, in document order: GET, POST, PUT, PATCH, DELETE.
    func routesJSON() -> [JSONValue] {
        var routes: [JSONValue] = []
        var seen: Set<String> = []
        for (path, item) in document.paths {
            let template = path.rawValue
            let pointer = JSONPointer.root / "paths" / template
            guard let pathItem = document.components[item] else {
                note(template, pointer, "$ref to a path item the document does not define: no routes")
                continue
            }
            let operations = Self.operations(of: pathItem)
            var payloads: [String: Payload] = [:]
            var responseNotes: [String: (pointer: JSONPointer, message: String)] = [:]
            for (verb, _, operation) in operations {
                responseNote = nil
                payloads[verb] = responsePayload(of: operation, path: template, at: pointer / verb)
                responseNotes[verb] = responseNote
                responseNote = nil
            }
            var routePath = Self.routePath(template)
            // `GET /v1/customers/{customer}` answering one Customer: `{customer}` is its key, named as the
            // key's property (`:id`), so the route scopes by it and `find("Customer", id:)` reads through it.
            if case .entity(let entity, false, nil)? = payloads["get"], let draft = draft(named: entity),
               let last = Self.variables(of: template).last, template.hasSuffix("{\(last)}"), last != draft.key,
               draft.object.property(last) == nil, !Self.variables(of: template).contains(draft.key) {
                routePath = String(routePath.dropLast(last.count)) + draft.key
                note("GET \(routePath)", pointer, "{\(last)} names the \(entity) its GET answers: the route's variable is :\(draft.key), "
                     + "\(entity)'s key, so a call scopes by it and find(\"\(entity)\", id:) reads through it")
            }
            let pattern: RoutePattern
            do {
                pattern = try RoutePattern(routePath)
            } catch {
                note(template, pointer, "\(error.message): no routes")
                continue
            }
            routeTemplates[routePath] = template
            for (verb, method, operation) in operations {
                let at = pointer / verb
                let subject = "\(method) \(routePath)"
                // What a GET's response is read as, when it had to be decided (a oneOf/anyOf), or why it is DATA.
                if method == .get, let found = responseNotes[verb] { note(subject, found.pointer, found.message) }
                guard let target = target(method: method, response: payloads[verb] ?? .none, operation: operation,
                                          get: payloads["get"], path: template, subject: subject, at: at) else { continue }
                guard seen.insert(method.rawValue + " " + pattern.shape).inserted else {
                    note(subject, at, "the same route as another path (only variable names differ): not a route")
                    continue
                }
                var route = JSONObject()
                if method != .get { route["method"] = .string(method.rawValue) }
                route["path"] = .string(routePath)
                switch target {
                case .entity(let name, let collection, let envelope):
                    route["target"] = .string(name)
                    if let envelope { route["envelope"] = .string(envelope) }
                    if method == .get, collection,
                       let rule = Self.pagination(members: envelopeMembers[template],
                                                  parameters: queryParameters(of: operation, in: pathItem)) {
                        route["pagination"] = rule.schemaFileJSON
                    }
                case .data, .none:
                    route["target"] = "DATA"
                }
                routes.append(.object(route))
            }
            let others: [(String, OpenAPI.Operation?)] = [("head", pathItem.head), ("options", pathItem.options),
                                                          ("trace", pathItem.trace), ("query", pathItem.query)]
            for (verb, operation) in others where operation != nil {
                note("\(verb.uppercased()) \(routePath)", pointer / verb, "only GET, POST, PUT, PATCH and DELETE operations become routes")
            }
            for (method, _) in pathItem.additionalOperations {
                note("\(method.rawValue) \(routePath)", pointer / "additionalOperations" / method.rawValue,
                     "only GET, POST, PUT, PATCH and DELETE operations become routes")
            }
        }
        return routes
    }

    /// What an operation's route targets, or `nil` (noted) when it is no route: the entity its
    /// response holds; for POST, PUT and PATCH else its request body's entity; for DELETE else
    /// the entity its path's GET answers; else DATA when it answers JSON.
    private func target(method: HTTPMethod, response: Payload, operation: OpenAPI.Operation, get: Payload?, path: String,
                        subject: String, at pointer: JSONPointer) -> Payload? {
        if case .entity(let name, _, _) = response {
            // DELETE answering the deleted form of what its path's GET answers (`deleted_customer`): that entity's route.
            if method == .delete, case .entity(let entity, _, _)? = get, entity != name, isDeletedForm(name, of: entity) {
                note(subject, pointer, "answers \(name), the deleted form of the \(entity) its path's GET answers: the route targets \(entity)")
                return .entity(entity, collection: false, envelope: nil)
            }
            return response
        }
        switch method {
        case .post, .put, .patch:
            if case .entity(let name, _, _) = requestPayload(of: operation, path: path, at: pointer) {
                if case .data = response {
                    note(subject, pointer, "answers JSON that is no \(name): the route targets the \(name) its request body sends")
                }
                return .entity(name, collection: false, envelope: nil)
            }
        case .delete:
            if case .entity(let name, _, _)? = get { return .entity(name, collection: false, envelope: nil) }
        default:
            break
        }
        if case .data = response { return .data }
        let reason = switch method {
        case .get: "no JSON response"
        case .delete: "no JSON response, and no GET of this path answers an entity"
        default: "no JSON response, and no entity in its request body"
        }
        note(subject, pointer, reason + ": not a route")
        return nil
    }

    // MARK: Payloads

    /// The response a route reads: the first 2xx (200 first) with JSON content; `default` only
    /// when there is no 2xx.
    func jsonResponse(of operation: OpenAPI.Operation, at pointer: JSONPointer) -> (schema: JSONSchema?, pointer: JSONPointer)? {
        func rank(_ code: OpenAPI.Response.StatusCode) -> Int? {
            switch code.value {
            case .status(code: 200): return 0
            case .status(code: let status) where (200..<300).contains(status): return status - 199
            case .range(.success): return 200
            default: return nil
            }
        }
        var candidates = operation.responses.compactMap { code, response in rank(code).map { (rank: $0, code: code, response: response) } }
            .sorted { $0.rank < $1.rank }
        if candidates.isEmpty, let fallback = operation.responses[.default] {
            candidates = [(0, .default, fallback)]
        }
        for candidate in candidates {
            guard let response = document.components[candidate.response],
                  let found = jsonContent(response.content, at: pointer / "responses" / candidate.code.rawValue) else { continue }
            return found
        }
        return nil
    }

    /// The JSON content of a content map (`application/json`, else a `+json` type) and its schema.
    private func jsonContent(_ content: OpenAPI.Content.Map, at pointer: JSONPointer) -> (schema: JSONSchema?, pointer: JSONPointer)? {
        let chosen = content.first { $0.key.typeAndSubtype.lowercased() == "application/json" }
            ?? content.first { $0.key.typeAndSubtype.lowercased().hasSuffix("+json") }
        guard let (type, either) = chosen, let found = document.components[either] else { return nil }
        return (found.schema, pointer / "content" / type.rawValue / "schema")
    }

    /// What an operation's response holds; when it is an object that is no entity, ``responseNote``
    /// says why its route is DATA.
    private func responsePayload(of operation: OpenAPI.Operation, path: String, at pointer: JSONPointer) -> Payload {
        guard let (schema, at) = jsonResponse(of: operation, at: pointer) else { return .none }
        guard let schema else { return .data }
        let resolved = resolver.resolve(schema, at: at)
        let found = payload(resolved, path: path)
        if case .data = found, responseNote == nil, case .object = resolver.following(resolved).shape {
            let what = if case .component(let name) = resolved.shape { name } else { "an object" }
            responseNote = (at, "answers \(what), which has no id or identity-like property (and holds no array of an entity's "
                            + "objects): DATA, handed back as it is")
        }
        return found
    }

    private func requestPayload(of operation: OpenAPI.Operation, path: String, at pointer: JSONPointer) -> Payload {
        guard let body = operation.requestBody, let request = document.components[body],
              let (schema, at) = jsonContent(request.content, at: pointer / "requestBody") else { return .none }
        guard let schema else { return .data }
        return payload(resolver.resolve(schema, at: at), path: path)
    }

    /// What a schema of JSON holds: an entity (a reference to one, an array of them, an inline
    /// object with an identity named after the path, a wrapper around an array of them), or data.
    /// A component schema that is no entity is no inline entity either (`inline` is then false).
    func payload(_ resolved: Resolved, path: String, inline: Bool = true) -> Payload {
        switch resolved.shape {
        case .component(let name):
            if let entity = entity(forComponent: name) { return .entity(entity.name, collection: false, envelope: nil) }
            let expanded = resolver.expand(name)
            if case .component = expanded.shape { return .data }
            return payload(expanded, path: path, inline: false)
        case .array(let items):
            if case .component(let name) = items.shape {
                guard let entity = entity(forComponent: name) else { return .data }
                return .entity(entity.name, collection: true, envelope: nil)
            }
            if inline, case .object(let object) = items.shape,
               let made = inlineEntity(named: Inflection.entityName(forPath: path), object: object, pointer: items.pointer) {
                return .entity(made.name, collection: true, envelope: nil)
            }
            return .data
        case .object(let object):
            if inline, let made = inlineEntity(named: Inflection.entityName(forPath: path), object: object, pointer: resolved.pointer) {
                return .entity(made.name, collection: false, envelope: nil)
            }
            if let (key, entity) = envelope(of: object) {
                envelopeMembers[path] = Self.placeholders(object, skipping: key)
                return .entity(entity, collection: true, envelope: key)
            }
            return .data
        case .scalar:
            return .data
        case .json:
            return resolved.alternatives.isEmpty ? .data : choicePayload(resolved, path: path)
        }
    }

    /// A `oneOf`/`anyOf` without a discriminator: the one entity among its branches, when there is
    /// one (a branch that is the deleted form of another's entity, Stripe's `deleted_customer`
    /// beside `customer`, is no other: its objects are the same entity's); else data. Either way
    /// ``responseNote`` says what was decided and why.
    private func choicePayload(_ resolved: Resolved, path: String) -> Payload {
        // The choice's own place (`…/schema/anyOf`), kept by the shape that made it json.
        var pointer = resolved.pointer
        var keyword = "oneOf"
        if case .json(let unmapped?) = resolved.shape {
            pointer = unmapped.pointer
            if unmapped.message.hasPrefix("anyOf") { keyword = "anyOf" }
        }
        var branches: [(name: String, entity: String?, payload: Payload)] = []
        for (offset, branch) in resolved.alternatives.enumerated() {
            let name = if case .component(let component) = branch.shape { component } else { "#\(offset)" }
            let found = payload(branch, path: path, inline: false)
            if case .entity(let entity, false, nil) = found {
                branches.append((name, entity, found))
            } else {
                branches.append((name, nil, found))
            }
        }
        let named = branches.map(\.name).joined(separator: ", ")
        var entities: [String] = []
        for branch in branches { if let entity = branch.entity, !entities.contains(entity) { entities.append(entity) } }
        // A deleted form: a `deleted` flag beside nothing its entity lacks, keyed alike.
        let deletedForms = entities.filter { candidate in
            entities.contains { other in other != candidate && isDeletedForm(candidate, of: other) }
        }
        let kept = entities.filter { !deletedForms.contains($0) }
        guard kept.count == 1, let entity = kept.first, let chosen = branches.first(where: { $0.entity == entity }) else {
            let why = kept.isEmpty
                ? "none of which is one object of an entity"
                : "objects of several entities (\(kept.joined(separator: ", "))) that no discriminator tells apart"
            responseNote = (pointer, "answers \(keyword) \(named), \(why): DATA, handed back as it is")
            return .data
        }
        let others = branches.filter { branch in branch.entity.map { $0 != entity && !deletedForms.contains($0) } ?? true }.map(\.name)
        let deleted = deletedForms.isEmpty ? "" : " (\(deletedForms.joined(separator: ", ")): its deleted form, a `deleted` flag beside its key)"
        responseNote = (pointer, "answers \(keyword) \(named): the route's objects are \(entity)\(deleted)"
                        + (others.isEmpty ? "" : "; objects of \(others.joined(separator: ", ")) it answers are read as \(entity)'s"))
        return chosen.payload
    }

    /// Whether entity `candidate` is the deleted form of `other` (`DeletedCustomer` of `Customer`):
    /// the same key, a `deleted` property, and no other property `other` lacks.
    func isDeletedForm(_ candidate: String, of other: String) -> Bool {
        guard let deleted = draft(named: candidate), let entity = draft(named: other), deleted.key == entity.key,
              deleted.object.property("deleted") != nil, entity.object.property("deleted") == nil else { return false }
        let known = Set(entity.object.properties.map(\.key))
        return deleted.object.properties.allSatisfy { $0.key == "deleted" || known.contains($0.key) }
    }

    /// The names of an operation's query parameters (its own and its path's, references followed).
    func queryParameters(of operation: OpenAPI.Operation, in pathItem: OpenAPI.PathItem) -> Set<String> {
        var names: Set<String> = []
        for either in pathItem.parameters + operation.parameters {
            let parameter: OpenAPI.Parameter?
            switch either {
            case .a(let reference): parameter = document.components[reference]
            case .b(let inline): parameter = inline
            }
            if let parameter, parameter.location == .query { names.insert(parameter.name) }
        }
        return names
    }

    /// An envelope's members beside its collection as placeholders of their types (`false`,
    /// `""`, `null` for numbers, objects of their own members), for
    /// ``PaginationRule/inferred(fromEnvelope:)``.
    static func placeholders(_ object: ObjectShape, skipping key: String) -> JSONObject {
        var members = JSONObject()
        for property in object.properties where property.key != key {
            members[property.key] = placeholder(property.value)
        }
        return members
    }

    private static func placeholder(_ resolved: Resolved) -> JSONValue {
        switch resolved.shape {
        case .scalar("bool"): return .bool(false)
        case .scalar("string"), .scalar("date"): return .string("")
        case .object(let object): return .object(placeholders(object, skipping: ""))
        case .array: return .array([])
        default: return .null
        }
    }

    /// The pagination of a collection's GET from its query parameters and its envelope's
    /// members: `starting_after` is Stripe's; a next URL or a cursor in the envelope (its
    /// parameter named as the operation names it: `cursor`, `start_cursor`, `page_token`…);
    /// `offset` (Jira's `startAt`) with the envelope's `total`; `page` with a size parameter and
    /// the envelope's `total` or `total_pages`. `nil` when neither shows one.
    static func pagination(members: JSONObject?, parameters: Set<String>) -> PaginationRule? {
        let members = members ?? JSONObject()
        func pointer(_ key: String) -> JSONPointer? { members[key] != nil ? JSONPointer("/" + key) : nil }
        let total: ResponseValue? = (pointer("total") ?? pointer("total_count") ?? pointer("totalCount")).map { .pointer($0) }
        if parameters.contains("starting_after") {
            return .afterLastKey(parameter: "starting_after", hasMore: pointer("has_more") ?? JSONPointer("/has_more") ?? .root)
        }
        let found = PaginationRule.inferred(fromEnvelope: members)
        switch found {
        case .nextURL?:
            return found
        case .cursor(let parameter, let cursor, let hasMore)?:
            let named = ["cursor", "start_cursor", "page_token", "pageToken", "after"].first(where: parameters.contains)
            return .cursor(parameter: named ?? parameter, cursor: cursor, hasMore: hasMore)
        default:
            break
        }
        if parameters.contains("startAt"), parameters.contains("maxResults") {
            return .offset(parameter: "startAt", limitParameter: "maxResults", limit: nil, total: total, isLast: pointer("isLast"))
        }
        if parameters.contains("offset") {
            return .offset(parameter: "offset", limitParameter: parameters.contains("limit") ? "limit" : nil, limit: nil, total: total)
        }
        if parameters.contains("page") {
            let size = ["per_page", "page_size", "pageSize", "perPage", "size", "limit"].first(where: parameters.contains)
            let count = ["total_pages", "totalPages", "page_count", "pageCount"].compactMap(pointer).first
            return .page(parameter: "page", startingAt: 1, sizeParameter: size, size: nil, total: total,
                         pageCount: count.map { .pointer($0) })
        }
        return found
    }

    /// A wrapper: one array of entities beside members that are no entity and no other array of
    /// objects (counts, cursors, links); its key and the entity.
    private func envelope(of object: ObjectShape) -> (key: String, entity: String)? {
        var found: (key: String, entity: String)?
        for property in object.properties {
            if case .component(let name) = property.value.shape, entity(forComponent: name) != nil { return nil }
            guard case .array(let items) = resolver.following(property.value).shape else { continue }
            if case .component(let name) = items.shape, let entity = entity(forComponent: name) {
                guard found == nil, !property.key.contains(".") else { return nil }
                found = (property.key, entity.name)
            } else if case .object = resolver.following(items).shape {
                return nil
            }
        }
        return found
    }

    /// For each component schema, the parameters of `GET …/{param}` paths answering it: what
    /// may name its identity.
    func identityParameters() -> [String: [String]] {
        var found: [String: [String]] = [:]
        for (path, item) in document.paths {
            guard let last = path.components.last, last.hasPrefix("{"), last.hasSuffix("}"),
                  let get = document.components[item]?.get,
                  let (schema, at) = jsonResponse(of: get, at: .root / "paths" / path.rawValue / "get"), let schema else { continue }
            if case .component(let name) = resolver.resolve(schema, at: at).shape {
                found[name, default: []].append(String(last.dropFirst().dropLast()))
            }
        }
        return found
    }

    // MARK: Scopes

    /// A note for each path variable that fills no attribute of its route's entity, as the
    /// core's route table matches variables to attributes.
    func unscopedVariableNotes(_ schema: Schema) -> [SchemaInference.Note] {
        guard let table = try? RouteTable(schema: schema) else { return [] }
        var found: [(path: String, variable: String, entity: String, methods: [String])] = []
        for entry in table.entries {
            guard let entity = entry.entity else { continue }
            for variable in entry.pattern.variables where !entry.scopeAttributes.contains(where: { $0.variable == variable }) {
                if let index = found.firstIndex(where: { $0.path == entry.route.path && $0.variable == variable }) {
                    found[index].methods.append(entry.route.method.rawValue)
                } else {
                    found.append((entry.route.path, variable, entity.name, [entry.route.method.rawValue]))
                }
            }
        }
        return found.map { path, variable, entity, methods in
            let pointer = JSONPointer.root / "paths" / (routeTemplates[path] ?? path)
            return SchemaInference.Note(subject: "\(methods.joined(separator: ", ")) \(path)", place: "\(source) #\(pointer)",
                                        message: ":\(variable) names no property of \(entity): it scopes nothing (the response "
                                            + "says which \(entity) it is)")
        }
    }
}
