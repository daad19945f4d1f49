#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with one condition variable whose timed waits use the monotonic clock.
///
/// Owns a heap-allocated `pthread_mutex_t` and `pthread_cond_t` (they must not move).
/// `JSWorker` guards all of its state with one of these; waits are broadcast-based, so every
/// waiter re-checks its own predicate after waking.
final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        let mutexStatus = pthread_mutex_init(mutex, nil)
        precondition(mutexStatus == 0, "pthread_mutex_init failed: \(mutexStatus)")
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if canImport(Glibc)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        let conditionStatus = pthread_cond_init(condition, &attributes)
        precondition(conditionStatus == 0, "pthread_cond_init failed: \(conditionStatus)")
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() {
        pthread_mutex_lock(mutex)
    }

    func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Wakes every waiter. Call with the lock held.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// Waits (lock held) until woken. Spurious wake-ups happen: re-check the predicate.
    func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// Waits (lock held) until woken or until the monotonic clock reaches `deadline`
    /// (nanoseconds, as returned by `now()`).
    func wait(until deadline: UInt64) {
        #if canImport(Glibc)
        var time = timespec(
            tv_sec: Int(deadline / 1_000_000_000),
            tv_nsec: Int(deadline % 1_000_000_000)
        )
        pthread_cond_timedwait(condition, mutex, &time)
        #else
        let remaining = deadline > Self.now() ? deadline - Self.now() : 0
        var time = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
        pthread_cond_timedwait_relative_np(condition, mutex, &time)
        #endif
    }

    /// The monotonic clock in nanoseconds (CLOCK_MONOTONIC, the clock of `wait(until:)`).
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
