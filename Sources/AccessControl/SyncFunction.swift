import DocumentModel
import Foundation
import DocumentStore
import JSEngine
import Synchronization

/// The identity a sync function checks `requireUser`/`requireRole`/`requireAccess`
/// against. nil stands for an administrator or a mesh peer: every check passes.
public struct SyncUser: Sendable, Equatable {
    public var name: String
    public var roles: Set<String>
    public var channels: Set<String>

    public init(name: String, roles: Set<String> = [], channels: Set<String> = []) {
        self.name = name
        self.roles = roles
        self.channels = channels
    }
}

/// A database's sync function (`function(doc, oldDoc) {…}`, ES5), run by the embedded
/// Duktape engine for every new revision.
///
/// `SyncFunction` owns the compiled function and its host API, as in Sync Gateway:
/// `channel(…)`, `access(users, channels)`, `role(users, roles)`, `expiry(…)`,
/// `requireUser(…)`, `requireRole(…)`, `requireAccess(…)`, `throw({forbidden: …})`,
/// `throw({unauthorized: …})` and `console.log`. A call's outputs are collected in a
/// per-call `SyncCall` (no state shared between calls). A call that overruns its budget
/// wedges the engine; from then on every write is refused with 503 until the node
/// restarts, instead of hanging the node.
public final class SyncFunction: Sendable {
    /// Sync Gateway's default: route each document to the channels named in its
    /// `channels` property.
    public static let defaultSource = "function(doc, oldDoc) { channel(doc.channels); }"

    public let source: String
    /// The same function compiled in `engines` heaps, each with its own thread (as Sync
    /// Gateway keeps a pool of JavaScript VMs): a batch is split between them. Each
    /// revision's outcome depends only on the revision, its parent and the user, so
    /// which heap runs it changes nothing.
    let functions: [JSFunction]
    var function: JSFunction { functions[0] }

    /// Compiles `source`; bad JavaScript throws `JSError.compile` with the line.
    /// `engines`: heaps that run batches in parallel (default: one per core, at most 2).
    public init(
        source: String = SyncFunction.defaultSource, timeout: Duration = .seconds(2),
        logger: (@Sendable (String) -> Void)? = nil, engines: Int = SyncFunction.defaultEngines
    ) throws(JSError) {
        self.source = source
        var functions: [JSFunction] = []
        for _ in 0..<max(1, engines) {
            functions.append(try JSFunction(
                source: Self.recording(source), globals: Self.hostFunctions(logger: logger),
                options: .init(timeout: timeout, filename: "sync")))
        }
        self.functions = functions
    }

    /// One heap per core, at most two.
    public static var defaultEngines: Int { min(2, max(1, ProcessInfo.processInfo.activeProcessorCount)) }

    /// Runs the function on one revision. `doc` carries `_id`, `_rev` and, for a
    /// deletion, `_deleted: true`; `oldDoc` is the parent revision (nil for a new
    /// document). Returns the revision's channels and grants, or throws the rejection.
    public func run(doc: JSON, oldDoc: JSON?, user: SyncUser?) throws(StoreError) -> RevisionAccess {
        let call = SyncCall(user: user)
        do {
            call.replay(try function.call([doc, oldDoc ?? .null], context: call))
        } catch {
            throw Self.rejection(error)
        }
        return call.result
    }

    /// Runs the function on many revisions in one hand-off to the engine's thread.
    public func run(batch: [(doc: JSON, oldDoc: JSON?)], user: SyncUser?) async -> [Result<RevisionAccess, StoreError>] {
        let calls = batch.map { _ in SyncCall(user: user) }
        let items: [(arguments: [JSON], context: (any Sendable)?)] = zip(batch, calls).map { item, call in
            ([item.doc, item.oldDoc ?? .null], call)
        }
        // Contiguous slices, one per heap (small batches stay on one).
        let parts = min(functions.count, max(1, items.count / 32))
        let size = (items.count + parts - 1) / max(parts, 1)
        let results: [Result<JSON, JSError>]
        do {
            results = parts == 1 ? try await function.call(batch: items) : try await withThrowingTaskGroup(
                of: (Int, [Result<JSON, JSError>]).self
            ) { group in
                for part in 0..<parts {
                    let slice = Array(items[min(items.count, part * size)..<min(items.count, (part + 1) * size)])
                    let function = functions[part]
                    group.addTask { (part, try await function.call(batch: slice)) }
                }
                var byPart = [[Result<JSON, JSError>]](repeating: [], count: parts)
                for try await (part, partial) in group { byPart[part] = partial }
                return byPart.flatMap { $0 }
            }
        } catch {
            let failure = (error as? JSError).map(Self.rejection) ?? StoreError(.storage, reason: "\(error)")
            return Array(repeating: .failure(failure), count: batch.count)
        }
        return zip(results, calls).map { result, call in
            switch result {
            case .success(let log):
                call.replay(log)
                return .success(call.result)
            case .failure(let error):
                return .failure(Self.rejection(error))
            }
        }
    }

    /// Whether an earlier call overran its budget (nothing runs any more).
    public var isWedged: Bool { functions.contains { $0.isWedged } }

    /// Sync Gateway's errors for what a sync function threw.
    static func rejection(_ error: JSError) -> StoreError {
        switch error {
        case .thrown(let value):
            if let reason = error.thrownString(forKey: "forbidden") {
                return StoreError(.forbidden, error: "forbidden", reason: reason)
            }
            if let reason = error.thrownString(forKey: "unauthorized") {
                return StoreError(.unauthorized, error: "Unauthorized", reason: reason)
            }
            let message = value["message"]?.stringValue ?? value.stringValue ?? value.canonicalString
            return StoreError(.storage, error: "sync_function_error", reason: "Exception in JS sync function: \(message)")
        case .timeout, .wedged:
            return StoreError(
                .unavailable, error: "service_unavailable",
                reason: "The sync function did not finish within its time budget; this database accepts no writes until the node restarts with a fixed sync function")
        default:
            return StoreError(.storage, error: "sync_function_error", reason: "Sync function failed: \(error.message)")
        }
    }
}

/// The outputs of one sync function call, filled in by the host functions on the
/// engine's thread while the caller waits, read by the caller afterwards.
final class SyncCall: Sendable {
    let user: SyncUser?
    private let state = Mutex(RevisionAccess())

    init(user: SyncUser?) {
        self.user = user
    }

    var result: RevisionAccess { state.withLock { $0 } }

    func update(_ body: (inout RevisionAccess) -> Void) {
        state.withLock { body(&$0) }
    }

    /// Applies the outputs the function recorded in JavaScript (`[[name, [arguments…]], …]`).
    func replay(_ log: JSON) {
        guard case .array(let entries) = log else { return }
        state.withLock { access in
            for case .array(let entry) in entries where entry.count == 2 {
                guard case .string(let name) = entry[0], case .array(let arguments) = entry[1] else { continue }
                SyncFunction.record(name, arguments, into: &access)
            }
        }
    }
}
