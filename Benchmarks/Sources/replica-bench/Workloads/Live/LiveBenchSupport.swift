import Foundation

/// One chunk of bytes as an `AsyncSequence`, for `SQLiteReplica.importChunks` with a prebuilt body.
struct SingleChunk: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    typealias Failure = Never

    let bytes: [UInt8]

    func makeAsyncIterator() -> Iterator { Iterator(bytes: bytes) }

    struct Iterator: AsyncIteratorProtocol {
        var bytes: [UInt8]?

        mutating func next() async -> [UInt8]? {
            defer { bytes = nil }
            return bytes
        }
    }
}

/// The `fraction` percentile of `values` (nearest rank), or `nil` when empty.
///
/// ```swift
/// percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9)   // 9
/// ```
func percentile(_ values: [Double], _ fraction: Double) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let rank = Int((fraction * Double(sorted.count)).rounded(.up))
    return sorted[min(sorted.count, max(1, rank)) - 1]
}

/// The scratch JSON file of `count` generated objects (revision 0), written unless it is already
/// there: the `import` workload writes the same deterministic file at the same path earlier in a
/// run and then leaves the marker ``generatedItemsMarker(count:context:)``.
///
/// - Returns: The path and the file size in bytes.
/// - Throws: ``BenchmarkError`` when the file cannot be written.
func generatedItemsFile(count: Int, context: BenchmarkContext) throws -> (path: String, bytes: Int) {
    let path = (context.scratchDirectory as NSString).appendingPathComponent("items-0.json")
    if FileManager.default.fileExists(atPath: generatedItemsMarker(count: count, context: context)),
       let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue {
        return (path, size)
    }
    let bytes = try ImportData(count: count, revision: 0).writeJSON(to: path)
    markGeneratedItemsFile(count: count, context: context)
    return (path, bytes)
}

/// Leaves the marker saying that `items-0.json` in the scratch folder is complete with `count` objects.
func markGeneratedItemsFile(count: Int, context: BenchmarkContext) {
    _ = FileManager.default.createFile(atPath: generatedItemsMarker(count: count, context: context), contents: nil)
}

/// The empty file saying that `items-0.json` in the scratch folder holds `count` objects, complete.
func generatedItemsMarker(count: Int, context: BenchmarkContext) -> String {
    (context.scratchDirectory as NSString).appendingPathComponent(".items-0.json.\(count).complete")
}
