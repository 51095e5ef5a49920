import Foundation
import ReplicaCore

/// A file to upload: a name, a MIME type and its bytes or a file on disk (streamed, not loaded).
///
/// ```swift
/// let avatar = FileUpload(fileName: "me.png", mimeType: "image/png", path: "/tmp/me.png")
/// try await client.call("/people/1", method: .put, params: ["avatar": .file(avatar)])
/// ```
public struct FileUpload: Sendable, Hashable {
    public enum Source: Sendable, Hashable {
        case bytes([UInt8])
        case file(path: String)
    }

    public var fileName: String
    public var mimeType: String
    public var source: Source

    /// The MIME type of an upload that names none.
    public static let defaultMimeType = "application/octet-stream"

    /// Bytes in memory, uploaded as `fileName`.
    ///
    /// ```swift
    /// let note = FileUpload(fileName: "note.txt", mimeType: "text/plain", bytes: Array("hi".utf8))
    /// ```
    public init(fileName: String, mimeType: String = FileUpload.defaultMimeType, bytes: [UInt8]) {
        self.fileName = fileName
        self.mimeType = mimeType
        self.source = .bytes(bytes)
    }

    /// A file on disk, streamed as it is sent.
    ///
    /// ```swift
    /// let video = FileUpload(fileName: "clip.mp4", mimeType: "video/mp4", path: "/tmp/clip.mp4")
    /// ```
    public init(fileName: String, mimeType: String = FileUpload.defaultMimeType, path: String) {
        self.fileName = fileName
        self.mimeType = mimeType
        self.source = .file(path: path)
    }

    /// A file on disk, named after its last path component, `application/octet-stream` unless told.
    ///
    /// ```swift
    /// let backup = FileUpload(path: "/var/backups/db.tar")   // fileName "db.tar"
    /// ```
    public init(path: String, mimeType: String = FileUpload.defaultMimeType) {
        self.init(fileName: URL(fileURLWithPath: path).lastPathComponent, mimeType: mimeType, path: path)
    }
}

/// One request parameter: a JSON value, a file, or a nested array or object of parameters.
///
/// ```swift
/// let params: [String: Parameter] = ["title": "Hello", "draft": true, "tags": ["a", "b"]]
/// ```
public enum Parameter: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    case value(JSONValue)
    case file(FileUpload)
    case array([Parameter])
    case object([String: Parameter])

    public init(stringLiteral value: String) { self = .value(.string(value)) }
    public init(integerLiteral value: Int64) { self = .value(.int(value)) }
    public init(floatLiteral value: Double) { self = .value(.double(value)) }
    public init(booleanLiteral value: Bool) { self = .value(.bool(value)) }
    public init(nilLiteral: ()) { self = .value(.null) }
    public init(arrayLiteral elements: Parameter...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, Parameter)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }

    /// A parameter from a stored attribute value (dates in ISO 8601, data in base64).
    public init(_ value: AttributeValue) { self = .value(value.jsonValue) }

    /// Whether a file is anywhere inside.
    var containsFile: Bool {
        switch self {
        case .value: return false
        case .file: return true
        case .array(let items): return items.contains(where: \.containsFile)
        case .object(let members): return members.values.contains(where: \.containsFile)
        }
    }

    /// The text used in paths, query strings and form fields.
    var text: String? {
        guard case .value(let json) = self else { return nil }
        switch json {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .bigInteger(let literal): return literal
        case .bool(let b): return b ? "true" : "false"
        case .null: return ""
        case .array, .object: return json.serialized()
        }
    }

    /// The parameter as JSON (files become their file name).
    var json: JSONValue {
        switch self {
        case .value(let json): return json
        case .file(let file): return .string(file.fileName)
        case .array(let items): return .array(items.map(\.json))
        case .object(let members): return .object(JSONObject(members.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) }))
        }
    }

    /// Flattens nested parameters into form fields: `user[name]`, `tags[]`.
    static func flatten(_ parameters: [String: Parameter]) -> [(String, Parameter)] {
        var fields: [(String, Parameter)] = []
        func walk(_ name: String, _ parameter: Parameter) {
            switch parameter {
            case .value, .file: fields.append((name, parameter))
            case .array(let items): for item in items { walk(name + "[]", item) }
            case .object(let members): for (key, value) in members.sorted(by: { $0.key < $1.key }) { walk("\(name)[\(key)]", value) }
            }
        }
        for (name, value) in parameters.sorted(by: { $0.key < $1.key }) { walk(name, value) }
        return fields
    }
}

/// How a request's parameters become its body.
public enum BodyEncoding: String, Sendable, Hashable {
    /// `application/json` (the default for POST, PUT and PATCH).
    case json
    /// `application/x-www-form-urlencoded`.
    case form
    /// `multipart/form-data` (always used when a parameter holds a file).
    case multipart
}

enum FormEncoding {
    /// RFC 3986 unreserved characters stay; everything else is percent-encoded (space as %20).
    static func encode(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.append(Character(Unicode.Scalar(byte)))
            default:
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }

    /// `a=1&b=x%20y`, fields in order.
    static func query(_ fields: [(String, Parameter)]) -> String {
        fields.map { "\(encode($0.0))=\(encode($0.1.text ?? ""))" }.joined(separator: "&")
    }
}
