#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Facts about the terminal the tool writes to.
enum Terminal {
    /// The column count of the terminal on `descriptor`, or `nil` when it is not a terminal.
    static func width(of descriptor: Int32) -> Int? {
        guard isatty(descriptor) == 1 else { return nil }
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}

/// Writing to standard output and error.
enum Output {
    /// Writes `text` to `handle`; when the reader went away (`replica query ... | head`), the
    /// program ends quietly instead of crashing on the broken pipe.
    static func write(_ text: String, to handle: FileHandle) {
        do {
            try handle.write(contentsOf: Data(text.utf8))
        } catch {
            exit(0)
        }
    }
}
