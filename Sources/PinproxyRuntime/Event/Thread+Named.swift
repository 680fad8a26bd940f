import Foundation

extension Thread {
    /// Starts a thread that runs `body` under `name` as the kernel shows it
    /// (`top -H`, `ps -L`, /proc/PID/task/TID/comm: at most 15 bytes there).
    /// Foundation on Linux gives a name set before `start` to the `Thread`
    /// object only, and the kernel's stays the creating thread's, so the name
    /// is set from inside.
    static func startNamed(_ name: String, _ body: @escaping @Sendable () -> Void) {
        Thread {
            Thread.current.name = name
            body()
        }.start()
    }
}
