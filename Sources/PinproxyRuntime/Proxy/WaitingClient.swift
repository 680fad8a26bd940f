import Foundation

/// An accepted client connection that has not sent a byte yet: its socket
/// waits as an `IdleSocket`, and this value remembers what the session will
/// need once the first bytes arrive (the request-header clock started at accept).
struct WaitingClient {
    let socket: IdleSocket
    let peer: SocketAddress
    let listener: ListenerContext
    /// When the request-header timeout runs out (it starts at accept).
    let headDeadline: ContinuousClock.Instant
}
