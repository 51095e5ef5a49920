/// Builds ``JSONValue`` trees from tokens with an explicit stack, so nesting
/// depth is bounded by ``JSONLimits/maxDepth`` and never by the call stack.
@usableFromInline
enum JSONValueBuilder {
    /// One open container.
    struct Frame {
        var isObject: Bool
        var array: [JSONValue] = []
        var object = JSONObject()
        var key = ""
    }

    /// Reads one value from `tokenizer` (skipping a leading key) and returns it.
    @usableFromInline
    static func build(_ tokenizer: inout JSONTokenizer) throws -> JSONValue {
        var stack: [Frame] = []
        while true {
            let value: JSONValue
            switch try tokenizer.next() {
            case .beginObject:
                stack.append(Frame(isObject: true))
                continue
            case .beginArray:
                stack.append(Frame(isObject: false))
                continue
            case .key(let key):
                if stack.isEmpty { continue }
                stack[stack.count - 1].key = key.decoded()
                continue
            case .string(let string): value = .string(string.decoded())
            case .number(.int(let int)): value = .int(int)
            case .number(.double(let double)): value = .double(double)
            case .number(.bigInteger(let literal)): value = .bigInteger(literal)
            case .bool(let bool): value = .bool(bool)
            case .null: value = .null
            case .endObject:
                guard let frame = stack.popLast() else { throw unbalanced(tokenizer) }
                value = .object(frame.object)
            case .endArray:
                guard let frame = stack.popLast() else { throw unbalanced(tokenizer) }
                value = .array(frame.array)
            case .end:
                throw tokenizer.unexpectedEnd()
            }
            if stack.isEmpty { return value }
            let top = stack.count - 1
            if stack[top].isObject {
                let key = stack[top].key
                if stack[top].object[key] != nil { stack[top].object.duplicateKeys.append(key) }
                stack[top].object[key] = value
            } else {
                stack[top].array.append(value)
            }
        }
    }

    static func unbalanced(_ tokenizer: JSONTokenizer) -> JSONParseError {
        tokenizer.region.error(.unexpectedCharacter, at: tokenizer.p - 1, "expected a value, found the end of its container")
    }

    /// Parses a whole document: one value, then only whitespace.
    static func parseDocument(_ bytes: UnsafeRawBufferPointer, limits: JSONLimits) throws -> JSONValue {
        var tokenizer = JSONTokenizer(bytes: bytes, limits: limits)
        if bytes.count > limits.maxDocumentSize {
            throw tokenizer.region.error(.documentTooLarge, at: tokenizer.p + limits.maxDocumentSize, "document longer than the limit of \(limits.maxDocumentSize) bytes")
        }
        let value = try build(&tokenizer)
        _ = try tokenizer.next()  // `.end`, or throws on trailing characters
        return value
    }
}
