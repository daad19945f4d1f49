import Glibc
import Synchronization

/// A socket descriptor that a thread blocks on (`accept`, `recv`) while another may ask
/// it to stop. Stopping is `shutdown`, which wakes the blocked call; `close` happens
/// under the same lock and only once, so a late `shutdown` never reaches a descriptor
/// number the kernel has since given to another socket (a parallel test's connection,
/// whose reader would then see an empty answer). The rule for the test servers: the
/// thread that blocks on a descriptor closes it; everyone else shuts it down.
public final class ThreadOwnedSocket: Sendable {
    public let fd: Int32
    private let isOpen = Mutex(true)

    public init(_ fd: Int32) {
        self.fd = fd
    }

    /// Ends both directions (and wakes a blocked `accept` or `recv`) unless already closed.
    public func shutdown() {
        isOpen.withLock { open in
            if open { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Closes the descriptor once; later calls and `shutdown` do nothing.
    public func close() {
        isOpen.withLock { open in
            if open { _ = Glibc.close(fd) }
            open = false
        }
    }
}
