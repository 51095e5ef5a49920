#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One generated benchmark object, as every implementation should store it.
struct GeneratedItem: Sendable {
    var id: Int64
    var name: String
    var email: String
    var city: String
    var age: Int64
    var score: Double
    var active: Bool
    /// Unix seconds (whole), written to JSON as ISO 8601 `created_at`.
    var createdAt: Int64
}

/// Deterministic (seeded) benchmark data: object `index` is always the same.
///
/// Revision 0 is the first file; revision 1 changes every object (its `age` is
/// one more), so importing it updates every row.
///
/// ```swift
/// let data = ImportData(count: 100_000, revision: 0)
/// try data.writeJSON(to: "/tmp/items.json")   // [{"id":1,"name":"Zoë Silva",...}, ...]
/// ```
struct ImportData: Sendable {
    /// How many objects.
    let count: Int
    /// 0 for the first file, 1 for the file that changes every object.
    let revision: Int

    /// Shared with ``PeopleImportData``.
    static let firstNames = [
        "Ana", "João", "Maria", "Zoë", "Liam", "Olivia", "Noah", "Emma", "Mateo", "Sofía",
        "Lukas", "Chloé", "Hiroshi", "Aylin", "Søren", "Priya", "Kwame", "Elena", "Tomás", "Mei",
    ]
    /// Shared with ``PeopleImportData``.
    static let lastNames = [
        "Silva", "Smith", "Müller", "García", "Rossi", "Nowak", "Dubois", "Kowalski",
        "Jensen", "Ivanova", "Tanaka", "O'Brien", "Costa", "Schmidt", "Smith \"Jr\"", "Haddad",
    ]
    private static let cities = [
        "Lisbon", "Porto", "São Paulo", "Zürich", "Kraków", "Berlin", "Tokyo", "New York",
        "Reykjavík", "Nairobi", "Montréal", "Seoul", "Oslo", "Austin", "Mumbai", "Cape Town",
    ]
    private static let domains = ["example.com", "mail.example.org", "corp.example.net"]

    /// Object `index` (0-based; its id is `index + 1`).
    func item(at index: Int) -> GeneratedItem {
        var random = SplitMix64(seed: 0x5EED_0000_0000_0000 &+ UInt64(index))
        let a = random.next(), b = random.next()
        let id = Int64(index + 1)
        let first = Self.firstNames[Int(a % UInt64(Self.firstNames.count))]
        let last = Self.lastNames[Int((a >> 8) % UInt64(Self.lastNames.count))]
        let domain = Self.domains[Int((a >> 16) % UInt64(Self.domains.count))]
        return GeneratedItem(
            id: id,
            name: "\(first) \(last)",
            email: "user\(id)@\(domain)",
            city: Self.cities[Int((a >> 24) % UInt64(Self.cities.count))],
            age: 18 + Int64((a >> 32) % 72) + Int64(revision),
            score: Double((b >> 8) % 10_000) / 100,
            active: (b & 1) == 1,
            createdAt: 1_577_836_800 + Int64((b >> 24) % (5 * 365 * 86_400))   // 2020 to 2024
        )
    }

    /// Writes the objects as one JSON array, one object a line, to `path`.
    ///
    /// - Returns: The file size in bytes.
    /// - Throws: ``BenchmarkError`` when the file cannot be written.
    @discardableResult
    func writeJSON(to path: String) throws -> Int {
        try JSONText.writeArray(to: path, count: count) { index, buffer in appendJSON(of: item(at: index), to: &buffer) }
    }

    /// Appends `item` as one JSON object (no separator), as ``writeJSON(to:)`` writes it.
    func appendJSON(of item: GeneratedItem, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: "{\"id\":\(item.id),\"name\":".utf8)
        appendString(item.name, to: &buffer)
        buffer.append(contentsOf: ",\"email\":".utf8)
        appendString(item.email, to: &buffer)
        buffer.append(contentsOf: ",\"city\":".utf8)
        appendString(item.city, to: &buffer)
        buffer.append(contentsOf: ",\"age\":\(item.age),\"score\":\(item.score),\"active\":\(item.active),\"created_at\":\"".utf8)
        appendISO8601(item.createdAt, to: &buffer)
        buffer.append(contentsOf: "\"}".utf8)
    }

    private func appendString(_ string: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { buffer.append(UInt8(ascii: "\\")) }
            buffer.append(byte)
        }
        buffer.append(UInt8(ascii: "\""))
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` for Unix seconds (proleptic Gregorian, days-from-civil inverted).
    private func appendISO8601(_ seconds: Int64, to buffer: inout [UInt8]) {
        let days = seconds / 86_400, secondOfDay = seconds % 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func digits(_ value: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                buffer.append(UInt8(ascii: "0") + UInt8((value / divisor) % 10))
                divisor /= 10
            }
        }
        digits(year, 4); buffer.append(UInt8(ascii: "-"))
        digits(month, 2); buffer.append(UInt8(ascii: "-"))
        digits(day, 2); buffer.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3_600, 2); buffer.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2); buffer.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2); buffer.append(UInt8(ascii: "Z"))
    }
}

/// SplitMix64: a tiny, good-enough seeded generator.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
