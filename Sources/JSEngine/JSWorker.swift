import Blocking
import CDuktape

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns the dedicated thread that runs one `DuktapeHeap`, the one-call-at-a-time slot in
/// front of it, the per-call time budget and the wedged state.
///
/// Callers block in `run` (never on the Swift concurrency pool's behalf: see
/// `JSFunction.call(_:context:) async`). Debian's Duktape cannot interrupt a running script,
/// so when a job overruns its budget the caller gets `.timeout` at once and the worker is
/// *wedged*: its thread is abandoned (lowered to SCHED_IDLE, its heap refuses allocations so
/// an allocating loop soon dies), and every later `run` fails with `.wedged`. If the job ever
/// returns, the thread destroys the heap and exits; if it never does, thread and heap leak.
final class JSWorker: @unchecked Sendable, HostCallGate {
    private let lock = ConditionLock()
    private let heap: DuktapeHeap
    private let heapState: UnsafeMutablePointer<shoal_duk_heap_state>
    private var thread: pthread_t?

    // Guarded by `lock`.
    private var pending: ((DuktapeHeap) -> Void)?
    private var busy = false
    private var started = false
    private var finished = false
    private var itemStart: UInt64 = 0
    private var wedged = false
    private var stopping = false
    private var inHost = false
    private var queuedCallers = 0

    /// Takes ownership of `heap` and starts the thread that will run it.
    init(heap: DuktapeHeap, stackSize: Int = 8 << 20) throws(JSError) {
        self.heap = heap
        self.heapState = heap.state
        heap.setGate(self)
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSize)
        var tid = pthread_t()
        let retained = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(&tid, &attributes, { argument in
            let worker = Unmanaged<JSWorker>.fromOpaque(argument!).takeRetainedValue()
            worker.threadMain()
            return nil
        }, retained)
        guard status == 0 else {
            Unmanaged<JSWorker>.fromOpaque(retained).release()
            throw JSError.engineUnavailable("pthread_create failed: \(status)")
        }
        thread = tid
    }

    /// True once a job overran its budget; the worker then refuses every job.
    var isWedged: Bool {
        lock.lock()
        defer { lock.unlock() }
        return wedged
    }

    /// Runs `body` on the worker thread and returns its result. Waits for earlier jobs first.
    /// Throws `.timeout` if `body` (or the stretch since its last `heartbeat()`) runs longer
    /// than `budget` nanoseconds, `.wedged` if an earlier job did.
    func run<T>(budget: UInt64, _ body: @escaping (DuktapeHeap) -> T) throws(JSError) -> T {
        if let thread, pthread_equal(thread, pthread_self()) != 0 { throw .reentrantCall }
        let box = ResultBox<T>()
        lock.lock()
        while busy && !wedged && !stopping {
            queuedCallers += 1
            lock.wait()
            queuedCallers -= 1
        }
        if wedged || stopping {
            lock.unlock()
            throw .wedged
        }
        busy = true
        started = false
        finished = false
        pending = { heap in box.value = body(heap) }
        lock.broadcast()
        // The clock starts when the worker picks the job up (it does not signal that, to
        // save a wake-up); until then, re-check every `budget`.
        var pickupCheck = ConditionLock.now() &+ budget
        while !finished {
            let now = ConditionLock.now()
            if started {
                let deadline = itemStart &+ budget
                if now >= deadline {
                    wedge()
                    lock.unlock()
                    throw .timeout
                }
                lock.wait(until: deadline)
            } else {
                if now >= pickupCheck { pickupCheck = now &+ budget }
                lock.wait(until: pickupCheck)
            }
        }
        busy = false
        // Only a queued caller needs to know (a broadcast would also wake the idle worker).
        if queuedCallers > 0 { lock.broadcast() }
        lock.unlock()
        return box.value!
    }

    /// Restarts the current job's clock (called on the worker thread between batch items).
    func heartbeat() {
        lock.lock()
        itemStart = ConditionLock.now()
        lock.unlock()
    }

    /// Stops the thread after the current job. Its end (and the heap's destruction) is
    /// waited for by a thread of the blocking pool, never by the caller, which may be a
    /// cooperative thread dropping the last reference; a wedged worker's thread, or the
    /// worker's own, is detached instead.
    func shutdown() {
        lock.lock()
        stopping = true
        let abandoned = wedged
        lock.broadcast()
        lock.unlock()
        guard let thread else { return }
        self.thread = nil
        if abandoned || pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            let joined = JoinedThread(thread: thread)
            BlockingPool.shared.execute { pthread_join(joined.thread, nil) }
        }
    }

    // MARK: - HostCallGate

    func enterHost() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if wedged { return false }
        inHost = true
        return true
    }

    func leaveHost() {
        lock.lock()
        inHost = false
        if wedged { lock.broadcast() }  // only `wedge()` waits for this
        lock.unlock()
    }

    // MARK: - Private

    /// Marks the worker wedged (lock held). A host function already running finishes first,
    /// so its per-call context is never touched after the caller has returned.
    private func wedge() {
        wedged = true
        shoal_duk_abandon(heapState)
        if let thread { _ = shoal_duk_idle_priority(thread) }
        while inHost { lock.wait() }
        lock.broadcast()
    }

    private func threadMain() {
        shoal_duk_name_thread("shoal-js")
        lock.lock()
        while true {
            while pending == nil && !stopping && !wedged { lock.wait() }
            guard let job = pending, !wedged, !stopping else { break }
            pending = nil
            started = true
            itemStart = ConditionLock.now()
            lock.unlock()
            job(heap)
            lock.lock()
            if wedged { break }
            finished = true
            lock.broadcast()
        }
        lock.unlock()
        heap.destroy()
    }
}

/// A worker thread handed to the blocking pool to be joined there.
private struct JoinedThread: @unchecked Sendable {
    let thread: pthread_t
}

/// Carries one job's result from the worker thread to the caller (the lock orders the accesses).
private final class ResultBox<T> {
    var value: T?
}
