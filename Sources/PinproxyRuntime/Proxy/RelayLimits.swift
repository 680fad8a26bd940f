/// How much a relay buffers before back-pressure (SPEC §3: a slow reader
/// slows the writer, never unbounded buffering).
enum RelayLimits {
    /// Output held before the other side's reading pauses.
    static let highWatermark = 512 * 1024
    /// The output level at which the paused side resumes.
    static let lowWatermark = 128 * 1024
}
