#!/usr/bin/env bash
# Cold compile time per example, parse -> binary, for sm_80, sm_90a, gfx942
# and gfx90a.
#
# For each example (the first case of each file in examples/cases.txt, plus
# the 4096^3 GEMM at 128x128x32), times `tilec compile --local` end to end (a
# fresh process: frontend, inference, emission, NVRTC or clang-19, artifact
# files, no cache) and, as the baseline, the stand-alone compiler building
# the very source tilec emitted for the same architecture: nvcc to a cubin
# for NVIDIA, clang++-19 (HIP, device only, the flags tilec uses) to a code
# object for AMD. Prints one table row per example and target with the ratio
# tilec / baseline. Each figure is the median of RUNS runs.
#
# Usage: benchmarks/compile_time.sh [BUILD_DIR] [RUNS] [TARGETS]
#        (default: build 3 "sm_80 sm_90a gfx942 gfx90a")
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-3}
targets=${3:-"sm_80 sm_90a gfx942 gfx90a"}
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

printf '%-28s %-7s %10s %12s %7s\n' example target "tilec ms" "baseline ms" ratio
while read -r name file fn rest; do
  [[ -n $name ]] || continue
  defines=()
  for kv in $rest; do defines+=(-D "$kv"); done
  for target in $targets; do
    out="$work/$name-$target"
    # A program the target does not take (float8 on AMD) is a row saying so.
    if ! "$tilec" compile "examples/$file" --fn "$fn" "${defines[@]}" --target "$target" --local \
        -o "$out" >/dev/null 2>"$work/refusal"; then
      printf '%-28s %-7s %s\n' "$name" "$target" "refused: $(head -c 80 "$work/refusal")"
      continue
    fi
    t_tilec=()
    for _ in $(seq "$runs"); do
      rm -rf "$out"
      t0=$(now_ms)
      "$tilec" compile "examples/$file" --fn "$fn" "${defines[@]}" --target "$target" --local \
        -o "$out" >/dev/null
      t_tilec+=($(( $(now_ms) - t0 )))
    done
    t_nvcc=()
    for _ in $(seq "$runs"); do
      t0=$(now_ms)
      if [[ $target == gfx* ]]; then
        clang++-19 -x hip --cuda-device-only --no-gpu-bundle-output -nogpulib -nogpuinc -O3 \
          -std=c++20 -mcode-object-version=5 -fuse-cuid=none --offload-arch="$target" \
          -Icompiler/device/hip -Icompiler/device/common -o "$work/clang.hsaco" "$out"/*.hip \
          2>>"$work/clang.log"
      else
        "$nvcc" -cubin -std=c++20 -arch="$target" -Icompiler/device/cuda -Icompiler/device/common \
          -o "$work/nvcc.cubin" "$out"/*.cu 2>>"$work/nvcc.log"
      fi
      t_nvcc+=($(( $(now_ms) - t0 )))
    done
    a=$(printf '%s\n' "${t_tilec[@]}" | median)
    b=$(printf '%s\n' "${t_nvcc[@]}" | median)
    printf '%-28s %-7s %10d %12d %7.2f\n' "$name" "$target" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {print a / b}')"
  done
done <<< "$cases"
