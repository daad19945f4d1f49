import Foundation

/// Writes log lines to a file descriptor (stderr) from a thread of its own, so that a
/// caller never waits for `write(2)`: a slow terminal, a full pipe or a busy journal
/// stalled whichever thread logged, a cooperative one included.
///
/// `LogWriter` owns a bounded queue of lines and the thread that drains it, joining what
/// is queued into one write. A line that finds the queue full (`capacity` bytes) is
/// dropped and counted; the next write says how many were. `flush` waits until what was
/// queued is written (it runs at exit, so the last lines are not lost).
final class LogWriter: @unchecked Sendable {
    /// Stderr's writer, started with the first line.
    static let standardError = LogWriter(descriptor: 2, capacity: 1 << 20)

    private let descriptor: Int32
    private let capacity: Int
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var queued: [UInt8] = []
    private var dropped = 0
    private var totalDropped = 0
    private var writing = false
    private var started = false

    init(descriptor: Int32, capacity: Int) {
        self.descriptor = descriptor
        self.capacity = capacity
    }

    /// Lines dropped so far because the queue was full.
    var droppedLines: Int {
        condition.lock()
        defer { condition.unlock() }
        return totalDropped
    }

    /// Queues one line; never blocks on the descriptor. False when it was dropped.
    @discardableResult
    func enqueue(_ line: [UInt8]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard queued.count + line.count <= capacity else {
            dropped += 1
            totalDropped += 1
            return false
        }
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "shoal-log"
            thread.start()
            atexit { LogWriter.standardError.flush(timeout: .seconds(2)) }
        }
        queued += line
        condition.broadcast()
        return true
    }

    /// Waits until every line queued before the call is written, or `timeout` passed.
    func flush(timeout: Duration) {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while (!queued.isEmpty || writing) && started {
            guard condition.wait(until: deadline) else { return }
        }
    }

    private func run() {
        while true {
            condition.lock()
            while queued.isEmpty && dropped == 0 {
                writing = false
                condition.broadcast()
                condition.wait()
            }
            var bytes = queued
            queued = []
            if dropped > 0 {
                bytes += Array("[log] \(dropped) lines dropped: the log's output could not keep up\n".utf8)
                dropped = 0
            }
            writing = true
            condition.unlock()
            Self.writeAll(bytes, to: descriptor)
        }
    }

    /// Writes all of `bytes` (one `write(2)` unless interrupted or partial); gives up on an error.
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
