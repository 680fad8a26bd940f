internal import CLibevent

/// Operations on libevent `evbuffer`s that the proxy needs. Payload moves
/// between buffers by reference (`evbuffer_remove_buffer`), never through Swift.
enum ByteBuffer {
    static func length(_ buffer: OpaquePointer) -> Int { evbuffer_get_length(buffer) }

    /// Makes the first `count` bytes contiguous and lends them to `body`.
    /// Only ever used on head and framing regions, which are bounded.
    static func withContiguousPrefix<Result>(_ buffer: OpaquePointer, count: Int,
                                             _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let available = min(count, evbuffer_get_length(buffer))
        guard available > 0, let pointer = evbuffer_pullup(buffer, available) else {
            return body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return body(UnsafeRawBufferPointer(start: pointer, count: available))
    }

    /// Copies up to `count` bytes starting `offset` bytes into `buffer`
    /// (which keeps them) and lends the copy to `body`: for reading framing
    /// lines ahead of what has been relayed, without moving or flattening the
    /// payload around them. Bounded by the caller to control-line sizes.
    static func withCopy<Result>(_ buffer: OpaquePointer, from offset: Int, count: Int,
                                 _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let available = min(count, evbuffer_get_length(buffer) - min(offset, evbuffer_get_length(buffer)))
        var position = evbuffer_ptr()
        guard available > 0, evbuffer_ptr_set(buffer, &position, offset, EVBUFFER_PTR_SET) == 0 else {
            return body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return withUnsafeTemporaryAllocation(byteCount: available, alignment: 1) { scratch in
            let copied = evbuffer_copyout_from(buffer, &position, scratch.baseAddress, available)
            return body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(scratch)[..<max(0, copied)]))
        }
    }

    static func drain(_ buffer: OpaquePointer, count: Int) { evbuffer_drain(buffer, count) }

    static func append(_ buffer: OpaquePointer, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { _ = evbuffer_add(buffer, $0.baseAddress, $0.count) }
    }

    /// Moves up to `count` bytes from `source` to `destination` without copying
    /// payload; returns how many moved.
    @discardableResult
    static func move(from source: OpaquePointer, to destination: OpaquePointer, count: Int) -> Int {
        let moved = evbuffer_remove_buffer(source, destination, count)
        return moved < 0 ? 0 : Int(moved)
    }

    /// Moves everything.
    static func moveAll(from source: OpaquePointer, to destination: OpaquePointer) {
        evbuffer_add_buffer(destination, source)
    }
}
