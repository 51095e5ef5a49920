import Foundation
import ReplicaCore

/// Request bodies that are not JSON: `application/x-www-form-urlencoded` and `multipart/form-data`.
///
/// Their fields arrive as text (file parts as base64, fitting `blob` properties); once the route
/// says which resource they are for, ``typed(_:for:)`` reads each as its property's type, as
/// query-string values are read. Nested names (`user[name]`, `tags[]`) are kept as they are.
enum MockFormBody {
    /// The fields of a form or multipart body, or `nil` when `contentType` is neither.
    ///
    /// - Throws: ``MockHTTPError`` 400 for a multipart body without a boundary or with a broken part.
    static func parse(_ bytes: [UInt8], contentType: String?) throws -> JSONObject? {
        guard let contentType else { return nil }
        let mediaType = contentType.lowercased()
        if mediaType.hasPrefix("application/x-www-form-urlencoded") {
            return urlEncoded(bytes)
        }
        if mediaType.hasPrefix("multipart/form-data") {
            guard let boundary = parameter("boundary", in: contentType) else {
                throw MockHTTPError.badRequest("multipart body without a boundary", code: "invalidBody")
            }
            return try multipart(bytes, boundary: boundary)
        }
        return nil
    }

    /// JSON sent with a form content type, as `curl -d '{"name":"john"}'` does, or with none: the body
    /// read as JSON when its first non-blank byte is `{` or `[` and it parses as a JSON object or array;
    /// `nil` for any other body or content type (a real form body such as `name=john` stays a form).
    static func mislabelledJSON(_ bytes: [UInt8], contentType: String?) -> JSONValue? {
        if let contentType, !contentType.lowercased().hasPrefix("application/x-www-form-urlencoded") { return nil }
        guard let first = bytes.first(where: { ![32, 9, 10, 13].contains($0) }), first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        else { return nil }
        guard let value = try? JSONValue(parsing: bytes) else { return nil }
        switch value {
        case .object, .array: return value
        default: return nil
        }
    }

    static func parameter(_ name: String, in header: String) -> String? {
        for part in header.split(separator: ";").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0] == name { return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        }
        return nil
    }

    static func urlEncoded(_ bytes: [UInt8]) -> JSONObject {
        var object = JSONObject()
        let text = String(decoding: bytes, as: UTF8.self)
        for pair in text.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                PercentEncoding.decodeString($0, plusIsSpace: true) ?? String($0)
            }
            object[parts[0]] = .string(parts.count > 1 ? parts[1] : "")
        }
        return object
    }

    static func multipart(_ bytes: [UInt8], boundary: String) throws -> JSONObject {
        let delimiter = Array("--\(boundary)".utf8)
        var object = JSONObject()
        var positions: [Int] = []
        var index = 0
        while index + delimiter.count <= bytes.count {
            if bytes[index] == delimiter[0], Array(bytes[index..<(index + delimiter.count)]) == delimiter {
                positions.append(index)
                index += delimiter.count
            } else {
                index += 1
            }
        }
        guard positions.count >= 2 else { throw MockHTTPError.badRequest("multipart body without parts", code: "invalidBody") }
        for (start, end) in zip(positions, positions.dropFirst()) {
            var part = Array(bytes[(start + delimiter.count)..<end])
            if part.starts(with: Array("\r\n".utf8)) { part.removeFirst(2) }
            if part.count >= 2, part.suffix(2) == [13, 10] { part.removeLast(2) }
            guard let split = find([13, 10, 13, 10], in: part) else {
                throw MockHTTPError.badRequest("multipart part without headers", code: "invalidBody")
            }
            let head = String(decoding: part[..<split], as: UTF8.self)
            let content = Array(part[(split + 4)...])
            var name: String?
            var fileName: String?
            for line in head.components(separatedBy: "\r\n") where line.lowercased().hasPrefix("content-disposition:") {
                name = parameter("name", in: line)
                fileName = parameter("filename", in: line)
            }
            guard let name else { throw MockHTTPError.badRequest("multipart part without a name", code: "invalidBody") }
            object[name] = fileName != nil ? .string(Data(content).base64EncodedString()) : .string(String(decoding: content, as: UTF8.self))
        }
        return object
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where Array(haystack[index..<(index + needle.count)]) == needle {
            return index
        }
        return nil
    }

    /// Reads text fields as the resource's property types (unknown names stay text and are dropped by
    /// harvesting); a field named by a dotted property (`address.city=Paris`) goes to its key path, as
    /// JSON would nest it, since a form cannot.
    static func typed(_ fields: JSONObject, for resource: MockResource) -> JSONValue {
        var object = JSONObject()
        for (name, value) in fields {
            if let property = resource.property(named: name), let text = value.stringValue,
               let typed = property.type.parseQueryValue(text) {
                object[name] = typed
            } else {
                object[name] = value
            }
        }
        return .object(resource.placing(object))
    }
}
