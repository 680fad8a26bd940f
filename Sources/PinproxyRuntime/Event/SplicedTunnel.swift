internal import CLibevent
import Foundation

/// A blind CONNECT tunnel (SPEC §3.1): the bytes of two sockets relayed both
/// ways through one pipe per direction with `splice(2)`, so that they never
/// leave the kernel (how HAProxy and relayd splice). Back-pressure is the
/// pipe: a direction reads its source only once its pipe is empty, so at most
/// one pipe's worth is ever in flight, and a slow reader stops the writer's
/// socket from being read. Each side's end of stream is passed on as a
/// half-close once its pipe is written out; the tunnel ends when both
/// directions have, on a socket error, or after `idle` without a byte. A
/// socket error is passed on as a reset to both ends, as HAProxy's tunnel
/// does: a FIN would tell a peer reading up to the close that it had it all.
///
/// Owns both sockets, both pipes and the four events. Reports its end once,
/// from an event callback, and never after `close()`.
final class SplicedTunnel {
    enum Ending: Sendable, Equatable {
        /// Both sides closed cleanly.
        case completed
        /// A read or write failed (reset, broken pipe), in the kernel's words.
        case failed(String)
        /// Nothing moved either way for `idle`.
        case idle
    }

    /// Bytes moved so far: client → upstream and upstream → client (the prefixes included).
    private(set) var bytesUp = 0
    private(set) var bytesDown = 0

    private let loop: EventLoop
    private let up: Direction
    private let down: Direction
    private let idle: Duration
    private var idleTimer: Timer?
    private var lastActivity = ContinuousClock.now
    private var onEnd: ((Ending) -> Void)?
    private var isClosed = false

    /// Takes ownership of both connected, non-blocking sockets (closed by
    /// `close`, also when init fails). `toUpstream`/`toClient`: bytes to send
    /// first (what the client sent behind its CONNECT head; the `200`'s rest),
    /// moved out of the caller's buffers. Nil when no pipe or event can be made.
    init?(loop: EventLoop, client: Int32, upstream: Int32, toUpstream: EventBuffer, toClient: EventBuffer,
          idle: Duration, onEnd: @escaping (Ending) -> Void) {
        self.loop = loop
        self.idle = idle
        self.onEnd = onEnd
        guard let up = Direction(loop: loop, source: client, destination: upstream),
              let down = Direction(loop: loop, source: upstream, destination: client) else {
            Glibc.close(client)
            Glibc.close(upstream)
            return nil
        }
        self.up = up
        self.down = down
        toUpstream.moveAll(to: up.prefix)
        toClient.moveAll(to: down.prefix)
        guard up.attach(owner: self), down.attach(owner: self) else { close(); return nil }
    }

    deinit { close() }

    /// Starts relaying; the first bytes move in a callback later in this
    /// loop pass (the write events' activations), not inside the caller.
    func start() {
        up.activate()
        down.activate()
        idleTimer = Timer(loop: loop) { [unowned self] in self.idleTimerFired() }
        idleTimer?.schedule(after: idle)
    }

    /// Closes both sockets and pipes; the end is not reported. Idempotent.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        onEnd = nil
        idleTimer?.cancel()
        idleTimer = nil
        up.close()
        down.close()
        // Each socket is the source of one direction: closing both sources closes both.
        up.closeSource()
        down.closeSource()
    }

    private func end(_ ending: Ending) {
        let onEnd = self.onEnd
        if case .failed = ending {
            // Each socket is the source of one direction.
            SocketOptions.resetOnClose(up.source)
            SocketOptions.resetOnClose(down.source)
        }
        close()
        onEnd?(ending)
    }

    private func idleTimerFired() {
        let quiet = ContinuousClock.now - lastActivity
        if quiet >= idle { return end(.idle) }
        idleTimer?.schedule(after: idle - quiet)
    }

    /// One direction's socket became ready: move what can move.
    fileprivate func pump(_ direction: Direction) {
        guard !isClosed else { return }
        switch direction.pump() {
        case let .failed(detail):
            return end(.failed(detail))
        case let .moved(count):
            if count > 0 {
                lastActivity = .now
                if direction === up { bytesUp += count } else { bytesDown += count }
            }
        }
        if up.isFinished && down.isFinished { end(.completed) }
    }
}

/// One way of a `SplicedTunnel`: source socket → pipe → destination socket,
/// after a prefix buffer. Owns the pipe and its two events (reading the
/// source, writing the destination); the sockets belong to the tunnel.
private final class Direction {
    enum Outcome { case moved(Int), failed(String) }

    let source: Int32
    let destination: Int32
    let prefix: EventBuffer
    private var pipeRead: Int32 = -1
    private var pipeWrite: Int32 = -1
    private var inPipe = 0
    private var sourceEnded = false
    private(set) var isFinished = false
    private let loop: EventLoop
    private var readEvent: OpaquePointer?
    private var writeEvent: OpaquePointer?
    private var readArmed = false
    private var writeArmed = false
    private unowned var owner: SplicedTunnel?

