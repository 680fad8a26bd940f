internal import CLibevent
import Foundation

/// One libevent `evbuffer`, borrowed: whoever made it frees it (a stream
/// its two, a loop the one its new connections are first read into).
///
/// Payload moves between buffers by reference (`evbuffer_remove_buffer`),
/// never through Swift; Swift looks only at bounded head and framing regions
/// (`withContiguousPrefix`, `withCopy`).
struct EventBuffer {
    let pointer: OpaquePointer

    var count: Int { evbuffer_get_length(pointer) }
    var isEmpty: Bool { count == 0 }

    /// Makes the first `count` bytes contiguous and lends them to `body`.
    /// Only ever used on head and framing regions, which are bounded.
    func withContiguousPrefix<Result>(count: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let available = min(count, evbuffer_get_length(pointer))
        guard available > 0, let start = evbuffer_pullup(pointer, available) else {
            return body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return body(UnsafeRawBufferPointer(start: start, count: available))
    }

    /// Copies up to `count` bytes starting `offset` bytes in (the buffer keeps
    /// them) and lends the copy to `body`: for reading framing lines ahead of
    /// what has been relayed without moving or flattening the payload around
    /// them. Bounded by the caller to control-line sizes.
    func withCopy<Result>(from offset: Int, count: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let length = evbuffer_get_length(pointer)
        let available = min(count, length - min(offset, length))
        var position = evbuffer_ptr()
        guard available > 0, evbuffer_ptr_set(pointer, &position, offset, EVBUFFER_PTR_SET) == 0 else {
            return body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return withUnsafeTemporaryAllocation(byteCount: available, alignment: 1) { scratch in
            let copied = evbuffer_copyout_from(pointer, &position, scratch.baseAddress, available)
            return body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(scratch)[..<max(0, copied)]))
        }
    }

    func drain(_ count: Int) { evbuffer_drain(pointer, count) }

    func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { _ = evbuffer_add(pointer, $0.baseAddress, $0.count) }
    }

    /// Moves up to `count` bytes to `destination` without copying payload; returns how many moved.
    @discardableResult
    func move(to destination: EventBuffer, count: Int) -> Int {
        let moved = evbuffer_remove_buffer(pointer, destination.pointer, count)
        return moved < 0 ? 0 : Int(moved)
    }

    /// Reads from `descriptor` into up to two extents reserved at the end
    /// (one `readv`, at most `length` bytes) and commits what came: the
    /// kernel writes straight into the buffer. Returns read(2)'s result, with
    /// its errno kept; -1 also when libevent cannot reserve the space.
    func read(from descriptor: Int32, atMost length: Int) -> Int {
        var reserved = (iovec(), iovec())
        return withUnsafeMutablePointer(to: &reserved) {
            // evbuffer_iovec is struct iovec here (<event2/buffer.h>), so the reserved extents go straight to readv.
            $0.withMemoryRebound(to: iovec.self, capacity: 2) { vectors -> Int in
                let reservedCount = Int(evbuffer_reserve_space(pointer, length, vectors, 2))
                guard reservedCount > 0 else { return -1 }
                let read = Glibc.readv(descriptor, vectors, Int32(reservedCount))
                let saved = errno
                var left = max(read, 0)
                for index in 0..<reservedCount {
                    vectors[index].iov_len = min(vectors[index].iov_len, left)
                    left -= vectors[index].iov_len
                }
                evbuffer_commit_space(pointer, vectors, read > 0 ? Int32(reservedCount) : 0)
                errno = saved
                return read
            }
        }
    }

    /// Moves everything to `destination`.
    func moveAll(to destination: EventBuffer) {
        evbuffer_add_buffer(destination.pointer, pointer)
    }
}
