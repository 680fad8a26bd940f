-- wrk's summary for bench/tail.sh: one line of key=value fields (latencies in ms).
done = function(summary, latency, requests)
  io.write(string.format(
    "TAIL requests=%d seconds=%.3f errors=%d p50=%.3f p90=%.3f p99=%.3f p999=%.3f max=%.3f mean=%.3f sd=%.3f\n",
    summary.requests, summary.duration / 1e6,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    latency:percentile(99.9) / 1000, latency.max / 1000, latency.mean / 1000, latency.stdev / 1000))
end
