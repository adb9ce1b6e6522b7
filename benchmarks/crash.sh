#!/usr/bin/env bash
# Crash consistency, the long run: ROUNDS rounds (default 100) of tilecd
# killed with SIGKILL at a random moment during cold compiles on one cache
# directory and restarted, then every entry verified and served; and ROUNDS
# compile children killed mid-compile (tests/e2e/crash_e2e_test.cc; ctest
# runs a few rounds of each). Prints the seed and the figures; fails on any
# torn, corrupt or lost artifact, leftover temporary file or wrong status.
#
# Usage: benchmarks/crash.sh [ROUNDS] [BUILD_DIR]
#        TILEC_CRASH_SEED=123 benchmarks/crash.sh 100
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-100}
build=${2:-build}
test="$build/tests/e2e/crash_e2e_test"
[[ -x $test ]] || { echo "crash: $test is not built (cmake --build $build --target crash_e2e_test)" >&2; exit 1; }
start=$(date +%s)
TILEC_CRASH_ROUNDS=$rounds "$test" 2>/dev/null | grep -E '^(crash|compile children|\[  (PASSED|FAILED)|\[  FAILED|.*Failure)'
status=${PIPESTATUS[0]}
echo "crash: $rounds rounds each in $(( $(date +%s) - start )) s, exit $status"
exit "$status"
