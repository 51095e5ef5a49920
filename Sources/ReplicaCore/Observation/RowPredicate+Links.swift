extension RowPredicate {
    /// The rows linked to one parent through a many-to-many relationship (``Relationship/through``):
    /// a subquery on the join table, with every identifier quoted, so it selects the same rows on
    /// SQLite and PostgreSQL, in ``RowQuery``s and in live result sets alike. A live result set
    /// follows the links as they change: a sync that links or unlinks a row reports it updated.
    ///
    /// ```swift
    /// // The labels of issue 1347:
    /// let labels = try RowPredicate.linked(to: "Issue", .integer(1347), through: "labels", in: store.schema)
    /// let rows = try await store.rows(RowQuery("Label", where: labels.sql, arguments: labels.arguments))
    /// // The issues labelled 208045946, from the other side of the same join table:
    /// let issues = try RowPredicate.linked(to: "Label", .integer(208045946), through: "issues", in: store.schema)
    /// ```
    ///
    /// - Parameters:
    ///   - parent: The entity declaring the relationship.
    ///   - key: The parent's primary key.
    ///   - relationship: The many-to-many relationship of `parent`.
    ///   - schema: The schema declaring them.
    /// - Returns: A predicate over the relationship's destination entity.
    /// - Throws: ``SchemaError`` when `parent` is unknown or `relationship` is not one of its
    ///   many-to-many relationships.
    public static func linked(to parent: String, _ key: AttributeValue, through relationship: String,
                              in schema: Schema) throws -> RowPredicate {
        let entity = try schema.requireEntity(parent)
        guard let declared = entity.relationship(named: relationship) else {
            let names = entity.relationships.map(\.name).joined(separator: ", ")
            throw SchemaError(.invalidRelationship, "entity '\(entity.name)' has no relationship '\(relationship)'"
                              + (names.isEmpty ? "" : " (it has \(names))"))
        }
        guard let join = schema.joinTable(for: declared, of: entity) else {
            throw SchemaError(.invalidRelationship, "relationship '\(entity.name).\(relationship)' is not many-to-many "
                              + "(it has no \"through\" join table)")
        }
        let destination = try schema.requireEntity(declared.destination)
        return RowPredicate(sql: "\(destination.primaryKey.quotedIdentifier) IN (SELECT \(join.columns[1].quotedIdentifier) "
                            + "FROM \(join.name.quotedIdentifier) WHERE \(join.columns[0].quotedIdentifier) = ?)",
                            arguments: [key])
    }
}
