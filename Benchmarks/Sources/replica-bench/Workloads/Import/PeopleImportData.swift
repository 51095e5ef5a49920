import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One generated person (`Schemas/people.json`'s `Person`), as every implementation should store it.
struct GeneratedPerson: Sendable {
    var id: Int64
    var name: String
    var numberOfKids: Int64
    var kilometersWalked: Double
    /// Raw bytes (base64 in JSON, a BLOB in SQLite), or `nil` (JSON `null`, SQL NULL).
    var avatar: [UInt8]?
}

/// Deterministic (seeded) people for the `import` workload's people shape: object `index` is
/// always the same. One in 16 has a small avatar (8 to 32 bytes); the others have `null`.
///
/// Revision 0 is the first file; revision 1 changes every person (`numberOfKids` + 1), so
/// importing it updates every row, as the 8-field shape's second file does.
///
/// ```swift
/// try PeopleImportData(count: 1_000_000, revision: 0).writeJSON(to: "/tmp/people.json")
/// // [{"id":1,"name":"Maria Smith","numberOfKids":0,"kilometersWalked":3302.0,"avatar":null}, ...]
/// ```
struct PeopleImportData: Sendable {
    let count: Int
    let revision: Int

    /// The 8-field shape's names.
    private static let firstNames = ImportData.firstNames
    private static let lastNames = ImportData.lastNames

    /// Person `index` (0-based; its id is `index + 1`).
    func person(at index: Int) -> GeneratedPerson {
        var random = SplitMix64(seed: 0x9E0_0000_0000 &+ UInt64(index))
        let a = random.next(), b = random.next()
        var avatar: [UInt8]?
        if (a >> 40) % 16 == 0 {
            let length = 8 + Int((a >> 44) % 25)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(length)
            var bits = b
            for position in 0..<length {
                if position % 8 == 0 && position > 0 { bits = random.next() }
                bytes.append(UInt8(truncatingIfNeeded: bits >> (UInt64(position % 8) * 8)))
            }
            avatar = bytes
        }
        return GeneratedPerson(
            id: Int64(index + 1),
            name: Self.firstNames[Int(a % UInt64(Self.firstNames.count))] + " "
                + Self.lastNames[Int((a >> 8) % UInt64(Self.lastNames.count))],
            numberOfKids: Int64((a >> 16) % 5) + Int64(revision),
            kilometersWalked: Double((a >> 24) % 100_000) / 8,
            avatar: avatar
        )
    }

    /// Writes the people as one JSON array, one object a line.
    ///
    /// - Returns: The file size in bytes.
    /// - Throws: ``BenchmarkError`` when the file cannot be written.
    @discardableResult
    func writeJSON(to path: String) throws -> Int {
        try JSONText.writeArray(to: path, count: count) { index, buffer in
            let person = person(at: index)
            buffer.append(contentsOf: "{\"id\":\(person.id),\"name\":".utf8)
            JSONText.appendString(person.name, to: &buffer)
            buffer.append(contentsOf: ",\"numberOfKids\":\(person.numberOfKids),\"kilometersWalked\":\(person.kilometersWalked),\"avatar\":".utf8)
            if let avatar = person.avatar {
                buffer.append(UInt8(ascii: "\""))
                buffer.append(contentsOf: Data(avatar).base64EncodedString().utf8)
                buffer.append(UInt8(ascii: "\""))
            } else {
                buffer.append(contentsOf: "null".utf8)
            }
            buffer.append(UInt8(ascii: "}"))
        }
    }
}

/// JSON text helpers shared by the generators.
enum JSONText {
    /// Writes `count` elements as one JSON array, one element a line, through a 1 MiB buffer;
    /// `element` appends element `index`'s JSON text.
    ///
    /// - Returns: The file size in bytes.
    /// - Throws: ``BenchmarkError`` when the file cannot be written.
    static func writeArray(to path: String, count: Int, element: (Int, inout [UInt8]) -> Void) throws -> Int {
        guard let file = fopen(path, "w") else {
            throw BenchmarkError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        var total = 0
        func flush() throws {
            let written = buffer.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            guard written == buffer.count else { throw BenchmarkError("cannot write \(path): short write") }
            total += written
            buffer.removeAll(keepingCapacity: true)
        }
        buffer.append(UInt8(ascii: "["))
        for index in 0..<count {
            buffer.append(contentsOf: index == 0 ? "\n".utf8 : ",\n".utf8)
            element(index, &buffer)
            if buffer.count >= 1 << 20 { try flush() }
        }
        buffer.append(contentsOf: "\n]\n".utf8)
        try flush()
        return total
    }

    /// Appends `string` as a JSON string (the generators' strings need only `"` and `\` escaped).
    static func appendString(_ string: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { buffer.append(UInt8(ascii: "\\")) }
            buffer.append(byte)
        }
        buffer.append(UInt8(ascii: "\""))
    }
}
