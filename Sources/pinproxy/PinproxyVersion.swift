/// The release this binary was built from.
enum PinproxyVersion {
    static let string = "0.1.0"
}
