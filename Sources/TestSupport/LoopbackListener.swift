import Foundation
import Glibc

/// A listening TCP socket on `127.0.0.1` and an ephemeral port, for the small blocking
/// servers of the tests (`TCPRelay`, `StaticHTTPServer`, a server that never answers).
public enum LoopbackListener {
    /// Binds and listens; returns the socket and the port the kernel chose.
    public static func open(backlog: Int32 = 16) throws -> (fd: Int32, port: Int) {
        try bind(listening: backlog, reuseAddress: true)
    }

    /// A socket bound to a loopback port without listening: connecting to the port is
    /// refused, and no parallel test can take the port while the socket stays open
    /// (a port freed by closing a listener can be given to the next `bind` at once).
    public static func boundButNotListening() throws -> (fd: Int32, port: Int) {
        try bind(listening: nil, reuseAddress: false)
    }

    /// A TCP socket on `127.0.0.1` and a port the kernel chooses, listening when
    /// `backlog` is given.
    private static func bind(listening backlog: Int32?, reuseAddress: Bool) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HTTPTestClient.Failure(description: "socket() failed") }
        if reuseAddress {
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                Glibc.bind(fd, pointer, length) == 0 && (backlog.map { listen(fd, $0) == 0 } ?? true)
                    && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw HTTPTestClient.Failure(description: "cannot bind a loopback port: errno \(errno)")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
