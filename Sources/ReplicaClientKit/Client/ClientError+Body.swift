import Foundation
import ReplicaCore

/// The message and field errors of an error response's JSON body, read from the common shapes:
///
/// - GitHub and many others: `{"message": "Validation Failed", "errors": [{"resource": "Label",
///   "field": "color", "code": "invalid"}]}`; an entry may hold a `message` instead of a field.
/// - Rails and ApiModel: `{"errors": {"name": ["can't be blank"]}}`, also inside an entity's
///   namespace (`{"post": {"errors": {...}}}`); `{"errors": ["Name can't be blank"]}`.
/// - RFC 9457 problem details: `{"title": "Your request is not valid.", "detail": "…",
///   "errors": [{"detail": "must be a positive integer", "pointer": "#/age"}]}`; JSON:API's
///   `source.pointer` too.
/// - `{"error": {"message": "…"}}` (Google's, the mock server's; Stripe's, whose `param` names
///   the field) and OAuth's `{"error": "invalid_grant", "error_description": "…"}`.
/// - Jira: `{"errorMessages": ["…"], "errors": {"summary": "…"}}`; GitLab's validation errors
///   `{"message": {"name": ["can't be blank"]}}`; HAL's vnd.error, whose entries (in
///   `_embedded.errors`) name the field by a `path`; JSON:API's `source.pointer`s
///   (`/data/attributes/title` is `title`).
/// - Django REST framework: field → messages at the root (`{"email": ["Enter a valid email address."]}`).
struct ErrorBody: Sendable, Hashable {
    var message: String?
    var details: [ClientError.Detail]

    /// The body's message and entries; `nil` when it is not JSON or none of the shapes.
    init?(parsing body: [UInt8]) {
        guard let json = try? JSONValue(parsing: body), case .object(let root) = json else { return nil }
        message = Self.message(of: root)
        details = []
        // The first `errors` that holds entries: the root's, then an entity namespace's (or `error`'s).
        var candidates: [JSONValue] = []
        if let errors = root["errors"] { candidates.append(errors) }
        for (_, value) in root { if let errors = value["errors"] { candidates.append(errors) } }
        // GitLab's validation errors: field → messages as the message.
        if case .object? = root["message"] { candidates.append(root["message"] ?? .null) }
        for candidate in candidates {
            details = Self.details(of: candidate)
            if !details.isEmpty { break }
        }
        // Stripe: one error, its `param` the field.
        if details.isEmpty, case .object(let error)? = root["error"], let field = Self.text(error["param"]) {
            details = [ClientError.Detail(field: field, message: Self.text(error["message"]), code: Self.text(error["code"]))]
        }
        // Django REST framework: field → messages at the root, and nothing else.
        if message == nil && details.isEmpty && !root.isEmpty && root.allSatisfy({ member in
            guard case .array(let items) = member.value else { return false }
            return !items.isEmpty && items.allSatisfy { Self.text($0) != nil }
        }) {
            details = Self.details(of: .object(root)).map { detail in
                var detail = detail
                if detail.field == "non_field_errors" { detail.field = nil }
                return detail
            }
        }
        if message == nil && details.isEmpty { return nil }
    }

    /// Field → messages (or codes), for ``ClientError/fieldErrors``.
    var fieldErrors: [String: [String]] {
        var result: [String: [String]] = [:]
        for detail in details {
            guard let field = detail.field, let text = detail.message ?? detail.code else { continue }
            result[field, default: []].append(text)
        }
        return result
    }

