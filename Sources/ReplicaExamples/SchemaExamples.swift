import Foundation
import Replica

/// README "Schemas": the people schema built in Swift.
public func schemaInSwift() throws -> Schema {
    // README: schema-in-swift
    let schema = try Schema(name: "people", keyConvention: .camelCase) {
        Entity("Person") {
            Attribute("id", .integer)
            Attribute("name", .string)
            Attribute("numberOfKids", .integer)
        }
        Entity("Car") {
            Attribute("id", .integer)
            Attribute("color", .string)
            Attribute("personID", .integer, jsonKey: "person_id")
            Relationship.toOne("person", "Person", foreignKey: "personID")
        }
    }
    // README: end
    return schema
}

/// README "Routes": resolving a path through the route table.
///
/// - Returns: The resolved entity's name and the scope's description.
public func routeResolution(schema: Schema) throws -> (entity: String?, scope: String) {
    // README: routes
    let table = try RouteTable(schema: schema)
    let resolution = try table.resolve(.get, "/users/3/posts?page=2")
    let entityName = resolution.entry.entity?.name   // "Post"
    let scope = resolution.scope.description         // "Post where userID = 3"
    // README: end
    return (entityName, scope)
}

/// README "Compound documents and type discriminators": a JSON:API route in Swift.
///
/// - Returns: The route of `/articles`, its objects routed by their JSON:API `type`.
public func jsonAPIRoute() -> Route {
    // README: jsonapi-route
    let articles = Route(.get, "/articles", target: .entity("Article"), stale: .delete, pagination: .jsonAPI,
                         discriminator: .jsonAPI(["articles": "Article", "people": "Person", "comments": "Comment"]))
    // README: end
    return articles
}

/// README "Property maps and transforms": a custom transform.
public func customTransform(store: Store) throws -> SQLiteReplica {
    // README: transforms
    var transforms = TransformRegistry()
    transforms.register("cents") { value in .double((value.doubleValue ?? 0) / 100) }
    let engine = try SQLiteReplica(store: store, transforms: transforms)
    // README: end
    return engine
}

/// README "Composite primary keys": a ref synced, found by its tuple and deleted by it.
///
/// - Returns: Whether the sync inserted the ref, and the row `find` read.
public func compositeKeyExample(store: any ReplicaStore, client: ReplicaClient, data: Data) async throws -> (Bool?, EntityRow?) {
    // README: composite-keys
    let main = AttributeValue.compositeKey([.string("octocat"), .string("Hello-World"), .string("refs/heads/main")])
    let result = try await store.sync(.get, "/repos/octocat/Hello-World/git/refs", body: data)
    let inserted = result.changes["Ref"]?.inserted.contains(main)   // true
    let row = try await client.find("Ref", id: main)   // GET /repos/octocat/Hello-World/git/refs/refs%2Fheads%2Fmain
    try await store.delete("Ref", key: main)            // a single value instead of the tuple: an .invalidKey error
    // README: end
    return (inserted, row)
}
