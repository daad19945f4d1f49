import Foundation
import Glibc
import Synchronization

/// A TCP relay on a loopback port that forwards every connection to a target
/// port, and that can go silent: while silent it keeps the connections open but
/// delivers nothing in either direction (bytes are read and dropped), as a
/// network partition looks to both ends. Each connection is pumped by two
/// threads of its own (blocking sockets), so the relay never depends on the
/// event loops of the nodes it sits between.
///
/// It can also cut one direction alone: on the connections `muteClient` names, once
/// the target has sent that many bytes, the client's bytes stop reaching the target
/// while the target's still reach the client, as when a loaded client stops
/// answering and the target times it out (and closes, cleanly, in its own time).
public final class TCPRelay: Sendable {
    public let port: Int
    private let listener: ThreadOwnedSocket
    private let silent = Mutex(false)
    /// Relayed sockets whose pumps have not both ended.
    private let sockets = Mutex<[ThreadOwnedSocket]>([])
    private let closed = Mutex(false)
    private let muteClient: @Sendable (Int) -> Int?
    private let accepted = Mutex(0)

    /// Starts relaying 127.0.0.1:`port` → 127.0.0.1:`target`. `muteClient` maps the
    /// number of a connection (from 1) to the bytes the target sends on it before the
    /// client's bytes stop reaching the target (nil: never).
    public init(target: Int, muteClient: @escaping @Sendable (Int) -> Int? = { _ in nil }) throws {
        self.muteClient = muteClient
        let (fd, port) = try LoopbackListener.open()
        (listener, self.port) = (ThreadOwnedSocket(fd), port)
        let thread = Thread { [self] in acceptLoop(target: target) }
        thread.start()
    }

    /// Connections accepted so far.
    public var connectionCount: Int { accepted.withLock { $0 } }

    /// While true, nothing is delivered (connections stay open).
    public var isSilent: Bool {
        get { silent.withLock { $0 } }
        set { silent.withLock { $0 = newValue } }
    }

    /// Stops listening and ends every relayed connection (the threads blocked on the
    /// sockets close them).
    public func close() {
        guard closed.withLock({ closed in defer { closed = true }; return !closed }) else { return }
        listener.shutdown()
        for socket in sockets.withLock({ $0 }) { socket.shutdown() }
    }

    deinit { close() }

    private func acceptLoop(target: Int) {
        defer { listener.close() }
        while !closed.withLock({ $0 }) {
            let incoming = accept(listener.fd, nil, nil)
            guard incoming >= 0 else { return }
            guard let connected = try? HTTPTestClient.connect(port: target, timeout: 3600) else {
                Glibc.close(incoming)
                continue
            }
            let (client, server) = (ThreadOwnedSocket(incoming), ThreadOwnedSocket(connected))
            sockets.withLock { $0 += [client, server] }
            // Closed meanwhile: close() did not see these two.
            if closed.withLock({ $0 }) { client.shutdown() }
            let number = accepted.withLock { count in
                count += 1
                return count
            }
            // Bytes the target may still send before the client is muted (nil: never).
            let budget = Mutex(muteClient(number))
            Thread { [self] in
                pump(from: client, to: server) { _ in budget.withLock { $0 } == 0 }
            }.start()
            Thread { [self] in
                pump(from: server, to: client) { count in
                    budget.withLock { left in
                        if let remaining = left { left = max(0, remaining - count) }
                    }
                    return false
                }
            }.start()
        }
    }

    /// Forwards `from` → `to`; `drop(count)` (called with each chunk read) says
    /// whether to drop that chunk.
    private func pump(from: ThreadOwnedSocket, to: ThreadOwnedSocket, drop: (Int) -> Bool) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(from.fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            if isSilent || drop(count) { continue }
            var offset = 0
            while offset < count {
                let written = buffer[offset..<count].withUnsafeBytes { send(to.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { break }
                offset += written
            }
        }
        // One side ended: end the other too; the pump that ends last closes both.
        to.shutdown()
        from.shutdown()
        let bothDone = sockets.withLock { sockets -> Bool in
            sockets.removeAll { $0 === from }
            return !sockets.contains { $0 === to }
        }
        if bothDone {
            from.close()
            to.close()
        }
    }
}
