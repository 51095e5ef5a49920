// ReplicaServer: the embedded mock REST server over Hummingbird (RESTEasy's feature set).
//
// It re-exports ReplicaCore (the pipeline) so that resources can be declared from a Replica `Schema`.
@_exported import ReplicaCore
