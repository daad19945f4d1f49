import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking loopback TCP connection for tests that must control every byte on the
/// wire: an HTTP upgrade request written by hand, with or without WebSocket frames
/// in the same `write()`. Use it off the concurrency pool (`offThePool`).
public final class RawSocket: @unchecked Sendable {
    private let fd: Int32
    /// Bytes read but not yet consumed.
    private var pending: [UInt8] = []

    /// Connects to `127.0.0.1:port`; reads give up after `timeout`.
    public init(port: Int, timeout: TimeInterval = 10) throws {
        fd = try HTTPTestClient.connect(port: port, timeout: timeout)
    }

    deinit { Glibc.close(fd) }

    /// Writes all of `bytes` (one `send` call when the kernel takes them at once).
    public func write(_ bytes: [UInt8]) throws {
        try HTTPTestClient.writeAll(fd, bytes)
    }

    /// Reads an HTTP response head (status and lowercased headers); the bytes after it
    /// stay for `read(count:)` / `readToEnd()`.
    public func readHead() throws -> (status: Int, headers: [String: String]) {
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let end = pending.indices.first(where: { pending[$0...].starts(with: separator) }) {
                let text = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeFirst(end + 4)
                var lines = text.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
                    throw HTTPTestClient.Failure(description: "bad status line in \(text)")
                }
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                return (status, headers)
            }
            guard try fill() else { throw HTTPTestClient.Failure(description: "connection closed before an HTTP head") }
        }
    }

    /// Exactly `count` bytes.
    public func read(count: Int) throws -> [UInt8] {
        while pending.count < count {
            guard try fill() else { throw HTTPTestClient.Failure(description: "connection closed after \(pending.count) of \(count) bytes") }
        }
        defer { pending.removeFirst(count) }
        return Array(pending.prefix(count))
    }

    /// The next chunk of a `Transfer-Encoding: chunked` body (after `readHead()`); nil at
    /// the last (empty) chunk. For following a streamed answer piece by piece.
    public func readChunk() throws -> [UInt8]? {
        let crlf: [UInt8] = [13, 10]
        while pending.indices.first(where: { pending[$0...].starts(with: crlf) }) == nil {
            guard try fill() else { throw HTTPTestClient.Failure(description: "connection closed inside a chunk header") }
        }
        let end = pending.indices.first { pending[$0...].starts(with: crlf) }!
        let sizeText = String(decoding: pending[..<end], as: UTF8.self).split(separator: ";").first ?? ""
        guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
            throw HTTPTestClient.Failure(description: "bad chunk size \(sizeText)")
        }
        pending.removeFirst(end + 2)
        let data = try read(count: size + 2)
        return size == 0 ? nil : Array(data.prefix(size))
    }

    /// Everything until the peer closes.
    public func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { pending.removeAll() }
        return pending
    }

    /// Reads once more; false at the end of the stream.
    private func fill() throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                pending.append(contentsOf: buffer[0..<count])
                return true
            }
            if count == 0 { return false }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return false }
            throw HTTPTestClient.Failure(description: "read failed or timed out: errno \(errno)")
        }
    }
}
