#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import Replica

/// The terminal in full-screen mode: raw input, alternate screen, hidden cursor. Restores the
/// terminal as it was on ``restore()``, which runs once whatever ends the program.
///
/// `@unchecked Sendable`: its signal sources (`any DispatchSourceSignal`, not Sendable) are only kept alive, under `state`'s lock.
final class TerminalSession: @unchecked Sendable {
    /// The terminal settings before full-screen mode.
    private let original: termios
    /// Whether the terminal was restored, and the signal sources kept alive.
    private let state = Locked((restored: false, signalSources: [any DispatchSourceSignal]()))

    /// Enters full-screen mode on standard input and output.
    init() {
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        self.original = original
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
            state.withLock { $0.signalSources.append(source) }
        }
    }

    /// Leaves full-screen mode and restores the terminal settings; safe to call twice.
    func restore() {
        state.withLock { state in
            guard !state.restored else { return }
            state.restored = true
            emit("\u{1B}[?25h\u{1B}[?1049l")
            var original = self.original
            tcsetattr(STDIN_FILENO, TCSANOW, &original)
        }
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

    /// A key the watch view acts on.
    enum Key: Sendable, Equatable {
        case up, down, pageUp, pageDown, home, end, quit
    }

    /// Reads keys on a background thread and calls `onKey` for each one the view knows: arrows
    /// (and `k`/`j`), PgUp/PgDn (and space/`b`), Home/End (and `g`/`G`), and `q`, `Q`, Ctrl-C or
    /// the end of input, which quit (the last call).
    func readKeys(onKey: @escaping @Sendable (Key) -> Void) {
        let thread = Thread {
            var reader = KeyReader()
            while let key = reader.next() {
                onKey(key)
                if key == .quit { return }
            }
            onKey(.quit)
        }
        thread.name = "replica.keys"
        thread.start()
    }

    /// Calls `handler` on the main queue each time the terminal is resized (SIGWINCH).
    func onResize(_ handler: @escaping @Sendable () -> Void) {
        signal(SIGWINCH, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .main)
        source.setEventHandler(handler: handler)
        source.resume()
        state.withLock { $0.signalSources.append(source) }
    }
}

/// Turns the bytes of standard input into keys, escape sequences included (`ESC [ A`, `ESC [ 5 ~`,
/// `ESC O H`, …, as xterm, tmux and the Linux console send them).
struct KeyReader {
    private var pending: [UInt8] = []

    private mutating func byte() -> UInt8? {
        if !pending.isEmpty { return pending.removeFirst() }
        var byte: UInt8 = 0
        return read(STDIN_FILENO, &byte, 1) == 1 ? byte : nil
    }

    /// The next key the view knows, or `nil` at the end of input.
    mutating func next() -> TerminalSession.Key? {
        while let byte = byte() {
            switch byte {
            case UInt8(ascii: "q"), UInt8(ascii: "Q"), 3: return .quit
            case UInt8(ascii: "k"): return .up
            case UInt8(ascii: "j"): return .down
            case UInt8(ascii: " "): return .pageDown
            case UInt8(ascii: "b"): return .pageUp
            case UInt8(ascii: "g"): return .home
            case UInt8(ascii: "G"): return .end
            case 27:
                if let key = escapeSequence() { return key }
            default:
                continue
            }
        }
        return nil
    }

    /// The key of the sequence after an ESC, `nil` for one the view does not use.
    private mutating func escapeSequence() -> TerminalSession.Key? {
        guard let introducer = byte() else { return nil }
        guard introducer == UInt8(ascii: "[") || introducer == UInt8(ascii: "O") else {
            pending.insert(introducer, at: 0)
            return nil
        }
        var parameter = 0
        while let byte = byte() {
            switch byte {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"):
                parameter = parameter * 10 + Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: ";"):
                parameter = 0
            case UInt8(ascii: "A"): return .up
            case UInt8(ascii: "B"): return .down
            case UInt8(ascii: "H"): return .home
            case UInt8(ascii: "F"): return .end
            case UInt8(ascii: "~"):
                switch parameter {
                case 1, 7: return .home
                case 4, 8: return .end
                case 5: return .pageUp
                case 6: return .pageDown
                default: return nil
                }
            default:
                return nil
            }
        }
        return nil
    }
}
