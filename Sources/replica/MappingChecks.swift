import ArgumentParser
import Replica

/// How strictly objects are mapped: the options `replica import` and `replica sync` share.
struct MappingChecks: ParsableArguments {
    @Flag(help: "Fail (and write nothing) when a key matches no attribute, a collection no entity, or an object gives a key twice.")
    var strict = false

    @Option(name: .customLong("shared-children"),
            help: "fail, or last-parent-wins (with a warning), when one child is nested under two parents of a one-to-many relationship.")
    var sharedChildren: SharedChildPolicy = .fail

    /// Sets `options`' key and shared-child policies to these.
    func apply(to options: inout SyncOptions) {
        options.strictKeys = strict
        options.sharedChildren = sharedChildren
    }
}
