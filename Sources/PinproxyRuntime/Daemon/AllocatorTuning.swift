internal import CGlibcMalloc

/// glibc allocator settings for a daemon whose heap churns per request.
///
/// glibc returns the top of a heap to the kernel as soon as more than
/// `M_TRIM_THRESHOLD` (128 KiB) of it is free. On the keep-alive path the
/// buffers of one exchange (TLS records, evbuffer chains) are freed at the top
/// of the heap and allocated again by the next, so with the default the heap
/// shrank and grew every few requests: a `brk` pair, TLB flushes and page
/// faults each time, about 2 µs of CPU per request (measured with `perf`,
/// keep-alive 100-byte GETs). Keeping up to 4 MiB of free heap per arena
/// removes that churn; `bench/run.sh --memory` stayed within its per-connection
/// goals with it.
enum AllocatorTuning {
    /// Free heap kept per arena before glibc trims it.
    static let trimThreshold: Int32 = 4 << 20

    /// Applies the settings unless the operator chose their own through
    /// glibc's environment variable (which glibc has already applied).
    static func apply(environment: [String: String]) {
        guard environment["MALLOC_TRIM_THRESHOLD_"] == nil else { return }
        _ = mallopt(M_TRIM_THRESHOLD, trimThreshold)
    }
}
