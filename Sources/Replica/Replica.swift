// `import Replica` brings in what most programs need, as before the modules were split: the
// pipeline (JSON, schemas, routes, property maps, sync planning, change sets, live result sets,
// the store protocol), the SQLite store, and the client (requests through a `Transport`,
// pagination, retries, `ReplicaService`).
//
// ```swift
// import Replica
//
// let schema = try Schema(contentsOf: URL(fileURLWithPath: "Schemas/blog.json"))
// let engine = try SQLiteReplica(store: Store.inMemory(schema: schema))
// ```
//
// A program that needs less imports a module alone: `ReplicaCore` (no database, no HTTP),
// `ReplicaSQLite`, `ReplicaClientKit`, `ReplicaPostgres`, `ReplicaHTTP`.
@_exported import ReplicaCore
@_exported import ReplicaSQLite
@_exported import ReplicaClientKit
