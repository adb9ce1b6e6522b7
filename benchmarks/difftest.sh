#!/usr/bin/env bash
# Differential testing throughput and outcomes: N random tile programs from
# SEED (seeds SEED .. SEED+N-1), each run on the interpreter and, on the SIMT
# emulator, for sm_80 and sm_90a plus a metamorphic variant (another thread
# count and pipeline depth) on one of them, on JOBS processes (default: every
# core). Prints programs per second, the count per outcome and the refusal
# histogram (docs/testing.md explains them); bugs are listed, and reduced to
# regression files under REDUCE_DIR when that is set.
#
# Usage: benchmarks/difftest.sh N SEED [BUILD_DIR]
#        JOBS=2 REDUCE_DIR=/tmp/repros benchmarks/difftest.sh 1000 1
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?usage: benchmarks/difftest.sh N SEED [BUILD_DIR]}
seed=${2:?usage: benchmarks/difftest.sh N SEED [BUILD_DIR]}
build=${3:-build}
jobs=${JOBS:-$(nproc)}
tool="$build/tests/difftest/tilec-difftest"
[[ -x $tool ]] || { echo "difftest: $tool is not built (cmake --build $build --target tilec-difftest)" >&2; exit 1; }
args=(run --n "$n" --seed "$seed" --jobs "$jobs" --features)
if [[ -n ${REDUCE_DIR:-} ]]; then
  mkdir -p "$REDUCE_DIR"
  args+=(--reduce "$REDUCE_DIR")
fi
exec "$tool" "${args[@]}"