    static func message(of root: JSONObject) -> String? {
        if let message = text(root["message"]) { return message }
        // RFC 9457: a title, and a detail about this occurrence.
        switch (text(root["title"]), text(root["detail"])) {
        case let (title?, detail?):
            if title == detail { return title }
            let ended = title.hasSuffix(".") || title.hasSuffix("!") || title.hasSuffix("?")
            return title + (ended ? " " : ": ") + detail
        case let (title?, nil): return title
        case let (nil, detail?): return detail
        case (nil, nil): break
        }
        // Jira: the messages that name no field.
        if case .array(let items)? = root["errorMessages"] {
            let messages = items.compactMap { text($0) }
            if !messages.isEmpty { return messages.joined(separator: "; ") }
        }
        switch root["error"] {
        case .object(let error)?:
            return text(error["message"])
        case .string(let error)?:
            guard let description = text(root["error_description"]) else { return error }
            return error + ": " + description
        default:
            return nil
        }
    }

    static func details(of errors: JSONValue) -> [ClientError.Detail] {
        switch errors {
        case .object(let fields):
            // Rails, ApiModel: field → messages (or one message).
            return fields.flatMap { member -> [ClientError.Detail] in
                let (field, messages) = member
                switch messages {
                case .array(let items): return items.compactMap { text($0) }.map { ClientError.Detail(field: field, message: $0) }
                case .string(let message): return [ClientError.Detail(field: field, message: message)]
                default: return []
                }
            }
        case .array(let items):
            return items.compactMap { item -> ClientError.Detail? in
                if let message = text(item) { return ClientError.Detail(message: message) }
                guard case .object(let entry) = item else { return nil }
                let source = entry["source"]?.objectValue
                // vnd.error's `path` is a pointer into the request body too.
                let pointer = text(entry["pointer"]) ?? text(source?["pointer"]) ?? text(entry["path"]).flatMap { $0.hasPrefix("/") ? $0 : nil }
                let field = text(entry["field"]) ?? text(entry["name"]) ?? pointer.map(Self.field(fromPointer:))
                    ?? text(entry["parameter"]) ?? text(source?["parameter"]) ?? text(entry["header"])
                let code = text(entry["code"]) ?? entry["code"]?.int64Value.map { String($0) }
                let detail = ClientError.Detail(field: field,
                                                message: text(entry["message"]) ?? text(entry["detail"]) ?? text(entry["title"]),
                                                code: code, resource: text(entry["resource"]))
                return detail.message == nil && detail.code == nil ? nil : detail
            }
        default:
            return []
        }
    }

    /// A JSON pointer as a field name: `#/profile/color` is `profile/color`; a JSON:API document's
    /// `/data/attributes/name` (or `/data/relationships/author`) is `name` (`author`).
    static func field(fromPointer pointer: String) -> String {
        var field = Substring(pointer)
        if field.hasPrefix("#") { field = field.dropFirst() }
        if field.hasPrefix("/") { field = field.dropFirst() }
        for prefix in ["data/attributes/", "data/relationships/"] where field.hasPrefix(prefix) && field.count > prefix.count {
            field = field.dropFirst(prefix.count)
        }
        return field.isEmpty ? pointer : String(field)
    }

    /// A non-empty string value, trimmed.
    static func text(_ value: JSONValue?) -> String? {
        guard case .string(let string)? = value else { return nil }
        let trimmed = string.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// The first `limit` bytes of a body as one line of text: cut on a UTF-8 character boundary,
    /// trimmed, control characters escaped, `…` when cut.
    ///
    /// ```swift
    /// ErrorBody.excerpt(Array("<html>\n<title>Oops</title>".utf8))   // "<html>\\n<title>Oops</title>"
    /// ```
    static func excerpt(_ body: [UInt8], limit: Int = 500) -> String {
        var bytes = body.prefix(limit)
        let cut = body.count > limit
        if cut, let lead = bytes.lastIndex(where: { $0 & 0xC0 != 0x80 }) {
            // A character whose bytes go past the limit is left out whole.
            let byte = bytes[lead]
            let length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            if lead + length > bytes.endIndex { bytes = bytes[..<lead] }
        }
        let text = printable(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        return cut ? text + "…" : text
    }

    /// `text` on one line: newlines, tabs and other control characters escaped.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if isControl(scalar) {
                    result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
