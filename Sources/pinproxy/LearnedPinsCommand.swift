import Foundation
import PinproxyCore
import PinproxyRuntime

/// `pinproxy pins --learned [--config FILE]` (SPEC §2.1): the pins rules with
/// `"pins": "learn"` learned, as a JSON5 configuration whose `hosts` entries
/// can be pasted over the learning rules to make them permanent. The file is
/// the configuration's `learned-pins.json` (in `$STATE_DIRECTORY`, else the
/// working directory), read with the daemon's checks; each entry takes over
/// its rule's other settings from the configuration.
enum LearnedPinsCommand {
    static func execute(_ invocation: Invocation) -> Int32 {
        guard let configuration = ConfigurationSource.load(invocation) else { return 1 }
        let file = LearnedPinFile(path: configuration.learnedPinsPath)
        let document: LearnedPinsDocument
        do {
            document = try file.read()
        } catch {
            Console.error("pins: \(error)")
            return 1
        }
        // The text ends with its own newline.
        Console.print(String(LearnedHostsSection.text(document, file: file.path, rules: configuration.policies.rules).dropLast()))
        return 0
    }
}
