#!/usr/bin/env bash
# Load, idle and slow clients against one real tilecd, the long version
# (benchmarks/load.cc; ctest load_short runs 100 clients for 5 s): CLIENTS
# clients (default 1000) with a connection each, 5% cold compiles, for
# SECONDS (default 60), beside 200 idle or half-open connections and 50
# artifact streams never read; prints the answers by status, hit latency, a
# probe's slowest answer, and tilecd's RSS, descriptors and threads before,
# at the peak and 5 s after. Extra arguments after -- go to tilecd.
#
# Usage: benchmarks/load.sh [CLIENTS] [SECONDS] [BUILD_DIR] [-- tilecd flags]
set -euo pipefail
cd "$(dirname "$0")/.."
clients=${1:-1000}
seconds=${2:-60}
build=${3:-build}
shift $(( $# < 3 ? $# : 3 ))
tool="$build/benchmarks/tilec_load"
[[ -x $tool ]] || { echo "load: $tool is not built (cmake --build $build --target tilec_load)" >&2; exit 1; }
exec "$tool" --clients "$clients" --seconds "$seconds" --miss_percent 5 --hit_programs 16 \
  --idle 200 --stalled 50 --settle_s 5 --expect_clean "$@"
