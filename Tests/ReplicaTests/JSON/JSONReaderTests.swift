import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("JSONReader: validating pull tokens")
struct JSONReaderTests {
    @Test("reads every token kind")
    func tokens() throws {
        let text = #"{"id":7,"name":"Ann","esc":"a\nb","score":2.5,"ok":true,"none":null,"list":[1,-2]}"#
        var descriptions: [String] = []
        try Array(text.utf8).withUnsafeBytes { buffer in
            var reader = JSONReader(bytes: buffer)
            while true {
                let token = try reader.next()
                if token == .end { break }
                descriptions.append(token.description)
            }
        }
        #expect(descriptions == [
            "{", "key \"id\"", "number 7", "key \"name\"", "string \"Ann\"", "key \"esc\"", "string \"a\\nb\"",
            "key \"score\"", "number 2.5", "key \"ok\"", "true", "key \"none\"", "null", "key \"list\"", "[",
            "number 1", "number -2", "]", "}",
        ])
    }

    @Test("strings expose raw bytes, an escape flag and allocation-free comparison")
    func strings() throws {
        try Array(#"["plain","t\u00e9st","t\/x"]"#.utf8).withUnsafeBytes { buffer in
            var reader = JSONReader(bytes: buffer)
            #expect(try reader.next() == .beginArray)
            guard case .string(let plain) = try reader.next() else { Issue.record("no string"); return }
            #expect(!plain.hasEscapes)
            #expect(plain == "plain")
            #expect(!(plain == "plai"))
            #expect(Array(plain.rawBytes) == Array("plain".utf8))
            guard case .string(let escaped) = try reader.next() else { Issue.record("no string"); return }
            #expect(escaped.hasEscapes)
            #expect(escaped == "tést")
            #expect(escaped.decoded() == "tést")
            #expect(escaped.decodedUTF8() == Array("tést".utf8))
            guard case .string(let slash) = try reader.next() else { Issue.record("no string"); return }
            #expect(slash == "t/x")
            #expect(try reader.next() == .endArray)
            #expect(try reader.next() == .end)
        }
    }

    @Test("skipValue skips whole values and members, validating them")
    func skip() throws {
        try Array(#"{"a":[1,{"b":[2]}],"c":3,"d":{"e":4}}"#.utf8).withUnsafeBytes { buffer in
            var reader = JSONReader(bytes: buffer)
            #expect(try reader.next() == .beginObject)
            guard case .key(let a) = try reader.next() else { Issue.record("no key"); return }
            #expect(a == "a")
            try reader.skipValue()
            guard case .key(let c) = try reader.next() else { Issue.record("no key"); return }
            #expect(c == "c")
            #expect(try reader.next() == .number(.int(3)))
            try reader.skipValue()  // skips "d" and its value
            #expect(reader.depth == 1)
            #expect(try reader.next() == .endObject)
            #expect(try reader.next() == .end)
        }
        #expect(throws: JSONParseError.self) {
            try Array(#"[[1,2,]]"#.utf8).withUnsafeBytes { buffer in
                var reader = JSONReader(bytes: buffer)
                try reader.skipValue()
            }
        }
    }

    @Test("readValue reads a member value whole")
    func readValue() throws {
        try Array(#"{"tags":["a",{"b":null}],"n":1}"#.utf8).withUnsafeBytes { buffer in
            var reader = JSONReader(bytes: buffer)
            _ = try reader.next()
            _ = try reader.next()
            #expect(try reader.readValue() == ["a", ["b": nil]])
            _ = try reader.next()
            #expect(try reader.readValue() == 1)
            #expect(try reader.next() == .endObject)
        }
    }
}
