import Testing

/// Every suite that drives `SmugglingBed`, nested here so that they run one
/// at a time and their cases in order (`.serialized` applies to nested
/// suites): each case relies on which pooled upstream connection the previous
/// one left, and on nothing else using the bed meanwhile.
@Suite("Request smuggling and framing desync (one shared origin, serialized)", .serialized)
enum DesyncSuites {}
