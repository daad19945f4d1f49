import Foundation
import Testing
@testable import ShoalNode

/// `LogWriter`: lines reach the descriptor in order from the writer's thread; a caller
/// never waits for the descriptor, and lines that find the queue full are dropped,
/// counted and reported.
@Suite(.ownThread) struct LogWriterTests {
    @Test func linesArriveInOrder() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let writer = LogWriter(descriptor: fds[1], capacity: 1 << 16)
        for index in 0..<100 { writer.enqueue(Array("line \(index)\n".utf8)) }
        writer.flush(timeout: .seconds(60))
        close(fds[1])
        let text = String(decoding: FileHandle(fileDescriptor: fds[0]).readDataToEndOfFile(), as: UTF8.self)
        #expect(text == (0..<100).map { "line \($0)\n" }.joined())
    }

    @Test func aStuckOutputDropsLinesInsteadOfBlocking() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let writer = LogWriter(descriptor: fds[1], capacity: 4096)
        let line = Array((String(repeating: "x", count: 99) + "\n").utf8)
        // Nobody reads the pipe: its 64 KiB fill, the writer's write(2) blocks, the queue
        // fills; the caller goes on.
        var dropped = 0
        for _ in 0..<5000 where !writer.enqueue(line) { dropped += 1 }
        #expect(dropped > 0)
        #expect(writer.droppedLines == dropped)
        // Reading again lets everything out; the writer reports every dropped line.
        let reader = FileHandle(fileDescriptor: fds[0])
        var text = ""
        while Self.reportedDrops(text) < dropped {
            text += String(decoding: reader.availableData, as: UTF8.self)
        }
        #expect(Self.reportedDrops(text) == dropped)
        close(fds[1])
    }

    /// The sum of the `[log] N lines dropped` reports in `text`.
    static func reportedDrops(_ text: String) -> Int {
        text.matches(of: /\[log\] (\d+) lines dropped/).reduce(0) { $0 + Int($1.output.1)! }
    }
}
