import DocumentModel
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP response as a test sees it.
public struct HTTPResult: Sendable, CustomStringConvertible {
    public let status: Int
    /// Header names lowercased.
    public let headers: [String: String]
    public let body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public var text: String { String(decoding: body, as: UTF8.self) }
    /// The body parsed as JSON (`.null` when it is not JSON).
    public var json: JSON { (try? JSON.parse(body)) ?? .null }
    public var description: String { "\(status) \(text)" }
}

/// A deliberately small HTTP/1.1 client over a real TCP socket (one request per
/// connection, `Connection: close`), run on a GCD thread so it never blocks the
/// Swift concurrency pool that serves the node under test.
public enum HTTPTestClient {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static func send(
        port: Int, method: String, path: String, headers: [String: String] = [:], body: [UInt8]? = nil,
        timeout: TimeInterval = 30
    ) async throws -> HTTPResult {
        try await onOwnThread {
            try sendBlocking(port: port, method: method, path: path, headers: headers, body: body, timeout: timeout)
        }
    }

    /// Sends raw bytes and returns whatever the server answers before closing.
    public static func sendRaw(port: Int, bytes: [UInt8], timeout: TimeInterval = 10) async throws -> [UInt8] {
        try await onOwnThread {
            let fd = try connect(port: port, timeout: timeout)
            defer { close(fd) }
            try writeAll(fd, bytes)
            shutdown(fd, Int32(SHUT_WR))
            return try readAll(fd)
        }
    }

    /// Runs blocking socket work on a thread of its own: GCD's global queue runs only
    /// about one blocked item per core, which would serialize parallel tests.
    private static func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.start()
        }
    }

    static func sendBlocking(
        port: Int, method: String, path: String, headers: [String: String], body: [UInt8]?, timeout: TimeInterval
    ) throws -> HTTPResult {
        let fd = try connect(port: port, timeout: timeout)
        defer { close(fd) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try writeAll(fd, Array(head.utf8) + (body ?? []))
        return try parse(try readAll(fd))
    }

    static func connect(port: Int, timeout: TimeInterval) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw Failure(description: "connect to port \(port) failed: errno \(errno)")
        }
        return fd
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { throw Failure(description: "write failed: errno \(errno)") }
            offset += written
        }
    }

    private static func readAll(_ fd: Int32) throws -> [UInt8] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == ECONNRESET { break }
                throw Failure(description: "read failed or timed out: errno \(errno)")
            }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    /// Parses status line, headers and a body (Content-Length, chunked, or to EOF).
    static func parse(_ data: [UInt8]) throws -> HTTPResult {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headEnd = data.indices.first(where: { data[$0...].starts(with: separator) }) else {
            throw Failure(description: "no HTTP header in response: \(String(decoding: data, as: UTF8.self))")
        }
        let headText = String(decoding: data[..<headEnd], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(data[(headEnd + 4)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            body = try dechunk(body)
        } else if let length = headers["content-length"].flatMap(Int.init), body.count > length {
            body = Array(body.prefix(length))
        }
        return HTTPResult(status: status, headers: headers, body: body)
    }

    private static func dechunk(_ data: [UInt8]) throws -> [UInt8] {
        var output: [UInt8] = []
        var index = 0
        while index < data.count {
            guard let lineEnd = data[index...].indices.first(where: { data[$0] == 13 && $0 + 1 < data.count && data[$0 + 1] == 10 }) else { break }
            let sizeText = String(decoding: data[index..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw Failure(description: "bad chunk size")
            }
            if size == 0 { break }
            let start = lineEnd + 2
            guard start + size <= data.count else { output.append(contentsOf: data[start...]); break }
            output.append(contentsOf: data[start..<(start + size)])
            index = start + size + 2
        }
        return output
    }
}
