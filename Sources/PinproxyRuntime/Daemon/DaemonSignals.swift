import Foundation

/// The signals `pinproxy run` acts on, and how they are kept from killing it
/// before it can: from the process's first statement until the loop's
/// handlers are installed (loading a large configuration and binding the
/// listeners take a second or more), SIGHUP's and SIGUSR1's default action
/// would end the daemon without a word, with its listeners already
/// accepting. Blocked instead, a signal waits, pending, and reaches the
/// handler once installed: a reload sent during start-up reloads, a SIGTERM
/// drains. Threads inherit the mask, so every thread started meanwhile
/// (loops, log writers, the low-priority queue) keeps them blocked for good,
/// and only the thread that installs the handlers takes them.
public enum DaemonSignals {
    /// Reload, drain (two ways), reopen the logs.
    public static let handled: [Int32] = [SIGHUP, SIGTERM, SIGINT, SIGUSR1]

    /// Blocks `handled` on the calling thread; call before any other thread starts.
    public static func holdUntilHandled() {
        var set = handledSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Unblocks `handled` on the calling thread, once its handlers are
    /// installed: what came meanwhile is delivered to them now. Also undoes
    /// a block a parent (a script, a supervisor) left in place.
    static func deliverToHandlers() {
        var set = handledSet()
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    private static func handledSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in handled { sigaddset(&set, signal) }
        return set
    }
}
