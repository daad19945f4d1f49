import Foundation

/// Starts `shoal` child processes so that they die with the test process: each one runs
/// under `setpriv --pdeathsig KILL` (the exec keeps the PID, so tests still signal the
/// node by its PID), and is spawned from one thread that lives as long as the test
/// process, because a parent-death signal follows the thread that forked the child, not
/// the process. Without it, a test process that crashed or was killed left its
/// `shoal serve` children running, some redialing loopback ports later tests reused.
public final class ChildSpawner: @unchecked Sendable {
    public static let shared = ChildSpawner()
    /// Where `setpriv` is (util-linux); nil where it is missing, and children then run as
    /// they are.
    static let setpriv: String? = ["/usr/bin/setpriv", "/bin/setpriv"].first { FileManager.default.isExecutableFile(atPath: $0) }

    private let condition = NSCondition()
    private var jobs: [() -> Void] = []

    private init() {
        let thread = Thread { [self] in
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                job()
            }
        }
        thread.name = "shoal-test-spawner"
        thread.start()
    }

    /// Points `process` at `executable` with `arguments`, wrapped so that it dies with
    /// this process, with `environment` (nil: this process's). A Swift crash of the
    /// child writes its backtrace to `backtraceDirectory` (`crashReport(pid:)`): its
    /// standard error is usually dropped, and a test that kills it afterwards would
    /// otherwise never know it had crashed.
    public static func prepare(_ process: Process, executable: String, arguments: [String], environment: [String: String]? = nil) {
        if let setpriv {
            process.executableURL = URL(fileURLWithPath: setpriv)
            process.arguments = ["--pdeathsig", "KILL", "--", executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        var variables = environment ?? ProcessInfo.processInfo.environment
        if variables["SWIFT_BACKTRACE"] == nil, backtraceDirectoryReady {
            variables["SWIFT_BACKTRACE"] = "enable=yes,interactive=no,output-to=\(backtraceDirectory)"
        }
        process.environment = variables
    }

    /// Where the children's crash backtraces go (one directory per test process).
    public static let backtraceDirectory = NSTemporaryDirectory() + "shoal-test-backtraces-\(getpid())"

    /// Creates the directory once; it is removed when this process exits if no child
    /// left a backtrace in it.
    private static let backtraceDirectoryReady: Bool = {
        guard (try? FileManager.default.createDirectory(atPath: backtraceDirectory, withIntermediateDirectories: true)) != nil else {
            return false
        }
        atexit { _ = rmdir(ChildSpawner.backtraceDirectory) }
        return true
    }()

    /// The backtrace a crashed `shoal` child with this PID left, if any.
    public static func crashReport(pid: Int32) -> String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: backtraceDirectory)) ?? []
        guard let name = names.first(where: { $0.hasPrefix("shoal-\(pid)-") }) else { return nil }
        return FileManager.default.contents(atPath: backtraceDirectory + "/" + name).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Runs `process` (prepared with `prepare`) from the spawning thread; blocks until
    /// it has started.
    public func run(_ process: Process) throws {
        let started = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: (any Error)?
        condition.lock()
        jobs.append {
            do { try process.run() } catch { failure = error }
            started.signal()
        }
        condition.signal()
        condition.unlock()
        started.wait()
        if let failure { throw failure }
    }
}
