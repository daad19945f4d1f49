import Foundation
import Glibc
import Synchronization
import TestSupport

/// A datagram socket standing in for systemd's notification socket: binds a path (or
/// an abstract name), records every datagram with the time it arrived, on a thread of
/// its own. For the sd_notify tests.
final class NotifySocket: Sendable {
    struct Message: Sendable {
        let text: String
        let arrived: ContinuousClock.Instant
    }

    /// What the reading thread has received (shared with it; the socket's owner may go first).
    private final class Inbox: Sendable {
        let messages = Mutex<[Message]>([])
    }

    /// `NOTIFY_SOCKET`'s value for this socket.
    let address: String
    private let socket: ThreadOwnedSocket
    private let received = Inbox()
    private let path: String?

    init(abstract: Bool = false) throws {
        let name = "shoal-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        path = abstract ? nil : NSTemporaryDirectory() + name
        address = abstract ? "@" + name : path!
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var local = sockaddr_un()
        local.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(address.utf8)
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &local.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        let owned = ThreadOwnedSocket(fd)
        socket = owned
        let inbox = received
        // The reading thread closes the socket; deinit only wakes it.
        Thread {
            defer { owned.close() }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(owned.fd, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return }
                let message = Message(text: String(decoding: buffer[0..<count], as: UTF8.self), arrived: .now)
                inbox.messages.withLock { $0.append(message) }
            }
        }.start()
    }

    deinit {
        socket.shutdown()
        if let path { unlink(path) }
    }

    var messages: [Message] { received.messages.withLock { $0 } }

    /// The messages holding the line `line` (e.g. `READY=1`).
    func messages(with line: String) -> [Message] {
        messages.filter { $0.text.split(separator: "\n").contains { $0 == line } }
    }
}
