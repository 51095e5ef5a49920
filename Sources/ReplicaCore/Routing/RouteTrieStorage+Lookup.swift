extension RouteTrieStorage {
    /// Matches `path` for one method (`method`) or for any (`nil`), and decodes
    /// the captured variables: the non-generic part of ``RouteTrie/match(method:path:)``.
    ///
    /// - Returns: The route's index and its parameters, or `nil`.
    @usableFromInline
    func lookup(_ path: String, method: HTTPMethod?) -> (route: Int, parameters: RouteParameters)? {
        withUTF8(of: path) { bytes in
            withCaptureBuffer { captures in
                let mask = method?.bit ?? 0xFF
                let terminal = Int(search(bytes, methods: mask, captures: captures))
                guard terminal >= 0 else { return nil }
                let route: Int
                if let method {
                    route = Int(terminalRoutes[terminal &* Self.methodCount &+ method.index])
                } else {
                    route = Int(terminalFirstRoute[terminal])
                }
                guard route >= 0, route < variableNames.count,
                      let parameters = parameters(variableNames[route], bytes, captures)
                else { return nil }
                return (route, parameters)
            }
        }
    }

    /// The methods that have a route matching `path`, in `HTTPMethod.allCases` order.
    func allowedMethods(_ path: String) -> [HTTPMethod] {
        HTTPMethod.allCases.filter { lookup(path, method: $0) != nil }
    }

    /// Calls `body` with the UTF-8 bytes of `path`, copying only strings
    /// that are not stored contiguously (bridged ones).
    @inline(__always)
    private func withUTF8<Result>(of path: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = path.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = path
        return copy.withUTF8(body)
    }

    /// Decodes the captured values, or returns `nil` when one has a malformed
    /// escape or does not decode to UTF-8.
    @inline(__always)
    private func parameters(
        _ names: [String],
        _ bytes: UnsafeBufferPointer<UInt8>,
        _ captures: UnsafeMutablePointer<Int>
    ) -> RouteParameters? {
        guard !names.isEmpty, let base = bytes.baseAddress else {
            return RouteParameters(names: [], values: [])
        }
        var values: [String] = []
        values.reserveCapacity(names.count)
        for index in 0..<names.count {
            let start = captures[2 &* index]
            let segment = UnsafeBufferPointer(start: base + start, count: captures[2 &* index &+ 1] &- start)
            guard let value = PercentEncoding.decodeString(segment) else { return nil }
            values.append(value)
        }
        return RouteParameters(names: names, values: values)
    }

    /// Calls `body` with room for every variable's start and end offsets: on
    /// the stack, in a fixed-size buffer, for patterns of up to 16 variables.
    @inline(__always)
    private func withCaptureBuffer<Result>(_ body: (UnsafeMutablePointer<Int>) -> Result) -> Result {
        if maxVariables <= 16 {
            return withUnsafeTemporaryAllocation(of: Int.self, capacity: 32) { buffer in
                body(buffer.baseAddress.unsafelyUnwrapped)
            }
        }
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 &* maxVariables) { buffer in
            body(buffer.baseAddress.unsafelyUnwrapped)
        }
    }
}
