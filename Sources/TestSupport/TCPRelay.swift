import Foundation
import Glibc
import Synchronization

/// A TCP relay on a loopback port that forwards every connection to a target
/// port, and that can go silent: while silent it keeps the connections open but
/// delivers nothing in either direction (bytes are read and dropped), as a
/// network partition looks to both ends. Each connection is pumped by two
/// threads of its own (blocking sockets), so the relay never depends on the
/// event loops of the nodes it sits between.
public final class TCPRelay: Sendable {
    public let port: Int
    private let listener: Int32
    private let silent = Mutex(false)
    private let sockets = Mutex<Set<Int32>>([])
    private let closed = Mutex(false)

    /// Starts relaying 127.0.0.1:`port` → 127.0.0.1:`target`.
    public init(target: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HTTPTestClient.Failure(description: "socket() failed") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw HTTPTestClient.Failure(description: "cannot listen on a loopback port: errno \(errno)")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop(target: target) }
        thread.start()
    }

    /// While true, nothing is delivered (connections stay open).
    public var isSilent: Bool {
        get { silent.withLock { $0 } }
        set { silent.withLock { $0 = newValue } }
    }

    /// Stops listening and closes every relayed connection.
    public func close() {
        guard closed.withLock({ closed in defer { closed = true }; return !closed }) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        for fd in sockets.withLock({ $0 }) { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    deinit { close() }

    private func acceptLoop(target: Int) {
        while !closed.withLock({ $0 }) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            guard let server = try? HTTPTestClient.connect(port: target, timeout: 3600) else {
                Glibc.close(client)
                continue
            }
            sockets.withLock { $0.formUnion([client, server]) }
            for (from, to) in [(client, server), (server, client)] {
                Thread { [self] in pump(from: from, to: to) }.start()
            }
        }
    }

    private func pump(from: Int32, to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            if isSilent { continue }
            var offset = 0
            while offset < count {
                let written = buffer[offset..<count].withUnsafeBytes { send(to, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { break }
                offset += written
            }
        }
        // One side ended: end the other too.
        shutdown(to, Int32(SHUT_RDWR))
        shutdown(from, Int32(SHUT_RDWR))
        let bothDone = sockets.withLock { sockets -> Bool in
            sockets.remove(from)
            return !sockets.contains(to)
        }
        if bothDone {
            Glibc.close(from)
            Glibc.close(to)
        }
    }
}
