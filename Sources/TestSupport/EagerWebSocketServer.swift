import DocumentModel
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A one-connection WebSocket server on loopback that answers the upgrade and sends its
/// first binary message in the same write as the `101` (so the client reads both at
/// once), then the later messages after a pause: what a peer that speaks first looks
/// like on the wire. Messages are sent unmasked, as a server's are.
public final class EagerWebSocketServer: @unchecked Sendable {
    public let port: Int
    private let listener: ThreadOwnedSocket

    /// Listens; the connection is served on a thread of its own: `first` goes with the
    /// `101` (with `subprotocol`), each of `later` after `pause`, then the socket stays
    /// open for `linger` seconds (long: a loaded full test run once kept the client from
    /// reading for 30 s, and the server's close then failed the test).
    public init(subprotocol: String, first: [UInt8], later: [[UInt8]], pause: TimeInterval = 0.3, linger: TimeInterval = 180) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let owned = ThreadOwnedSocket(listener)
        self.listener = owned
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 1) == 0 else {
            owned.close()
            throw HTTPTestClient.Failure(description: "cannot listen: \(errno)")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        // The thread blocked in accept closes the listener; deinit only wakes it.
        Thread {
            let connection = accept(listener, nil, nil)
            owned.close()
            guard connection >= 0 else { return }
            defer { close(connection) }
            var request: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
                let count = recv(connection, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                request += buffer[0..<count]
            }
            let key = String(decoding: request, as: UTF8.self).split(separator: "\r\n")
                .first { $0.lowercased().hasPrefix("sec-websocket-key:") }
                .map { $0.dropFirst("sec-websocket-key:".count).trimmingCharacters(in: .whitespaces) } ?? ""
            let accept = Data(SHA1.hash(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
            let head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(accept)\r\nSec-WebSocket-Protocol: \(subprotocol)\r\n\r\n"
            Self.send(connection, Array(head.utf8) + RawBLIP.binary(first))
            for message in later {
                Thread.sleep(forTimeInterval: pause)
                Self.send(connection, RawBLIP.binary(message))
            }
            Thread.sleep(forTimeInterval: linger)
        }.start()
    }

    deinit { listener.shutdown() }

    private static func send(_ connection: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            offset += sent
        }
    }
}
