import Foundation
import PinproxyCore
import PinproxyRuntime

// Thin entry point: parse the command line, hand over to one command.
let invocation: Invocation
do {
    invocation = try Invocation(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    Console.error("pinproxy: \(error)")
    exit(2)
}
if invocation.showHelp {
    Console.print(invocation.namesCommand ? CommandHelp.text(for: invocation.command) : Invocation.help)
    exit(0)
}
if invocation.showVersion {
    Console.print("pinproxy \(PinproxyVersion.string) (\(RuntimeVersion.openSSL), libevent \(RuntimeVersion.libevent))")
    exit(0)
}
switch invocation.command {
case .run:
    exit(RunCommand.execute(invocation))
case .check:
    exit(CheckCommand.execute(invocation))
case .pins:
    exit(PinsCommand.execute(invocation))
case .probe:
    exit(ProbeCommand.execute(invocation))
case .tail:
    exit(TailCommand.execute(invocation))
case .ca:
    exit(CACommand.execute(invocation))
case .status:
    exit(StatusCommand.execute(invocation))
}
