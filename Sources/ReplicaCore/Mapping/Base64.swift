import Foundation

/// Base64 for `data` attributes and the `base64` transform: decodes the standard (`+/`) and
/// URL-safe (`-_`) alphabets, with or without `=` padding, across line breaks; encodes
/// standard, padded, on one line.
///
/// Line breaks (`\n`, `\r\n`) are skipped wherever they are: APIs that send file contents
/// (GitHub's contents API, MIME) break base64 into lines of 60 or 76 characters. Anything else
/// outside the alphabets — a space, a tab, `*`, a non-ASCII character — is an error naming the
/// character and its position.
enum Base64 {
    /// Why a text is not base64: a readable reason naming the offending character and where it is.
    struct Failure: Error, Equatable {
        let reason: String
    }

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

    /// The bytes encoded by `text`, or `nil` when it is not base64 (see ``decoding(_:)`` for why).
    static func decode(_ text: String) -> [UInt8]? {
        try? decoding(text)
    }

    /// The bytes encoded by `text`.
    ///
    /// Line breaks are skipped. Padding is optional; when present (one or two `=`, only at the
    /// end) it must complete the last group of 4 characters (`"QQ=="`, `"QUI="`). Without
    /// padding, a last group of a single character is impossible and fails.
    ///
    /// ```swift
    /// try Base64.decoding("aGVs\nbG8=")   // "hello"
    /// try Base64.decoding("aGVs*bG8=")    // Failure: '*' at character 5 is not a base64 character
    /// ```
    ///
    /// - Throws: ``Failure`` naming the first offending character and its position (1-based,
    ///   in characters, with the line when the text has several).
    static func decoding(_ text: String) throws(Failure) -> [UInt8] {
        let input = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        var symbols = 0
        var padding = 0
        var firstPadding = 0
        for index in input.indices {
            let byte = input[index]
            let value = table[Int(byte)]
            if value == 0xFF {
                if byte == 0x0A || byte == 0x0D { continue }
                if byte == UInt8(ascii: "=") {
                    if padding == 0 { firstPadding = index }
                    padding += 1
                    continue
                }
                throw Failure(reason: "\(describe(input, at: index)) at \(position(input, index)) is not a base64 character")
            }
            if padding > 0 {
                throw Failure(reason: "'=' at \(position(input, firstPadding)) is padding before the end of the text")
            }
            symbols += 1
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        if padding > 2 {
            throw Failure(reason: "\(padding) '=' at the end, from \(position(input, firstPadding)): padding is one or two '='")
        }
        if symbols % 4 == 1 {
            throw Failure(reason: "the last group of 4 has a single character, which encodes no whole byte")
        }
        if padding > 0 && (symbols + padding) % 4 != 0 {
            let expected = (4 - symbols % 4) % 4
            throw Failure(reason: "\(padding) '=' at the end, from \(position(input, firstPadding)), where the last group of 4 "
                          + (expected == 0 ? "is already complete" : "needs \(expected)"))
        }
        return output
    }

    /// `character 5`, or `character 130 (line 3)` when the byte at `index` is past a line feed.
    private static func position(_ input: [UInt8], _ index: Int) -> String {
        var character = 1
        var line = 1
        for byte in input[..<index] {
            if byte & 0xC0 != 0x80 { character += 1 }
            if byte == 0x0A { line += 1 }
        }
        return "character \(character)" + (line > 1 ? " (line \(line))" : "")
    }

    /// `'*'`, `' ' (a space)`, or `U+00E9` for the character starting at `index`.
    private static func describe(_ input: [UInt8], at index: Int) -> String {
        let byte = input[index]
        if byte == 0x20 { return "' ' (a space)" }
        if byte > 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let scalar = String(decoding: input[index...].prefix(4), as: UTF8.self).unicodeScalars.first?.value ?? UInt32(byte)
        let hex = String(scalar, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// Standard base64 with padding.
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }
}
