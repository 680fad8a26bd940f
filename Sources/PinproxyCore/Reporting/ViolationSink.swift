/// Where violation events go: the violation log file in the daemon, an
/// in-memory recorder in tests (`RecordingViolationSink`).
///
/// `record` is called on an event-loop thread right after a decision, before
/// the client is answered; implementations must be thread-safe and must not
/// throw: a sink that cannot write falls back (stderr, retry) on its own,
/// because the block happens regardless (SPEC §4).
public protocol ViolationSink: AnyObject, Sendable {
    func record(_ event: ViolationEvent)
}
