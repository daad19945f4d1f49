import Foundation
import GRDB
/// Why a store operation failed, in CouchDB's vocabulary (the REST layer maps each
/// kind to its HTTP status).
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of failure.
    public enum Kind: String, Sendable, Equatable {
        /// 400: malformed input (bad rev, reserved property, bad attachment data…).
        case badRequest = "bad_request"
        /// 404: no such document, revision or attachment.
        case notFound = "not_found"
        /// 401: the writer must authenticate (the sync function threw `{unauthorized}`).
        case unauthorized
        /// 403: the writer may not make this change (the sync function rejected it).
        case forbidden
        /// 409: the named parent revision is not a current leaf.
        case conflict
        /// 412: a precondition failed (attachment stub with nothing behind it).
        case preconditionFailed = "precondition_failed"
        /// 413: the document is larger than the configured maximum.
        case tooLarge = "too_large"
        /// 500: the database itself failed.
        case storage = "internal_error"
        /// 503: the database cannot accept writes now (e.g. its sync function is stuck).
        case unavailable = "service_unavailable"
        /// 507: the disk is full; the write was not stored (reads go on, and writes work
        /// again by themselves once there is space).
        case insufficientStorage = "insufficient_storage"
    }

    public let kind: Kind
    /// CouchDB's `error` string (e.g. `not_found`, `conflict`, `missing_stub`).
    public let error: String
    /// A human-readable reason (e.g. `missing`, `deleted`, `Document update conflict`).
    public let reason: String

    public init(_ kind: Kind, error: String? = nil, reason: String) {
        self.kind = kind
        self.error = error ?? kind.rawValue
        self.reason = reason
    }

    public var description: String { "\(error): \(reason)" }

    /// The HTTP status CouchDB answers for this kind (the REST API and the
    /// replication protocol's HTTP error domain both use it).
    public var httpStatus: Int {
        switch kind {
        case .badRequest: 400
        case .notFound: 404
        case .unauthorized: 401
        case .forbidden: 403
        case .conflict: 409
        case .preconditionFailed: 412
        case .tooLarge: 413
        case .storage: 500
        case .unavailable: 503
        case .insufficientStorage: 507
        }
    }

    static func badRequest(_ reason: String) -> StoreError { StoreError(.badRequest, reason: reason) }
    /// Content offered as attachment `expected` hashes to another digest (`BlobWriter.finish`).
    static func digestMismatch(expected: String) -> StoreError {
        badRequest("the attachment's content does not match its digest \(expected)")
    }
    static let missing = StoreError(.notFound, reason: "missing")
    static let deleted = StoreError(.notFound, reason: "deleted")
    static let updateConflict = StoreError(.conflict, reason: "Document update conflict")
    /// A failure of the database or the filesystem under `path` (the database file, when
    /// there is one): an I/O error while that filesystem has no room left is a full disk.
    static func storage(_ error: any Error, path: String? = nil) -> StoreError {
        if Self.isDiskFull(error) { return .diskFull }
        if let path, Self.isIOError(error), DiskSpace.isFull(at: path) { return .diskFull }
        return StoreError(.storage, reason: String(describing: error))
    }

    /// A write that did not fit on the disk (SQLite's `SQLITE_FULL`, or `ENOSPC` writing
    /// an attachment).
    static let diskFull = StoreError(
        .insufficientStorage,
        reason: "The disk is full: the write was not stored. Free some space; writes resume by themselves.")

    /// A write refused because the nemesis makes the disk look full
    /// (`DocumentStore.setDiskFullFault`): 507 as a real full disk, saying it is not one.
    static let injectedDiskFull = StoreError(
        .insufficientStorage,
        reason: "The disk is full: the write was not stored. (A fault injected by the nemesis, not a real full disk: it lifts by itself.)")

    /// SQLite's `SQLITE_IOERR` (any extended code): a read or write of a file failed.
    static func isIOError(_ error: any Error) -> Bool {
        (error as? DatabaseError)?.resultCode == .SQLITE_IOERR
    }

    static func isDiskFull(_ error: any Error) -> Bool {
        if let database = error as? DatabaseError { return database.resultCode == .SQLITE_FULL }
        if let cocoa = error as? CocoaError { return cocoa.code == .fileWriteOutOfSpace }
        let nsError = error as NSError
        return nsError.domain == NSPOSIXErrorDomain && nsError.code == Int(ENOSPC)
    }
}
