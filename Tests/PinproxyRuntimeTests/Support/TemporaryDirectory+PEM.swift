import Foundation
@testable import PinproxyRuntime

extension TemporaryDirectory {
    /// Writes `certificates` as one PEM file with a fresh name and returns its path.
    func pemFile(_ certificates: [X509Certificate]) throws -> String {
        try write(certificates.map(TestPKI.pem).joined(), to: "certs-\(UUID().uuidString).pem")
    }
}
