#!/usr/bin/env bash
# The first device check of 2026-11-27 (atomics), run from the bundle's root
# (benchmarks/gpu/bundle.sh; copied to its root as session13.sh).
set -uo pipefail
cd "$(dirname "$0")"
source env.sh
out=${OUT:?}
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
step() {  # NAME LIMIT_S COMMAND
  local name=$1 lim=$2; shift 2
  local t0=$SECONDS
  echo "== $name"
  timeout "$lim" bash -c "$1"
  echo "== $name: exit $? in $((SECONDS - t0)) s"
}
dt=build/difftest/tilec-difftest
step examples 90 "JOBS=14 benchmarks/gpu/check_examples.sh cuda:0 2>&1 | tee $out/examples.txt"
step hang_seed 60 "$dt run --n 1 --seed 16000323 --jobs 1 --targets sm_90a --device cuda:0 --features 2>&1 | tee $out/difftest_16000323.txt"
step difftest 180 "$dt run --n 600 --seed 16000000 --jobs 15 --batch 4 --targets sm_90a --device cuda:0 --features 2>&1 | tee $out/difftest_16000000.txt"
step bench 120 "PYTHONUNBUFFERED=1 python3 benchmarks/gpu/run.py --device cuda:0 --iters 20 --out $out/gpu_results.json 2>&1 | tee $out/bench.txt"
