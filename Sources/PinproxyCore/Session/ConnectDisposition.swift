/// What a CONNECT becomes (SPEC §3.1): a host a rule pins is intercepted (its
/// upstream verified before the `200`, the client's TLS terminated with a
/// certificate of the local CA); a `disable` rule's host, or an unlisted host
/// under `default_policy: "default"`, is tunnelled blind; anything else is
/// refused with a reason.
public enum ConnectDisposition: Sendable, Hashable {
    case intercept(rule: String)
    case tunnel(rule: String)
    case refuse(CloseReason.Cause)
}
