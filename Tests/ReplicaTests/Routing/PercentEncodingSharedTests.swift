import Testing
@testable import ReplicaCore

/// The one percent encoder and decoder, as the mock server uses it for paths, query strings and forms.
@Suite("Percent encoding shared with the mock server")
struct PercentEncodingSharedTests {
    @Test("encode keeps only unreserved bytes, upper-case hex, UTF-8")
    func encodeUnreserved() {
        #expect(PercentEncoding.encode("refs/heads/main", allowed: .unreserved) == "refs%2Fheads%2Fmain")
        #expect(PercentEncoding.encode("a b+c", allowed: .unreserved) == "a%20b%2Bc")
        #expect(PercentEncoding.encode("café~-._", allowed: .unreserved) == "caf%C3%A9~-._")
    }

    @Test("decoding reads + as a space only when asked; %2B stays a plus; bad escapes and bad UTF-8 are nil")
    func decodePlusIsSpace() {
        #expect(PercentEncoding.decodeString("red+car%2B1", plusIsSpace: true) == "red car+1")
        #expect(PercentEncoding.decodeString("red+car%2B1", plusIsSpace: false) == "red+car+1")
        #expect(PercentEncoding.decodeString("red+car%2B1") == "red+car+1")
        #expect(PercentEncoding.decodeString("%zz+", plusIsSpace: true) == nil)
        #expect(PercentEncoding.decodeString("a%2", plusIsSpace: true) == nil)
        #expect(PercentEncoding.decodeString("%FF", plusIsSpace: true) == nil)
        #expect(PercentEncoding.decodeString("caf%c3%a9", plusIsSpace: true) == "café")
    }
}
