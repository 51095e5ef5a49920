#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation

/// The terminal in full-screen mode: raw input, alternate screen, hidden cursor. Restores the
/// terminal as it was on ``restore()``, which runs once whatever ends the program.
///
/// `@unchecked Sendable`: `original` is written once in `init`; `restored` is guarded by `lock`.
final class TerminalSession: @unchecked Sendable {
    private var original = termios()
    private let lock = NSLock()
    private var restored = false
    private var signalSources: [any DispatchSourceSignal] = []

    /// Enters full-screen mode on standard input and output.
    init() {
        tcgetattr(STDIN_FILENO, &original)
        var raw = original
        cfmakeraw(&raw)
        raw.c_oflag |= tcflag_t(OPOST)  // keep "\n" → "\r\n" on output
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        emit("\u{1B}[?1049h\u{1B}[?25l")
        for signalNumber in [SIGTERM, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
            source.setEventHandler { [weak self] in
                self?.restore()
                exit(128 + signalNumber)
            }
            source.resume()
            signalSources.append(source)
        }
    }

    /// Leaves full-screen mode and restores the terminal settings; safe to call twice.
    func restore() {
        lock.lock()
        defer { lock.unlock() }
        guard !restored else { return }
        restored = true
        emit("\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(STDIN_FILENO, TCSANOW, &original)
    }

    /// Draws a whole screen.
    func draw(_ screen: String) {
        emit("\u{1B}[H" + screen + "\u{1B}[J")
    }

    /// The terminal's size, or 80×24 when unknown.
    var size: (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    private func emit(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(STDOUT_FILENO, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }

    /// Waits on a background thread for `q`, `Q` or Ctrl-C on standard input, then calls `onQuit`.
    func readKeys(onQuit: @escaping @Sendable () -> Void) {
        let thread = Thread {
            var byte: UInt8 = 0
            while read(STDIN_FILENO, &byte, 1) == 1 {
                if byte == UInt8(ascii: "q") || byte == UInt8(ascii: "Q") || byte == 3 { break }
            }
            onQuit()
        }
        thread.name = "replica.keys"
        thread.start()
    }
}
