import DocumentModel
import DocumentStore

/// A live query: runs a query, then again after every commit to the database (local
/// writes and replicated revisions alike), and yields each result that differs from the
/// previous one. Bursts of commits coalesce: a run sees every commit made before it
/// started, and the next run waits only for commits after that.
///
/// This is Couchbase Lite's live query, served by the node to any HTTP client
/// (`feed=longpoll|continuous|eventsource` on `_find` and views; docs/queries.md).
public enum LiveQuery {
    public enum Event: Sendable, Equatable {
        /// A result, and the sequence of the last commit it reflects.
        case result(JSON, sequence: UInt64)
        /// Nothing changed for a heartbeat interval.
        case heartbeat
    }

    /// The events of `run` on `store`, until the consumer stops iterating (which cancels
    /// the query's task at once). `heartbeat`: how long to wait quietly before a
    /// `.heartbeat` event (nil: never). `initial`: the first result, when the caller
    /// already ran the query (with the committed sequence read before it ran).
    public static func events(
        store: DocumentStore, heartbeat: Duration?, initial: (result: JSON, sequence: UInt64)? = nil,
        run: @escaping @Sendable () async throws -> JSON
    ) -> AsyncThrowingStream<Event, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var sequence = initial?.sequence ?? store.committedSequence
                    var previous: JSON
                    if let initial { previous = initial.result } else { previous = try await run() }
                    continuation.yield(.result(previous, sequence: sequence))
                    while !Task.isCancelled {
                        let wait = heartbeat ?? .seconds(3600)
                        if await store.waitForChange(after: sequence, timeout: wait) {
                            sequence = store.committedSequence
                            let current = try await run()
                            if current != previous {
                                previous = current
                                continuation.yield(.result(current, sequence: sequence))
                            }
                        } else if !Task.isCancelled, heartbeat != nil {
                            continuation.yield(.heartbeat)
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
