import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// What a stream parser (or the reference model) produces for one input.
struct StreamOutcome: Equatable {
    var items: [JSONStreamParser.Item]
    var skeleton: JSONValue
    var matches: [JSONStreamMatch]
}

/// How a test consumer treats delivered elements.
enum ConsumerMode: CaseIterable {
    /// `element.value()`.
    case value
    /// Reads every token with a `JSONReader` and rebuilds the value.
    case reader
    /// Reads only the first token; the parser must validate the rest.
    case partial
}

/// Streams `bytes` cut at `cuts` (sorted offsets) and returns what was delivered or the error.
func streamOutcome(
    _ bytes: [UInt8], patterns: [JSONPathPattern] = [.root], limits: JSONLimits = .default, cuts: [Int], mode: ConsumerMode = .value
) -> Result<StreamOutcome, JSONParseError> {
    var parser = JSONStreamParser(patterns: patterns, limits: limits)
    var items: [JSONStreamParser.Item] = []
    let body: (borrowing JSONElement) throws -> Void = { element in
        let value: JSONValue
        switch mode {
        case .value:
            value = try element.value()
        case .reader:
            var reader = element.reader()
            value = try reader.readValue()
            #expect(try reader.next() == .end)
        case .partial:
            var reader = element.reader()
            _ = try reader.next()
            value = .null
        }
        items.append(JSONStreamParser.Item(pointer: element.pointer, byteOffset: element.byteOffset, patternIndex: element.patternIndex, value: value))
    }
    do {
        var start = 0
        for cut in cuts + [bytes.count] where cut >= start {
            try parser.feed(Array(bytes[start..<cut]), body)
            start = cut
        }
        let skeleton = try parser.finish(body)
        return .success(StreamOutcome(items: items, skeleton: skeleton, matches: parser.matches))
    } catch let error as JSONParseError {
        return .failure(error)
    } catch {
        return .failure(JSONParseError(code: .init(rawValue: "foreign \(error)"), byteOffset: -1, line: 0, column: 0, message: ""))
    }
}

/// The reference model of streaming, computed from a parsed value: outermost
/// matches win; a matched array's elements are items, any other matched value
/// is one item; the skeleton has `[]`/`{}` in their places.
func modelOutcome(_ value: JSONValue, patterns: [JSONPathPattern]) -> StreamOutcome {
    var items: [JSONStreamParser.Item] = []
    var matches: [JSONStreamMatch] = []
    func walk(_ value: JSONValue, _ path: [JSONPointer.Component]) -> JSONValue {
        let hit = patterns.indices.first { index in
            patterns[index].components.count == path.count
                && path.indices.allSatisfy { patterns[index].accepts(path[$0], at: $0) }
        }
        if let hit {
            let pointer = JSONPointer(components: path)
            if case .array(let elements) = value {
                for (i, element) in elements.enumerated() {
                    items.append(.init(pointer: pointer / i, byteOffset: 0, patternIndex: hit, value: element))
                }
                matches.append(JSONStreamMatch(pointer: pointer, patternIndex: hit, isStreamedArray: true, elementCount: elements.count))
                return []
            }
            items.append(.init(pointer: pointer, byteOffset: 0, patternIndex: hit, value: value))
            matches.append(JSONStreamMatch(pointer: pointer, patternIndex: hit, isStreamedArray: false, elementCount: 1))
            if case .object = value { return [:] }
            return value
        }
        switch value {
        case .array(let elements):
            return .array(elements.enumerated().map { walk($1, path + [.index($0)]) })
        case .object(let object):
            return .object(JSONObject(object.members.map { ($0.key, walk($0.value, path + [.key($0.key)])) }))
        default:
            return value
        }
    }
    let skeleton = walk(value, [])
    return StreamOutcome(items: items, skeleton: skeleton, matches: matches)
}

/// The outcome with byte offsets erased (the model does not know them).
func withoutOffsets(_ outcome: StreamOutcome) -> StreamOutcome {
    var copy = outcome
    copy.items = copy.items.map { var item = $0; item.byteOffset = 0; return item }
    return copy
}
