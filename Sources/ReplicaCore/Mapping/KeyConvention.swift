/// How an API spells its JSON keys, relative to the attribute names of the schema.
///
/// Converting an attribute name to a JSON key is deterministic; going the
/// other way is a guess (`user_id` could be `userId` or `userID`), so to read
/// JSON build a ``Table`` from the attribute names and look keys up in it.
///
/// ```swift
/// KeyConvention.snakeCase.jsonKey(forAttribute: "htmlURL")       // "html_url"
/// KeyConvention.snakeCase.attributeName(forJSONKey: "html_url")  // "htmlUrl" (a guess)
/// let table = try KeyConvention.snakeCase.table(attributes: ["userID", "avatarSm"])
/// table.attribute(forJSONKey: "user_id")                         // "userID"
/// ```
///
/// Word rules, used by `.snakeCase` (attribute → JSON):
/// - a new word starts at an upper-case letter that follows a lower-case letter
///   or a digit (`numberOfKids` → `number_of_kids`, `address1Line` → `address1_line`);
/// - a run of capitals is one word (an acronym); when a lower-case letter
///   follows the run, the run's last capital starts the next word
///   (`URLString` → `url_string`, `htmlURL` → `html_url`, `userID` → `user_id`);
///   a single `s` ending the word after a run is a plural and stays with it
///   (`userIDs` → `user_ids`, `imageURLsCount` → `image_urls_count`);
/// - digits stick to the word before them (`line2` → `line2`,
///   `user2FA` → `user2_fa`, `utf8String` → `utf8_string`);
/// - existing underscores are kept and never doubled (`_id` → `_id`,
///   `user_ID` → `user_id`); every word is lower-cased.
public enum KeyConvention: String, Sendable, Hashable, CaseIterable {
    /// JSON keys are snake_case (`user_id`, `avatar_sm`, `html_url`).
    case snakeCase
    /// JSON keys are camelCase: the attribute name with its first word
    /// lower-cased (`UserID` → `userID`, `URLString` → `urlString`, `ID` → `id`).
    case camelCase
    /// JSON keys are the attribute names, unchanged.
    case asIs

    /// The JSON key for an attribute (deterministic).
    ///
    /// ```swift
    /// KeyConvention.snakeCase.jsonKey(forAttribute: "numberOfKids")   // "number_of_kids"
    /// KeyConvention.camelCase.jsonKey(forAttribute: "URLString")      // "urlString"
    /// ```
    ///
    /// - Parameters:
    ///   - attribute: The attribute name, as declared in the schema.
    /// - Returns: The JSON key under this convention.
    public func jsonKey(forAttribute attribute: String) -> String {
        switch self {
        case .snakeCase: Self.snakeCased(attribute)
        case .camelCase: Self.lowercasingFirstWord(attribute)
        case .asIs: attribute
        }
    }

    /// A plausible attribute name for a JSON key, for when no attribute exists
    /// yet (generating a schema from a sample response, say).
    ///
    /// ```swift
    /// KeyConvention.snakeCase.attributeName(forJSONKey: "user_id")      // "userId"
    /// KeyConvention.snakeCase.attributeName(forJSONKey: "avatar_sm")    // "avatarSm"
    /// KeyConvention.snakeCase.attributeName(forJSONKey: "2fa-enabled")  // "_2faEnabled"
    /// ```
    ///
    /// `.snakeCase` splits on `_` and on any other character that cannot be in
    /// an identifier (`-`, `.`, space…), lower-cases the first word's leading
    /// capitals and capitalises the first letter of the others; leading
    /// underscores are kept. `.camelCase` lower-cases the first word; `.asIs`
    /// returns the key unchanged. A result starting with a digit gets a `_` prefix
    /// (except with `.asIs`).
    ///
    /// - Parameters:
    ///   - key: The JSON key.
    /// - Returns: An attribute name. To match keys against existing attributes
    ///   use ``table(attributes:)`` instead, which knows `userID` from `userId`.
    public func attributeName(forJSONKey key: String) -> String {
        switch self {
        case .snakeCase: Self.camelCased(key)
        case .camelCase: Self.identifierSafe(Self.lowercasingFirstWord(key))
        case .asIs: key
        }
    }
}
