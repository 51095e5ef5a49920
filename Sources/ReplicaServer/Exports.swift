// ReplicaServer: the embedded mock REST server over Hummingbird (RESTEasy's feature set).
//
// It re-exports the core so that resources can be declared from a Replica `Schema`.
@_exported import Replica
