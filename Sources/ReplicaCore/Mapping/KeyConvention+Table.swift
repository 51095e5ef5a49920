extension KeyConvention {
    /// The JSON keys of a fixed set of attributes, in both directions.
    ///
    /// Matching a JSON key against attribute names is done by computing each
    /// attribute's key, never by guessing capitalisation, so `user_id` finds
    /// `userID` when that is the attribute's name and `userId` when that is.
    ///
    /// ```swift
    /// let table = try KeyConvention.snakeCase.table(attributes: ["userID", "htmlUrl"])
    /// table.attribute(forJSONKey: "user_id")   // "userID"
    /// table.attribute(forJSONKey: "html_url")  // "htmlUrl"
    /// table.jsonKey(forAttribute: "userID")    // "user_id"
    /// ```
    public struct Table: Sendable, Hashable {
        /// The convention the keys follow.
        public let convention: KeyConvention
        /// The attributes, in the order given.
        public let attributes: [String]
        private let attributeByKey: [String: String]
        private let keyByAttribute: [String: String]
        private let attributeSet: Set<String>

        init(convention: KeyConvention, attributes: some Sequence<String>) throws(KeyConventionError) {
            var ordered: [String] = []
            var attributeByKey: [String: String] = [:]
            var keyByAttribute: [String: String] = [:]
            for attribute in attributes where keyByAttribute[attribute] == nil {
                let key = convention.jsonKey(forAttribute: attribute)
                if let other = attributeByKey[key] {
                    throw KeyConventionError(
                        code: .collidingKeys,
                        message: "attributes \"\(other)\" and \"\(attribute)\" both map to JSON key "
                            + "\"\(key)\" (\(convention.rawValue))",
                        attributes: [other, attribute],
                        jsonKey: key
                    )
                }
                ordered.append(attribute)
                attributeByKey[key] = attribute
                keyByAttribute[attribute] = key
            }
            self.convention = convention
            self.attributes = ordered
            self.attributeByKey = attributeByKey
            self.keyByAttribute = keyByAttribute
            self.attributeSet = Set(ordered)
        }

        /// The attribute a JSON key stands for.
        ///
        /// ```swift
        /// table.attribute(forJSONKey: "avatar_sm")   // "avatarSm"
        /// ```
        ///
        /// The key is first looked up among the attributes' computed keys;
        /// failing that, a key spelled exactly like an attribute name matches
        /// that attribute (`"avatarSm"` in a snake_case API).
        ///
        /// - Parameters:
        ///   - key: The JSON key.
        /// - Returns: The attribute name, or `nil` when no attribute has this key.
        public func attribute(forJSONKey key: String) -> String? {
            if let attribute = attributeByKey[key] { return attribute }
            return attributeSet.contains(key) ? key : nil
        }

        /// The JSON key of one of the table's attributes.
        ///
        /// ```swift
        /// table.jsonKey(forAttribute: "htmlURL")   // "html_url"
        /// ```
        ///
        /// - Parameters:
        ///   - attribute: The attribute name.
        /// - Returns: The key, or `nil` when the attribute is not in the table.
        public func jsonKey(forAttribute attribute: String) -> String? {
            keyByAttribute[attribute]
        }
    }

    /// Builds the two-way key table of a set of attributes.
    ///
    /// ```swift
    /// let table = try KeyConvention.snakeCase.table(attributes: ["userID", "name", "avatarSm"])
    /// ```
    ///
    /// - Parameters:
    ///   - attributes: The attribute names; repeated names are taken once.
    /// - Returns: The table.
    /// - Throws: `KeyConventionError` with code `.collidingKeys` when two
    ///   attributes have the same JSON key (`userID` and `userId` in snake_case),
    ///   naming both and the key.
    public func table(attributes: some Sequence<String>) throws(KeyConventionError) -> Table {
        try Table(convention: self, attributes: attributes)
    }
}
