extension ResultSnapshot {
    /// Every row decoded into `type` (coding keys are attribute names), in order, as
    /// ``Store/fetch(_:from:where:arguments:sort:limit:)`` decodes them. In a large snapshot this
    /// reads every row: decode a screenful with ``decode(_:in:)`` instead.
    ///
    /// ```swift
    /// struct Post: Decodable { var id: Int; var title: String }
    /// let posts = try resultSet.snapshot.decode(Post.self)
    /// ```
    ///
    /// - Parameter type: The type.
    /// - Returns: The values, in order.
    /// - Throws: ``StoreError`` (`decoding`) for a row that does not fit, or a failed read.
    public func decode<T: Decodable>(_ type: T.Type) throws -> [T] {
        try decode(type, in: 0 ..< count)
    }

    /// The rows at flat indices `range` decoded into `type`, read in one query per batch in a
    /// large snapshot: rows decoded as they are needed.
    ///
    /// ```swift
    /// let screen = try snapshot.decode(Post.self, in: 0 ..< 40)
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type.
    ///   - range: Flat indices (across sections), clamped to the snapshot.
    /// - Returns: The values, in order.
    /// - Throws: ``StoreError`` (`decoding`) for a row that does not fit, or a failed read.
    public func decode<T: Decodable>(_ type: T.Type, in range: Range<Int>) throws -> [T] {
        try rows(in: range).map { try $0.decode(type) }
    }

    /// The row at a reported index path decoded into `type`, or `nil` when there is none.
    ///
    /// ```swift
    /// let first = try snapshot.decode(Post.self, at: ResultIndexPath(section: 0, row: 0))
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type.
    ///   - indexPath: Section (offset included) and row.
    /// - Returns: The value, or `nil`.
    /// - Throws: ``StoreError`` (`decoding`) when the row does not fit, or a failed read.
    public func decode<T: Decodable>(_ type: T.Type, at indexPath: ResultIndexPath) throws -> T? {
        try loadRow(at: indexPath)?.decode(type)
    }
}
