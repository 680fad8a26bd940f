#!/usr/bin/env bash
# make fuzz: build the libFuzzer harnesses (Fuzz/Package.swift) with
# -sanitize=fuzzer,address and run each one for SECONDS (default 60, at most
# 3600), one at a time, then print executions and coverage per harness.
# Exits non-zero when any harness crashes, leaks, times out or breaks an
# invariant; the input that did it is kept under Fuzz/.build/artifacts/.
#
#   Fuzz/run.sh [SECONDS_PER_HARNESS]
#   FUZZ_HARNESSES="FuzzPin FuzzHostMatcher" Fuzz/run.sh 30
#   Fuzz/run.sh 1800          # the issue-7 goal: 10M executions or 30 minutes each
set -euo pipefail

cd "$(dirname "$0")"
SECONDS_PER_HARNESS="${1:-60}"
if ! [[ "$SECONDS_PER_HARNESS" =~ ^[0-9]+$ ]] || [ "$SECONDS_PER_HARNESS" -lt 1 ] || [ "$SECONDS_PER_HARNESS" -gt 3600 ]; then
  echo "usage: Fuzz/run.sh [SECONDS_PER_HARNESS (1-3600, default 60)]" >&2
  exit 2
fi
HARNESSES="${FUZZ_HARNESSES:-FuzzRequestHead FuzzResponseHead FuzzConfiguration FuzzPin FuzzHostMatcher FuzzViolationLogLine}"
# A harness also stops after FUZZ_RUNS executions (default 10 million, the
# issue-7 goal), so `Fuzz/run.sh 1800` runs each to 10M executions or 30 minutes.
RUNS="${FUZZ_RUNS:-10000000}"
if ! [[ "$RUNS" =~ ^[0-9]+$ ]]; then echo "fuzz: FUZZ_RUNS must be a number" >&2; exit 2; fi

# The Swift toolchain ships libFuzzer and the ASan runtime (compiler-rt) in
# usr/lib/clang/<v>/lib/linux; Debian's libclang-rt-14-dev is for Debian's
# clang and is not needed, nor found, by swiftc. Fail early and say so.
toolchain="$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")"
if ! ls "$toolchain"/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
  echo "fuzz: this Swift toolchain ($toolchain) has no libFuzzer runtime (lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a);" >&2
  echo "fuzz: install the swift.org toolchain for Linux, which includes it" >&2
  exit 3
fi

echo "fuzz: building the harnesses (release, -sanitize=fuzzer,address)"
swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library 2>&1 \
  | grep -v "Cannot export local symbol '__asan_extra_spill_area'" || true
bin="$(swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --show-bin-path)"

dictionary() {
  case "$1" in
    FuzzRequestHead|FuzzResponseHead) echo Dictionaries/http.dict ;;
    FuzzConfiguration) echo Dictionaries/config.dict ;;
    FuzzPin) echo Dictionaries/pin.dict ;;
    FuzzHostMatcher) echo Dictionaries/host.dict ;;
    FuzzViolationLogLine) echo Dictionaries/log.dict ;;
  esac
}

# Swift's crash backtracer would race ASan's report for the same abort.
export SWIFT_BACKTRACE=enable=no
status=0
rows=()
for harness in $HARNESSES; do
  [ -x "$bin/$harness" ] || { echo "fuzz: $bin/$harness was not built" >&2; exit 3; }
  # New inputs go to a scratch corpus; the checked-in seeds are only read.
  work=".build/corpus/$harness"; artifacts=".build/artifacts/$harness/"; log=".build/logs/$harness.log"
  mkdir -p "$work" "$artifacts" "$(dirname "$log")"
  echo "fuzz: $harness for ${SECONDS_PER_HARNESS}s (log: Fuzz/$log)"
  set +e
  # The outer timeout is a backstop in case libFuzzer itself hangs.
  timeout --kill-after=30 $((SECONDS_PER_HARNESS + 120)) "$bin/$harness" \
    -max_total_time="$SECONDS_PER_HARNESS" -runs="$RUNS" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -dict="$(dictionary "$harness")" -artifact_prefix="$artifacts" \
    "$work" "Corpus/$harness" >"$log" 2>&1
  rc=$?
  set -e
  execs="$(grep -a '^stat::number_of_executed_units:' "$log" | awk '{print $2}' | tail -1 || true)"
  final="$(grep -aE '^#[0-9]+[[:space:]]+(DONE|INITED|NEW|REDUCE|pulse)' "$log" | tail -1 || true)"
  cov="$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$final")"
  ft="$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$final")"
  corp="$(sed -nE 's/.* corp: ([0-9]+)\/.*/\1/p' <<<"$final")"
  verdict=clean
  if [ "$rc" -ne 0 ]; then
    verdict="FAILED rc=$rc"
    status=1
    grep -aE 'invariant failed|ERROR: |SUMMARY: |Test unit written' "$log" | head -5 >&2 || true
  fi
  rows+=("$(printf '%-18s %12s %6s %7s %7s  %s' "$harness" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$verdict")")
done

echo
printf '%-18s %12s %6s %7s %7s  %s\n' harness executions cov ft corpus result
for row in "${rows[@]}"; do echo "$row"; done
exit "$status"
