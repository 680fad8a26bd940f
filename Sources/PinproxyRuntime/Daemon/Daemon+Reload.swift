import Foundation
import PinproxyCore

/// Reload (SIGHUP, SPEC §5): the new generation is built off the loops and
/// swapped in on each; a rejected one keeps the old, logging one line per problem.
extension Daemon {
    /// SIGHUP, on loop 0. The new generation is built on the
    /// `LowPriorityQueue`, off every loop and never ahead of one (parsing and
    /// preparing 100,000 rules takes seconds, and loop 0 serves traffic too),
    /// then swapped in on each loop. A SIGHUP that arrives during a build
    /// runs one more reload after it.
    func reload() {
        guard !stopping.load(ordering: .relaxed) else { return }
        guard !reloadInProgress else { reloadPending = true; return }
        shared.violations.flushSummaries(now: Date(), closingAll: true)
        shared.violations.reopen()
        shared.accessLog?.reopen()
        guard let path = options.configPath else {
            logger.log(.info, "reload", "running on built-in defaults: no file to reload (violation log reopened)")
            return
        }
        reloadInProgress = true
        notifier?.reloading()
        let environment = options.environment
        let nextGeneration = generation + 1
        let daemon = LoopBound(self)
        let loop = workers[0].loop
        // Read here, on loop 0: what an unchanged CA is taken over from.
        let previous = workers[0].configuration
        let metrics = shared.metrics
        let started = ContinuousClock.now
        LowPriorityQueue.shared.async {
            let outcome = Self.build(path: path, environment: environment, generation: nextGeneration, previous: previous,
                                     metrics: metrics)
            loop.execute { daemon.value.finishReload(outcome, startedAt: started) }
        }
    }

    /// What a reload's build produced: the new generation and its warnings, or every problem.
    enum ReloadOutcome: @unchecked Sendable {
        case built(ActiveConfiguration, warnings: [String])
        case rejected([String])
    }

    private static func build(path: String, environment: [String: String], generation: Int,
                              previous: ActiveConfiguration, metrics: MetricsRegistry) -> ReloadOutcome {
        var warnings: [String] = []
        let configuration: Configuration
        do {
            let (loaded, loadWarnings) = try ConfigurationLoader.load(path: path, environment: environment,
                                                                      cpuCount: ProcessInfo.processInfo.activeProcessorCount)
            warnings += loadWarnings.map { "\($0)" }
            configuration = loaded
        } catch {
            return .rejected(Self.lines(of: error))
        }
        do {
            let active = try ActiveConfiguration(configuration: configuration, generation: generation,
                                                 previous: previous, configPath: path, metrics: metrics)
            return .built(active, warnings: warnings + active.warnings(at: Date()))
        } catch {
            return .rejected(Self.lines(of: error))
        }
    }

    /// One log line per problem (SPEC §5): an error that lists several is split.
    private static func lines(of error: any Error) -> [String] {
        "\(error)".split(separator: "\n").map { String($0) }.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    }

    /// `startedAt`: when the SIGHUP was taken up, for the duration the
    /// activation line reports (`make bench`'s reload phase reads it).
    func finishReload(_ outcome: ReloadOutcome, startedAt: ContinuousClock.Instant) {
        reloadInProgress = false
        defer {
            notifier?.ready(status: statusLine())
            if reloadPending && !stopping.load(ordering: .relaxed) {
                reloadPending = false
                reload()
            }
        }
        guard !stopping.load(ordering: .relaxed) else { return }
        let active: ActiveConfiguration
        switch outcome {
        case let .rejected(problems):
            logger.log(.error, "reload", "rejected, keeping generation \(generation): \(problems.count) problem(s)")
            problems.forEach { logger.log(.error, "reload", $0) }
            return
        case let .built(built, warnings):
            warnings.forEach { logger.log(.warning, "config", $0) }
            active = built
        }
        let configuration = active.configuration
        if configuration.threads != workers.count {
            logger.log(.warning, "reload", "threads changed to \(configuration.threads); takes effect on restart")
        }
        let running = workers[0].configuration.configuration
        if configuration.admin != running.admin {
            logger.log(.warning, "reload", "admin changed; takes effect on restart")
        }
        if configuration.accessLogPath != running.accessLogPath {
            logger.log(.warning, "reload", "access_log changed; takes effect on restart")
        }
        generation = active.generation
        let previous = Set(workers[0].configuration.configuration.listeners)
        let (descriptors, failures) = sockets.update(for: configuration.listeners,
                                                     added: configuration.listeners.filter { !previous.contains($0) },
                                                     loops: workers.count)
        failures.forEach { logger.log(.error, "reload", "\($0)") }
        for (index, worker) in workers.enumerated() {
            if worker === workers[0] {
                worker.apply(active, descriptors: descriptors[index])
            } else {
                let bound = LoopBound(worker)
                let mine = descriptors[index]
                worker.loop.execute { bound.value.apply(active, descriptors: mine) }
            }
        }
        // Off the loops, at low priority: both go through every rule's counters (100,000 in a large configuration).
        // The drift the counters know of (the file's own findings were said above).
        let metrics = shared.metrics
        let driftLogger = logger
        LowPriorityQueue.shared.async {
            metrics.keepRules(of: active)
            Self.counterWarnings(of: active, at: Date()).forEach { driftLogger.log(.warning, "drift", $0) }
        }
        let took = (ContinuousClock.now - startedAt).components
        let seconds = Double(took.seconds) + Double(took.attoseconds) / 1e18
        logger.log(.info, "reload", "configuration generation \(generation) active (read, built and swapped in "
                   + String(format: "%.3f", seconds) + " s)")
    }
}
