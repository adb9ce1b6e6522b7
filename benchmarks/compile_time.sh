#!/usr/bin/env bash
# Cold compile time per example, parse -> cubin, for sm_80 and sm_90a.
#
# For each example (the first case of each file in examples/cases.txt, plus
# the 4096^3 GEMM at 128x128x32), times `tilec compile --local` end to end (a
# fresh process: frontend, inference, emission, NVRTC, artifact files, no
# cache) and, as the baseline, nvcc compiling the very source tilec emitted to
# a cubin for the same architecture. Prints one table row per example and
# target with the ratio tilec / nvcc. Each figure is the median of RUNS runs.
#
# Usage: benchmarks/compile_time.sh [BUILD_DIR] [RUNS]      (default: build 3)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-3}
tilec="$build/client/tilec"
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
[[ -x $tilec ]] || { echo "compile_time: $tilec is not built" >&2; exit 1; }
[[ -x $nvcc ]] || { echo "compile_time: $nvcc not found" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-ct.XXXXXX")
trap 'rm -rf "$work"' EXIT

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# case lines: name file fn bindings...
cases=$(awk '!/^#/ && NF >= 3 && !seen[$2]++' examples/cases.txt)
cases+=$'\n'"gemm_4096 gemm.py matmul M=4096 N=4096 K=4096 block_M=128 block_N=128 block_K=32 num_stages=3"

printf '%-28s %-7s %10s %10s %7s\n' example target "tilec ms" "nvcc ms" ratio
while read -r name file fn rest; do
  [[ -n $name ]] || continue
  defines=()
  for kv in $rest; do defines+=(-D "$kv"); done
  for target in sm_80 sm_90a; do
    out="$work/$name-$target"
    t_tilec=()
    for _ in $(seq "$runs"); do
      rm -rf "$out"
      t0=$(now_ms)
      "$tilec" compile "examples/$file" --fn "$fn" "${defines[@]}" --target "$target" --local \
        -o "$out" >/dev/null
      t_tilec+=($(( $(now_ms) - t0 )))
    done
    src=$(ls "$out"/*.cu)
    t_nvcc=()
    for _ in $(seq "$runs"); do
      t0=$(now_ms)
      "$nvcc" -cubin -std=c++20 -arch="$target" -Icompiler/device/cuda -Icompiler/device/common \
        -o "$work/nvcc.cubin" "$src" 2>>"$work/nvcc.log"
      t_nvcc+=($(( $(now_ms) - t0 )))
    done
    a=$(printf '%s\n' "${t_tilec[@]}" | median)
    b=$(printf '%s\n' "${t_nvcc[@]}" | median)
    printf '%-28s %-7s %10d %10d %7.2f\n' "$name" "$target" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {print a / b}')"
  done
done <<< "$cases"
