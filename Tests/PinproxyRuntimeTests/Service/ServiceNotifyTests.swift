import Foundation
import Testing

/// The sd_notify(3) conversation of the real binary with a socket standing in
/// for systemd (SPEC §5): what `Type=notify`, `systemctl reload` and
/// `WatchdogSec=` rely on.
@Suite("pinproxy under systemd: the notify protocol", .serialized)
struct ServiceNotifyTests {
    static let denyAll = #""default_policy": "deny", "threads": 1,"#

    @Test("READY=1 after binding, RELOADING=1 with MONOTONIC_USEC then READY=1 on SIGHUP, STOPPING=1 on SIGTERM, exit 0")
    func notifySequence() throws {
        let service = try ServiceUnderTest(body: Self.denyAll)
        var datagrams = try service.start()
        let process = try service.running()
        #expect(NotifyListener.states(datagrams) == ["READY=1"])
        #expect(NotifyListener.field("STATUS", in: datagrams.last ?? "") == "generation 1, 0 connections, 0 violations")

        // READY=1 means the listener accepts: the deny-all config answers 403 itself.
        let denied = try Curl.run(["-x", service.proxy, "http://blocked.example/"])
        #expect(denied.status == 403)
        #expect(denied.header("Proxy-Status") == "pinproxy; error=http_request_denied")

        let beforeReload = Self.monotonicMicroseconds()
        process.send(SIGHUP)
        let reload = try service.waitForReady()
        let afterReload = Self.monotonicMicroseconds()
        datagrams += reload
        let reloading = try #require(reload.first { NotifyListener.states([$0]) == ["RELOADING=1"] })
        let stamp = try #require(NotifyListener.field("MONOTONIC_USEC", in: reloading).flatMap { UInt64($0) })
        // systemd orders the reload by CLOCK_MONOTONIC, which is system-wide.
        #expect(stamp >= beforeReload && stamp <= afterReload)
        #expect(NotifyListener.field("STATUS", in: reload.last ?? "") == "generation 2, 0 connections, 0 violations")

        process.send(SIGTERM)
        let exitCode = process.waitForExit(timeout: 20)
        datagrams += service.notifications.receive(until: { _ in false }, timeout: 0.2)
        #expect(exitCode == 0, "stderr:\n\(process.stderrText)")
        // STATUS= lines of the 5 s housekeeping may interleave; the states may not.
        #expect(NotifyListener.states(datagrams) == ["READY=1", "RELOADING=1", "READY=1", "STOPPING=1"])
    }

    @Test("with WATCHDOG_USEC=200000, WATCHDOG=1 arrives about every 100 ms")
    func watchdog() throws {
        let service = try ServiceUnderTest(body: Self.denyAll)
        try service.start(.init(signalMask: .clean, environment: ["WATCHDOG_USEC": "200000"]))
        let process = try service.running()
        let start = Date()
        var arrivals: [TimeInterval] = []
        while Date().timeIntervalSince(start) < 1 {
            guard let datagram = service.notifications.receive(timeout: 1 - Date().timeIntervalSince(start)) else { break }
            if NotifyListener.states([datagram]) == ["WATCHDOG=1"] { arrivals.append(Date().timeIntervalSince(start)) }
        }
        let gaps = zip(arrivals.dropFirst(), arrivals).map { $0 - $1 }
        print("watchdog: \(arrivals.count) pings in 1 s, gaps \(gaps.map { Int($0 * 1000) }) ms")
        #expect(arrivals.count >= 3)
        // Half of WATCHDOG_USEC: never faster than every 100 ms (10 in 1 s, 11 with the edges).
        #expect(arrivals.count <= 11)
        process.send(SIGTERM)
        #expect(process.waitForExit(timeout: 20) == 0)
    }

    @Test("WATCHDOG_PID naming another process turns the watchdog off")
    func watchdogForAnotherProcess() throws {
        let service = try ServiceUnderTest(body: Self.denyAll)
        try service.start(.init(signalMask: .clean, environment: ["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"]))
        let process = try service.running()
        let datagrams = service.notifications.receive(until: { _ in false }, timeout: 0.6)
        #expect(!NotifyListener.states(datagrams).contains("WATCHDOG=1"))
        process.send(SIGTERM)
        #expect(process.waitForExit(timeout: 20) == 0)
    }

    // systemd starts services with an empty mask, but `pinproxy run` from a
    // shell script, a supervisor or Foundation.Process may inherit SIGHUP and
    // SIGTERM blocked: the daemon must unblock the signals it handles itself.
    @Test("SIGHUP and SIGTERM work even when the parent left pinproxy's signals blocked")
    func signalsWhenInheritedBlocked() throws {
        let service = try ServiceUnderTest(body: Self.denyAll)
        try service.start(.init(signalMask: .blocking(PinproxyBinary.handledSignals)))
        let process = try service.running()
        process.send(SIGHUP)
        let reload = service.notifications.receive(until: { NotifyListener.states([$0]) == ["READY=1"] }, timeout: 5)
        #expect(NotifyListener.states(reload) == ["RELOADING=1", "READY=1"])
        #expect(eventually(timeout: 3) { process.stderrText.contains("configuration generation 2 active") },
                "stderr:\n\(process.stderrText)")
        process.send(SIGTERM)
        #expect(process.waitForExit(timeout: 5) == 0)
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}
