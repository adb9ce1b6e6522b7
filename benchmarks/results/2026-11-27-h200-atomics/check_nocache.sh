#!/usr/bin/env bash
# The second device check of 2026-11-27: NVRTC --no-cache, from the bundle's root
# (copied there as session13b.sh).
set -uo pipefail
cd "$(dirname "$0")"
source env.sh
out=${OUT:?}
g=(examples/gemm.py --fn matmul -D M=4096 -D N=4096 -D K=4096 -D block_M=128 -D block_N=128 -D block_K=32
   -D dtype=float16 -D accum_dtype=float32 -D transpose_A=False -D transpose_B=False -D num_stages=3
   -D threads=128 -D enable_rasterization=True --target sm_90a --local)
for i in 1 2 3; do echo "== compile $i"; build/client/tilec compile "${g[@]}" -o /tmp/g$i 2>&1 | tail -2; done
cmp /tmp/g1/matmul.cubin /tmp/g3/matmul.cubin && echo "cubins 1 and 3 identical"
echo "== bench"
PYTHONUNBUFFERED=1 timeout 120 python3 benchmarks/gpu/run.py --device cuda:0 --iters 20 \
  --only gemm_f16_4096,gemm_f16_llm_up,gemm_f16_llm_down --out "$out/gpu_results_nocache.json" 2>&1 | tee "$out/bench_nocache.txt"
echo "== examples"
JOBS=14 timeout 90 benchmarks/gpu/check_examples.sh cuda:0 > "$out/examples_nocache.txt" 2>&1; echo "exit $?"; tail -1 "$out/examples_nocache.txt"
