// ReplicaServer: the embedded mock REST server over Hummingbird.
//
// The mock-server issue fills this module; it re-exports the core so that
// resources can be declared from a Replica `Schema`.
@_exported import Replica
