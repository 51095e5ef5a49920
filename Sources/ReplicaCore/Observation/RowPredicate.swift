/// A where-clause over attribute names with its bound arguments: what a live result set selects.
///
/// Named `RowPredicate` (not `Predicate`) so it never collides with Foundation's `Predicate`.
/// Build one from SQL text, or from the typed comparisons below, combined with `&&`, `||` and `!`;
/// identifiers are always quoted and values always bound, never spliced into the SQL.
///
/// ```swift
/// let mine = RowPredicate.equal("userID", .integer(3)) && !.isNull("title")
/// mine.sql         // (("userID" = ?) AND (NOT ("title" IS NULL)))
/// mine.arguments   // [.integer(3)]
/// ```
public struct RowPredicate: Sendable, Hashable, CustomStringConvertible {
    /// The SQL condition, with `?` placeholders.
    public var sql: String
    /// The values bound to the placeholders, in order.
    public var arguments: [AttributeValue]

    /// Creates a predicate from SQL text over attribute names.
    ///
    /// ```swift
    /// let recent = RowPredicate(sql: "createdAt > ? AND published", arguments: [.date(cutoff)])
    /// ```
    ///
    /// - Parameters:
    ///   - sql: A SQLite condition; an empty string selects every row.
    ///   - arguments: Values for its `?` placeholders.
    public init(sql: String, arguments: [AttributeValue] = []) {
        self.sql = sql.isEmpty ? "1" : sql
        self.arguments = arguments
    }

    /// Every row.
    public static let all = RowPredicate(sql: "1")

    /// `true` for ``all``.
    public var isAll: Bool { sql == "1" && arguments.isEmpty }

    public var description: String {
        arguments.isEmpty ? sql : sql + " " + arguments.map(\.description).description
    }

    static func comparison(_ attribute: String, _ op: String, _ value: AttributeValue) -> RowPredicate {
        RowPredicate(sql: "\(attribute.quotedIdentifier) \(op) ?", arguments: [value])
    }
}

extension RowPredicate {
    /// `attribute = value`; `attribute IS NULL` when `value` is ``AttributeValue/null``.
    ///
    /// ```swift
    /// let posts = RowPredicate.equal("userID", .integer(3))   // "userID" = ?
    /// ```
    ///
    /// - Parameters:
    ///   - attribute: The attribute name.
    ///   - value: The value, bound as the store stores it (bools 0/1, dates Unix seconds).
    /// - Returns: The predicate.
    public static func equal(_ attribute: String, _ value: AttributeValue) -> RowPredicate {
        value.isNull ? isNull(attribute) : comparison(attribute, "=", value)
    }

    /// `attribute <> value` (rows where the attribute is null do not match, as in SQL);
    /// `attribute IS NOT NULL` when `value` is null.
    ///
    /// ```swift
    /// let others = RowPredicate.notEqual("status", .string("draft"))
    /// ```
    ///
    /// - Parameters:
    ///   - attribute: The attribute name.
    ///   - value: The value.
    /// - Returns: The predicate.
    public static func notEqual(_ attribute: String, _ value: AttributeValue) -> RowPredicate {
        value.isNull ? isNotNull(attribute) : comparison(attribute, "<>", value)
    }

    /// `attribute < value`.
    ///
    /// ```swift
    /// let cheap = RowPredicate.less("price", .double(10))
    /// ```
    ///
    /// - Parameters:
    ///   - attribute: The attribute name.
    ///   - value: The bound.
    /// - Returns: The predicate.
    public static func less(_ attribute: String, _ value: AttributeValue) -> RowPredicate {
        comparison(attribute, "<", value)
    }

    /// `attribute <= value`.
    ///
    /// ```swift
    /// let small = RowPredicate.lessOrEqual("size", .integer(3))
    /// ```
    ///
    /// - Parameters:
    ///   - attribute: The attribute name.
    ///   - value: The bound.
    /// - Returns: The predicate.
    public static func lessOrEqual(_ attribute: String, _ value: AttributeValue) -> RowPredicate {
        comparison(attribute, "<=", value)
    }

