internal import CLibevent

/// One libevent `evbuffer`, borrowed: the stream that made it frees it.
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

    /// Moves everything to `destination`.
    func moveAll(to destination: EventBuffer) {
        evbuffer_add_buffer(destination.pointer, pointer)
    }
}