    /// As much as one splice into an empty pipe takes (a default pipe holds 16 pages).
    private static let chunk = 64 * 1024
    /// The most one callback moves before yielding to the loop.
    private static let budget = 1024 * 1024

    init?(loop: EventLoop, source: Int32, destination: Int32) {
        self.loop = loop
        self.source = source
        self.destination = destination
        guard let buffer = evbuffer_new() else { return nil }
        prefix = EventBuffer(pointer: buffer)
        var ends: (Int32, Int32) = (-1, -1)
        let made = withUnsafeMutableBytes(of: &ends) {
            shim_pipe2_nonblocking($0.baseAddress!.assumingMemoryBound(to: Int32.self))
        }
        guard made == 0 else { evbuffer_free(buffer); return nil }
        (pipeRead, pipeWrite) = ends
    }

    deinit {
        close()
        evbuffer_free(prefix.pointer)
    }

    func attach(owner: SplicedTunnel) -> Bool {
        self.owner = owner
        // Context: unretained self; `close` frees both events before self goes away.
        let context = Unmanaged.passUnretained(self).toOpaque()
        readEvent = event_new(loop.base, source, EventFlags.persistentRead, Direction.trampoline, context)
        writeEvent = event_new(loop.base, destination, EventFlags.persistentWrite, Direction.trampoline, context)
        return readEvent != nil && writeEvent != nil
    }

    /// Runs the first pump from the loop (never inside the caller).
    func activate() {
        guard let writeEvent else { return }
        event_active(writeEvent, EventFlags.activeWrite, 0)
    }

    func close() {
        if let readEvent { event_free(readEvent) }
        if let writeEvent { event_free(writeEvent) }
        readEvent = nil
        writeEvent = nil
        readArmed = false
        writeArmed = false
        if pipeRead >= 0 { Glibc.close(pipeRead) }
        if pipeWrite >= 0 { Glibc.close(pipeWrite) }
        pipeRead = -1
        pipeWrite = -1
    }

    func closeSource() { Glibc.close(source) }

    /// Moves bytes until a socket would block: prefix, then pipe → destination,
    /// then (pipe empty) source → pipe. Arms the event it waits on.
    func pump() -> Outcome {
        var moved = 0
        var waitsRead = false
        var waitsWrite = false
        while !isFinished {
            if moved >= Self.budget {
                // Fairness: other connections on this loop get their turn. The
                // level-triggered event that fits where this stops fires again.
                if inPipe > 0 || !prefix.isEmpty { waitsWrite = true } else { waitsRead = true }
                break
            }
            if !prefix.isEmpty {
                let written = evbuffer_write(prefix.pointer, destination)
                if written > 0 { moved += Int(written); continue }
                if Self.wouldBlock(Int(written)) { waitsWrite = true; break }
                return .failed("write: \(String(cString: strerror(errno)))")
            }
            if inPipe > 0 {
                let written = shim_splice(pipeRead, destination, inPipe)
                if written > 0 { inPipe -= written; moved += written; continue }
                if Self.wouldBlock(written) { waitsWrite = true; break }
                return .failed("write: \(String(cString: strerror(errno)))")
            }
            if sourceEnded {
                // Passes the end on: the destination reads end of stream, and may still answer.
                _ = shutdown(destination, Int32(SHUT_WR))
                isFinished = true
                break
            }
            let read = shim_splice(source, pipeWrite, Self.chunk)
            if read > 0 { inPipe = read; continue }
            if read == 0 { sourceEnded = true; continue }
            if Self.wouldBlock(read) { waitsRead = true; break }
            return .failed("read: \(String(cString: strerror(errno)))")
        }
        setArmed(read: waitsRead, write: waitsWrite)
        return .moved(moved)
    }

    private static func wouldBlock(_ result: Int) -> Bool {
        result < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
    }

    /// Adds or removes each event only when that interest changes.
    private func setArmed(read: Bool, write: Bool) {
        if read != readArmed {
            if read { event_add(readEvent, nil) } else { event_del(readEvent) }
            readArmed = read
        }
        if write != writeArmed {
            if write { event_add(writeEvent, nil) } else { event_del(writeEvent) }
            writeArmed = write
        }
    }

    private static let trampoline: event_callback_fn = { _, _, context in
        guard let context else { return }
        let direction = Unmanaged<Direction>.fromOpaque(context).takeUnretainedValue()
        // The owner may close (and release) the tunnel inside: both live until this returns.
        guard let owner = direction.owner else { return }
        withExtendedLifetime((direction, owner)) { owner.pump(direction) }
    }
}
