internal import CLibevent
import Foundation

extension Thread {
    /// Starts a thread that runs `body` under `name` as the kernel shows it
    /// (`top -H`, `ps -L`, /proc/PID/task/TID/comm: at most 15 bytes there),
    /// set from inside the thread with `prctl(PR_SET_NAME)`. Foundation's
    /// `name` does not do it: set before `start` it names the `Thread` object
    /// only, and set from inside it reaches the kernel only when the creator
    /// has already stored the new thread's id, which a thread that runs at
    /// once beats (a `make test` run on a busy machine found it unnamed).
    static func startNamed(_ name: String, _ body: @escaping @Sendable () -> Void) {
        Thread {
            _ = shim_set_thread_name(name)
            Thread.current.name = name
            body()
        }.start()
    }
}
