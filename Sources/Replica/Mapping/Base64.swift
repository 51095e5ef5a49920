import Foundation

/// Base64 for `data` attributes: decodes the standard (`+/`) and URL-safe (`-_`)
/// alphabets, with or without `=` padding; encodes standard, padded.
enum Base64 {
    /// The 6-bit value of each ASCII byte, or 0xFF for bytes outside both alphabets.
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()

    /// The bytes encoded by `text`, or `nil` when it is not base64.
    ///
    /// Padding, when present, must make the length a multiple of 4 (`"QQ=="`);
    /// without padding, a length of 4n+1 is impossible and fails. White space is not allowed.
    static func decode(_ text: String) -> [UInt8]? {
        var input = Array(text.utf8)
        var padding = 0
        while input.last == UInt8(ascii: "=") && padding < 2 {
            input.removeLast()
            padding += 1
        }
        if padding > 0 && (input.count + padding) % 4 != 0 { return nil }
        if input.count % 4 == 1 { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in input {
            let value = table[Int(byte)]
            guard value != 0xFF else { return nil }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return output
    }

    /// Standard base64 with padding.
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }
}
