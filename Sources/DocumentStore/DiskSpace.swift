import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The room left on the filesystem that holds a path (statvfs). It tells a full disk
/// apart from other I/O errors: SQLite reports some writes that fail for want of space
/// as a plain I/O error (growing the WAL index, `-shm`, gives `SQLITE_IOERR_SHMSIZE`),
/// not as `SQLITE_FULL`.
enum DiskSpace {
    /// Less room than this counts as full: a failed write may have freed a little.
    static let fullBelow: UInt64 = 1 << 20

    /// Bytes this process may still write on the filesystem holding `path` (root may
    /// use the blocks reserved for it), or nil if the filesystem cannot be asked.
    static func available(at path: String) -> UInt64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let blocks = geteuid() == 0 ? UInt64(info.f_bfree) : UInt64(info.f_bavail)
        return blocks * UInt64(info.f_frsize)
    }

    /// Whether the filesystem holding `path` is (all but) full.
    static func isFull(at path: String) -> Bool {
        guard let available = available(at: path) else { return false }
        return available < fullBelow
    }
}
