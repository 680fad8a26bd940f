import Foundation
import PinproxyCore
@testable import PinproxyRuntime

/// An interception CA made at test time for `names`, in a directory of its
/// own (`ca/` under `scratch`, where the test may write files beside it).
struct TestCA {
    let scratch: TemporaryDirectory
    let directory: String
    let authority: InterceptionAuthority

    init(names: [String], at now: Date = Date()) throws {
        scratch = try TemporaryDirectory()
        directory = scratch.file("ca")
        authority = try InterceptionAuthority.create(in: directory, for: InterceptionScope(names: names), at: now)
    }

    func file(_ name: String) -> String { directory + "/" + name }
}
