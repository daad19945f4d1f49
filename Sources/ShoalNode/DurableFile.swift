import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Replaces a small file of the data directory whole and durably (the node ID, the
/// replications created through the admin API, the node's TLS pair): the bytes go to
/// `<path>.tmp` with their permissions, are flushed to disk, renamed over `path`, and
/// the directory is flushed, so a crash leaves the old file or the new one, never a
/// torn or empty one. Foundation's `.atomic` write does neither flush, and on Linux it
/// leaves an empty `TemporaryDirectory.*` in the temporary directory per write.
enum DurableFile {
    /// A write that failed: which file, which step, and the system's reason
    /// (`No space left on device` on a full disk).
    struct Failure: Error, CustomStringConvertible {
        let path: String
        let step: String
        let code: Int32

        var description: String { "cannot \(step) \(path): \(String(cString: strerror(code)))" }
    }

    static func replace(_ path: String, with bytes: [UInt8], permissions: mode_t = 0o644) throws(Failure) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, permissions)
        guard fd >= 0 else { throw Failure(path: temporary, step: "create", code: errno) }
        do throws(Failure) {
            // The mode open() gave went through the umask; a key must be exactly 0600.
            guard fchmod(fd, permissions) == 0 else { throw Failure(path: temporary, step: "set the permissions of", code: errno) }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { throw Failure(path: temporary, step: "write", code: written < 0 ? errno : EIO) }
                offset += written
            }
            guard fsync(fd) == 0 else { throw Failure(path: temporary, step: "flush", code: errno) }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw Failure(path: path, step: "replace", code: code)
        }
        // The rename is durable once the directory is.
        let directory = open((path as NSString).deletingLastPathComponent.nilIfEmpty ?? ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw Failure(path: path, step: "open the directory of", code: errno) }
        defer { close(directory) }
        guard fsync(directory) == 0 else { throw Failure(path: path, step: "flush the directory of", code: errno) }
    }
}

private extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
