#if canImport(Glibc)
import Glibc
#endif

/// How `replica watch` keeps its memory to what the current result costs, on glibc.
///
/// A million-row result is a snapshot of keys and sort values, rebuilt on every commit by another
/// process while the previous one is still shown: two large snapshots at once, then one again. By
/// default glibc gives threads arenas of their own (up to 8 per core) and serves allocations under
/// its *dynamic* mmap threshold (which rises to 32 MB once a large block is freed) from them, so
/// the next snapshot, built on another thread, would not reuse the memory the previous one freed
/// and the process would keep the high-water mark of several. The watch therefore caps the arenas,
/// maps every block of 1 MB or more on its own (returned to the system when freed), and trims the
/// heap after it lets go of a large snapshot.
///
/// ```swift
/// WatchMemory.configure()            // once, before the first snapshot
/// WatchMemory.trim()                 // after dropping a large snapshot
/// ```
enum WatchMemory {
    /// glibc's `M_ARENA_MAX`, `M_MMAP_THRESHOLD` (`<malloc.h>`, not imported into Swift).
    static let arenaMaxOption: Int32 = -8
    static let mmapThresholdOption: Int32 = -3
    /// The arenas the watch uses: the main thread's and one for the rest.
    static let arenas: Int32 = 2
    /// Blocks this large or larger are mapped on their own.
    static let mmapThreshold: Int32 = 1 << 20
    /// A snapshot at least this large is worth a trim once released.
    static let trimRows = 50_000

    private typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
    private typealias MallocTrim = @convention(c) (Int) -> Int32

    /// Applies the settings; `true` when the C library took both (glibc), `false` elsewhere.
    @discardableResult
    static func configure() -> Bool {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
        let mallopt = unsafeBitCast(symbol, to: MallOpt.self)
        return mallopt(arenaMaxOption, arenas) == 1 && mallopt(mmapThresholdOption, mmapThreshold) == 1
        #else
        return false
        #endif
    }

    /// Returns the free pages of every arena to the system (`malloc_trim(0)`).
    static func trim() {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }
}
