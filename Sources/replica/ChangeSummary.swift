import Replica

/// The counts `replica import` and `replica sync` print for a change set.
enum ChangeSummary {
    /// `inserted 2, updated 0, deleted 0` when at most one entity changed (its totals);
    /// `User: inserted 2 · Post: inserted 1, deleted 1` (only counts that are not 0, entities
    /// in schema order) when several did, so that rows of different entities are never added up.
    static func counts(_ changes: ChangeSet, entityOrder: [String]) -> (text: String, isPerEntity: Bool) {
        let changed = entityOrder.filter { name in !(changes[name]?.isEmpty ?? true) }
            + changes.changedEntities.subtracting(entityOrder).sorted()
        guard changed.count > 1 else {
            var inserted = 0, updated = 0, deleted = 0
            for entity in changes.entities.values {
                inserted += entity.inserted.count
                updated += entity.updated.count
                deleted += entity.deleted.count
            }
            return ("inserted \(inserted), updated \(updated), deleted \(deleted)", false)
        }
        let parts = changed.map { name -> String in
            guard let entity = changes[name] else { return name }
            if entity.isUnknown { return "\(name): unknown changes" }
            let counts = [("inserted", entity.inserted.count), ("updated", entity.updated.count), ("deleted", entity.deleted.count)]
            return "\(name): " + counts.filter { $0.1 > 0 }.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
        }
        return (parts.joined(separator: " · "), true)
    }
}
