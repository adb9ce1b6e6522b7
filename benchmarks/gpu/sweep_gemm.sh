#!/usr/bin/env bash
# GEMM tile configurations on one device, each compiled by tilec, checked
# against the interpreter (at a small size) and timed at M = N = K = SIZE
# with `tilec bench` (runtime device events, L2 flushed, median):
#
#   benchmarks/gpu/sweep_gemm.sh DEVICE SIZE DTYPE "BM BN BK STAGES THREADS" ...
#
# Prints one line per configuration: the tiles, the median time and TFLOP/s.
set -uo pipefail
device=${1:?usage: sweep_gemm.sh DEVICE SIZE DTYPE CONFIG...}
size=${2:?}
dtype=${3:?}
shift 3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cli=${TILEC_BUILD_DIR:-$root/build}/client/tilec
for cfg in "$@"; do
  read -r bm bn bk st th <<<"$cfg"
  common=(-D block_M="$bm" -D block_N="$bn" -D block_K="$bk" -D num_stages="$st" -D threads="$th"
          -D dtype="$dtype" -D accum_dtype=float32 -D transpose_A=False -D transpose_B=False
          -D enable_rasterization=True --device "$device")
  # Checked at a size the interpreter runs quickly, timed at SIZE unchecked.
  check=$("$cli" bench "$root/examples/gemm.py" --fn matmul -D M=256 -D N=512 -D K=384 \
          "${common[@]}" --iters 1 2>&1 | grep -c "disagrees")
  line=$("$cli" bench "$root/examples/gemm.py" --fn matmul -D M="$size" -D N="$size" -D K="$size" \
         "${common[@]}" --no-check --iters 20 2>&1 | grep "device time")
  ms=$(sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' <<<"$line")
  tflops=$(awk -v s="$size" -v t="$ms" 'BEGIN { if (t > 0) printf "%.1f", 2 * s * s * s / (t * 1e-3) / 1e12 }')
  echo "$bm x $bn x $bk, $st stages, $th threads: ${ms:-?} ms, ${tflops:-?} TFLOP/s, check $([[ $check == 0 ]] && echo ok || echo MISMATCH)"
done