    /// `attribute > value`.
    ///
    /// ```swift
    /// let recent = RowPredicate.greater("createdAt", .date(cutoff))
    /// ```
    ///
    /// - Parameters:
    ///   - attribute: The attribute name.
    ///   - value: The bound.
    /// - Returns: The predicate.
    public static func greater(_ attribute: String, _ value: AttributeValue) -> RowPredicate {
        comparison(attribute, ">", value)
    }

    /// `attribute >= value`.
    ///
    /// ```swift
    /// let adults = RowPredicate.greaterOrEqual("age", .integer(18))
    /// ```
    ///
    /// - Parameters:
    ///   - attribute: The attribute name.
    ///   - value: The bound.
    /// - Returns: The predicate.
    public static func greaterOrEqual(_ attribute: String, _ value: AttributeValue) -> RowPredicate {
        comparison(attribute, ">=", value)
    }

    /// `attribute IS NULL`.
    ///
    /// ```swift
    /// let unsent = RowPredicate.isNull("sentAt")
    /// ```
    ///
    /// - Parameter attribute: The attribute name.
    /// - Returns: The predicate.
    public static func isNull(_ attribute: String) -> RowPredicate {
        RowPredicate(sql: "\(attribute.quotedIdentifier) IS NULL")
    }

    /// `attribute IS NOT NULL`.
    ///
    /// ```swift
    /// let sent = RowPredicate.isNotNull("sentAt")
    /// ```
    ///
    /// - Parameter attribute: The attribute name.
    /// - Returns: The predicate.
    public static func isNotNull(_ attribute: String) -> RowPredicate {
        RowPredicate(sql: "\(attribute.quotedIdentifier) IS NOT NULL")
    }

    /// `attribute IN (values...)`; an empty list matches no row.
    ///
    /// ```swift
    /// let open = RowPredicate.in("status", [.string("new"), .string("open")])
    /// ```
    ///
    /// - Parameters:
    ///   - attribute: The attribute name.
    ///   - values: The accepted values (nulls never match, as in SQL).
    /// - Returns: The predicate.
    public static func `in`(_ attribute: String, _ values: [AttributeValue]) -> RowPredicate {
        guard !values.isEmpty else { return RowPredicate(sql: "0") }
        let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
        return RowPredicate(sql: "\(attribute.quotedIdentifier) IN (\(marks))", arguments: values)
    }

    /// `attribute LIKE pattern` (SQLite: `%` and `_` wildcards, ASCII case-insensitive).
    ///
    /// ```swift
    /// let examples = RowPredicate.like("email", "%@example.com")
    /// ```
    ///
    /// - Parameters:
    ///   - attribute: The attribute name.
    ///   - pattern: The pattern.
    /// - Returns: The predicate.
    public static func like(_ attribute: String, _ pattern: String) -> RowPredicate {
        comparison(attribute, "LIKE", .string(pattern))
    }

    /// Both conditions; ``all`` is the identity.
    ///
    /// ```swift
    /// let p = RowPredicate.equal("userID", .integer(3)) && .isNotNull("title")
    /// ```
    ///
    /// - Returns: `(lhs) AND (rhs)`.
    public static func && (lhs: RowPredicate, rhs: RowPredicate) -> RowPredicate {
        if lhs.isAll { return rhs }
        if rhs.isAll { return lhs }
        return RowPredicate(sql: "((\(lhs.sql)) AND (\(rhs.sql)))", arguments: lhs.arguments + rhs.arguments)
    }

    /// Either condition.
    ///
    /// ```swift
    /// let p = RowPredicate.equal("status", .string("new")) || .isNull("status")
    /// ```
    ///
    /// - Returns: `(lhs) OR (rhs)`.
    public static func || (lhs: RowPredicate, rhs: RowPredicate) -> RowPredicate {
        if lhs.isAll || rhs.isAll { return .all }
        return RowPredicate(sql: "((\(lhs.sql)) OR (\(rhs.sql)))", arguments: lhs.arguments + rhs.arguments)
    }

    /// The negation (SQL three-valued logic: `NOT` of a null comparison stays null, so matches nothing).
    ///
    /// ```swift
    /// let p = !RowPredicate.like("title", "Draft%")
    /// ```
    ///
    /// - Returns: `NOT (predicate)`.
    public static prefix func ! (predicate: RowPredicate) -> RowPredicate {
        RowPredicate(sql: "(NOT (\(predicate.sql)))", arguments: predicate.arguments)
    }
}
