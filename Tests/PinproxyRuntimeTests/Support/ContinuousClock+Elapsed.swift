extension ContinuousClock.Instant {
    /// Seconds from this instant until now, for bounds on how long an answer took.
    var secondsElapsed: Double {
        let elapsed = ContinuousClock.now - self
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
