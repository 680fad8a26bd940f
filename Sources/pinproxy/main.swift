import Foundation
import PinproxyCore
import PinproxyRuntime

// Thin entry point: parse the command line, hand over to one command.
let invocation: Invocation
do {
    invocation = try Invocation(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("pinproxy: \(error)\n".utf8))
    exit(2)
}
if invocation.showHelp {
    print(Invocation.help)
    exit(0)
}
if invocation.showVersion {
    print("pinproxy \(PinproxyVersion.string) (\(RuntimeVersion.openSSL), libevent \(RuntimeVersion.libevent))")
    exit(0)
}
switch invocation.command {
case .run:
    exit(RunCommand.execute(invocation))
case .check:
    exit(CheckCommand.execute(invocation))
case .pins, .probe, .tail:
    FileHandle.standardError.write(Data("pinproxy: \(invocation.command.rawValue) is not available in this build\n".utf8))
    exit(2)
}
