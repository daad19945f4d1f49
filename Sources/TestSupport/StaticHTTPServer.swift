import Foundation
import Glibc
import Synchronization

/// A tiny HTTP/1.1 server of fixed files on a loopback port: the origin a browser test
/// loads its page from (a different origin than the node under test). One thread
/// accepts; each request is answered on a thread of its own and the connection closed.
public final class StaticHTTPServer: Sendable {
    /// One file: its media type and bytes.
    public struct File: Sendable {
        public var contentType: String
        public var bytes: [UInt8]

        public init(contentType: String, text: String) {
            self.contentType = contentType
            bytes = Array(text.utf8)
        }
    }

    public let port: Int
    private let listener: ThreadOwnedSocket
    private let files: [String: File]
    private let closed = Mutex(false)

    /// Serves `files` by path (`"/index.html"`); any other path is a 404.
    public init(files: [String: File]) throws {
        self.files = files
        let (fd, port) = try LoopbackListener.open()
        (listener, self.port) = (ThreadOwnedSocket(fd), port)
        Thread { [self] in acceptLoop() }.start()
    }

    /// `http://127.0.0.1:<port>`: the origin of the pages served.
    public var origin: String { "http://127.0.0.1:\(port)" }

    /// Stops listening (the accepting thread closes the socket).
    public func close() {
        guard closed.withLock({ closed in defer { closed = true }; return !closed }) else { return }
        listener.shutdown()
    }

    deinit { close() }

    private func acceptLoop() {
        defer { listener.close() }
        while !closed.withLock({ $0 }) {
            let client = accept(listener.fd, nil, nil)
            guard client >= 0 else { return }
            Thread { [self] in answer(client) }.start()
        }
    }

    private func answer(_ fd: Int32) {
        defer { Glibc.close(fd) }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.containsHeadEnd {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            request += buffer[..<count]
        }
        let line = String(decoding: request.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
        let path = line.count >= 2 ? String(line[1].split(separator: "?", maxSplits: 1).first ?? "") : ""
        let file = files[path]
        let body = file?.bytes ?? Array("not found".utf8)
        let head = "HTTP/1.1 \(file == nil ? "404 Not Found" : "200 OK")\r\n"
            + "Content-Type: \(file?.contentType ?? "text/plain")\r\nContent-Length: \(body.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
        try? HTTPTestClient.writeAll(fd, Array(head.utf8) + body)
    }
}

extension [UInt8] {
    /// Whether the bytes hold the blank line that ends an HTTP head.
    fileprivate var containsHeadEnd: Bool {
        count >= 4 && indices.dropLast(3).contains { self[$0] == 13 && self[$0 + 1] == 10 && self[$0 + 2] == 13 && self[$0 + 3] == 10 }
    }
}
