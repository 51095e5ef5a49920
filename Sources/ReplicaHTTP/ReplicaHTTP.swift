// ReplicaHTTP: the `Transport` of the Replica client over AsyncHTTPClient. It re-exports the
// core so that `import ReplicaHTTP` is enough for an app that syncs over HTTP.
@_exported import ReplicaClientKit
@_exported import ReplicaCore
