#!/usr/bin/env bash
# Runs one test command (`swift test …`) and, when it fails, repeats what
# failed as its last lines. CI keeps only the tail of a run, and Swift Testing
# reports a failure where it happens, hundreds of lines above the summary:
# without this, a red run says "1 issue" and not which.
set -uo pipefail
log=$(mktemp "${TMPDIR:-/tmp}/pinproxy-tests.XXXXXX")
trap 'rm -f "$log"' EXIT

"$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] && exit 0

echo
echo "==== ${*:1:3} failed (exit $status); what failed, repeated from above:"
# Swift Testing marks an issue and a failed test with ✘; XCTest, the runner
# and the sanitizers say error:, Fatal error, or ==PID==ERROR.
failures=$(grep -E '✘|error:|Fatal error|==[0-9]+==ERROR|SUMMARY: [A-Za-z]+Sanitizer' "$log" \
           | grep -v '^✘ Test run with' | cut -c1-600)
if [ -n "$failures" ]; then
    printf '%s\n' "$failures" | tail -n 60
else
    # A crash leaves no verdict: the tests that started and never finished are the suspects.
    echo "(no failure line: the runner died; the last tests started were)"
    grep -E '^◇ Test .* started\.$' "$log" | tail -n 8
fi
echo "==== end of repeated failures"
exit "$status"
