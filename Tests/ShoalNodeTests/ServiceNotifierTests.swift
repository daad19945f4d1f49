import Foundation
import Testing
import TestSupport
@testable import ShoalNode

/// sd_notify without libsystemd: the datagrams reach a socket given by path or abstract
/// name, the watchdog interval is read as systemd(1) sets it, and READY=1 waits until
/// both listeners answer.
struct ServiceNotifierTests {
    @Test(arguments: [false, true]) func sendsDatagramsToThePathOrAbstractName(abstract: Bool) async throws {
        let socket = try NotifySocket(abstract: abstract)
        let notifier = ServiceNotifier(environment: ["NOTIFY_SOCKET": socket.address])
        #expect(notifier.isActive)
        notifier.ready(status: "serving db")
        notifier.watchdog()
        notifier.stopping()
        #expect(await eventually(timeout: .seconds(5)) { socket.messages.count == 3 })
        let texts = socket.messages.map(\.text)
        #expect(texts[0].split(separator: "\n").contains("READY=1"))
        #expect(texts[0].split(separator: "\n").contains("STATUS=serving db"))
        #expect(texts[0].split(separator: "\n").contains("MAINPID=\(getpid())"))
        #expect(texts[1] == "WATCHDOG=1")
        #expect(texts[2].hasPrefix("STOPPING=1"))
    }

    @Test func withoutNotifySocketNothingIsSent() {
        let notifier = ServiceNotifier(environment: [:])
        #expect(!notifier.isActive)
        #expect(!notifier.send(["READY=1"]))
        #expect(notifier.watchdogInterval == nil)
    }

    @Test func rejectsRelativeAndOverlongSocketNames() {
        #expect(ServiceNotifier.socketPath("relative/path") == nil)
        #expect(ServiceNotifier.socketPath("") == nil)
        #expect(ServiceNotifier.socketPath("/" + String(repeating: "x", count: 200)) == nil)
        #expect(ServiceNotifier.socketPath("@name")?.first == 0)
    }

    @Test func watchdogIntervalIsForThisProcessOnly() {
        let mine = ServiceNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "42"], pid: 42)
        #expect(mine.watchdogInterval == .seconds(30))
        let unnamed = ServiceNotifier(environment: ["WATCHDOG_USEC": "500000"], pid: 42)
        #expect(unnamed.watchdogInterval == .milliseconds(500))
        let other = ServiceNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "41"], pid: 42)
        #expect(other.watchdogInterval == nil)
        #expect(ServiceNotifier(environment: ["WATCHDOG_USEC": "0"]).watchdogInterval == nil)
        #expect(ServiceNotifier(environment: ["WATCHDOG_USEC": "soon"]).watchdogInterval == nil)
    }

    @Test func readyIsNotSentWhileAListenerDoesNotAnswer() async throws {
        let socket = try NotifySocket()
        let notifier = ServiceNotifier(environment: ["NOTIFY_SOCKET": socket.address])
        let node = try await TestNode.start()
        defer { Task { await node.node.stop() } }
        // The admin port answers; the public one is bound but not listening (a closed
        // listener's port could go to a parallel test's server at once).
        let (bound, closed) = try LoopbackListener.boundButNotListening()
        defer { close(bound) }
        let halfUp = ServiceSupervision(
            notifier: notifier, adminHost: "127.0.0.1", adminPort: node.ports.adminPort,
            publicHost: "127.0.0.1", publicPort: closed, publicUsesTLS: false)
        #expect(await halfUp.announceReady(status: "x", attempts: 3) == false)
        let up = ServiceSupervision(
            notifier: notifier, adminHost: "0.0.0.0", adminPort: node.ports.adminPort,
            publicHost: "0.0.0.0", publicPort: node.ports.publicPort, publicUsesTLS: false)
        #expect(await up.announceReady(status: "serving db"))
        #expect(await eventually(timeout: .seconds(5)) { !socket.messages(with: "READY=1").isEmpty })
        #expect(socket.messages(with: "READY=1").count == 1)
        #expect(socket.messages.contains { $0.text == "STATUS=listeners do not answer" })
    }

    @Test func wildcardListenersAreReachedOverLoopback() {
        #expect(ServiceSupervision.reachable("0.0.0.0") == "127.0.0.1")
        #expect(ServiceSupervision.reachable("::") == "[::1]")
        #expect(ServiceSupervision.reachable("fe80::1") == "[fe80::1]")
        #expect(ServiceSupervision.reachable("10.0.0.2") == "10.0.0.2")
    }
}
