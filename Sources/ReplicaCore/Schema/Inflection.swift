/// English word forms used to derive table names and collection namespaces (shared with the
/// OpenAPI import, which names entities and link tables as inference does).
package enum Inflection {
    private static let irregular: [String: String] = [
        "person": "people", "child": "children", "man": "men", "woman": "women",
        "mouse": "mice", "goose": "geese", "foot": "feet", "tooth": "teeth", "ox": "oxen",
    ]
    private static let uncountable: Set<String> = ["data", "info", "information", "news", "series", "species", "equipment", "metadata"]

    /// `User` → `users`, `Person` → `people`, `BlogPost` → `blog_posts`, `Category` → `categories`.
    package static func tableName(for entityName: String) -> String {
        plural(snakeCase(entityName))
    }

    /// The plural of the last word of a snake_case or camelCase name.
    package static func plural(_ word: String) -> String {
        guard !word.isEmpty else { return word }
        // Split off the last word so that `blog_person` → `blog_people`.
        var prefix = ""
        var last = word
        if let underscore = word.lastIndex(of: "_") {
            prefix = String(word[...underscore])
            last = String(word[word.index(after: underscore)...])
        }
        let lower = last.lowercased()
        if uncountable.contains(lower) { return word }
        if let plural = irregular[lower] {
            return prefix + (last.first?.isUppercase == true ? plural.prefix(1).uppercased() + plural.dropFirst() : plural)
        }
        let vowels: Set<Character> = ["a", "e", "i", "o", "u"]
        if lower.hasSuffix("y"), lower.count > 1, !vowels.contains(lower[lower.index(lower.endIndex, offsetBy: -2)]) {
            return prefix + last.dropLast() + "ies"
        }
        if ["s", "x", "z", "ch", "sh"].contains(where: { lower.hasSuffix($0) }) {
            return prefix + last + "es"
        }
        return prefix + last + "s"
    }

    /// The singular of an English plural: `people` → `person`, `categories` → `category`,
    /// `addresses` → `address`, `labels` → `label`; a word that is no plural stays.
    package static func singular(_ word: String) -> String {
        let lower = word.lowercased()
        if uncountable.contains(lower) { return word }
        if let (singular, _) = irregular.first(where: { $0.value == lower }) {
            return word.first?.isUppercase == true ? singular.prefix(1).uppercased() + singular.dropFirst() : singular
        }
        if lower.hasSuffix("ies"), lower.count > 3 { return String(word.dropLast(3)) + "y" }
        for suffix in ["sses", "shes", "ches", "xes", "zes", "uses"] where lower.hasSuffix(suffix) {
            return String(word.dropLast(2))
        }
        if lower.hasSuffix("s"), !lower.hasSuffix("ss"), !lower.hasSuffix("us"), !lower.hasSuffix("is"), lower.count > 1 {
            return String(word.dropLast())
        }
        return word
    }

    /// `BlogPost` → `blog_post`, `URLRequest` → `url_request`, `userID` → `user_id`.
    package static func snakeCase(_ name: String) -> String {
        let characters = Array(name)
        var result = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase {
                let previous = index > 0 ? characters[index - 1] : nil
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                let startsWord = previous.map { $0.isLowercase || $0.isNumber } ?? false
                let endsAcronym = (previous?.isUppercase ?? false) && (next?.isLowercase ?? false)
                if (startsWord || endsAcronym) && !result.isEmpty && !result.hasSuffix("_") { result += "_" }
                result += character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// The entity a path names: its last literal segment, singular, capitalized
    /// (`/repos/:owner/:repo/issues` → `Issue`).
    package static func entityName(forPath pattern: String) -> String {
        let literal = pattern.split(separator: "/").last { !$0.hasPrefix(":") && !$0.hasPrefix("{") }
        let word = literal.map { String($0).components(separatedBy: ".").first ?? String($0) } ?? "Item"
        return entityName(forKey: word)
    }

    /// `labels` → `Label`, `blog_posts` → `BlogPost`, `people` → `Person`.
    package static func entityName(forKey key: String) -> String {
        let words = key.split(whereSeparator: { $0 == "_" || $0 == "-" || $0 == " " }).map(String.init)
        guard let last = words.last else { return "Item" }
        let parts = words.dropLast() + [singular(last)]
        let name = parts.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        let safe = name.filter { $0.isLetter || $0.isNumber }
        return safe.isEmpty || safe.first?.isNumber == true ? "Item" + safe : safe
    }

    /// The join table of a `through` relationship, as inference names it: the entity and the
    /// relationship, snake_case (`Issue`, `labels` → `issue_labels`).
    package static func linkTable(entity: String, relationship: String) -> String {
        snakeCase(entity) + "_" + snakeCase(relationship)
    }

    /// The `throughKeys` of a `through` relationship from an entity to itself, which the join
    /// table's default columns cannot tell apart (`User`, `friends` → `userID`, `friendID`).
    package static func linkKeys(entity: String, relationship: String) -> [String] {
        [lowerFirst(entity) + "ID", lowerFirst(singular(relationship)) + "ID"]
    }

    /// `BlogPost` → `blogPost`.
    package static func lowerFirst(_ name: String) -> String { name.prefix(1).lowercased() + name.dropFirst() }
}
