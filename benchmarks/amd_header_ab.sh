#!/usr/bin/env bash
# clang-19's time on one emitted AMD kernel with the device headers of an
# earlier revision against those of the working tree, runs interleaved so the
# two see the same machine. Prints each side's wall seconds and the medians.
#
# Usage: benchmarks/amd_header_ab.sh REV FILE.hip [ARCH] [RUNS]
#        (default gfx942, 9 runs; FILE.hip from `tilec compile --target gfx942 --local -o DIR`)
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$1 src=$2 arch=${3:-gfx942} runs=${4:-9}
old=$(mktemp -d "${TMPDIR:-/tmp}/tilec-hdr.XXXXXX")
trap 'rm -rf "$old"' EXIT
git archive "$rev" compiler/device | tar -x -C "$old"
flags=(-x hip --cuda-device-only --no-gpu-bundle-output -nogpulib -nogpuinc -O3 -std=c++20
       -mcode-object-version=5 -fuse-cuid=none --offload-arch="$arch")
now() { date +%s%N; }
declare -A t
for _ in $(seq "$runs"); do
  for side in "$rev" working; do
    root=$([[ $side == working ]] && echo . || echo "$old")
    s=$(now)
    clang++-19 "${flags[@]}" -I"$root/compiler/device/hip" -I"$root/compiler/device/common" \
      -o "$old/out.hsaco" "$src"
    t[$side]+=" $(awk -v d=$(( $(now) - s )) 'BEGIN {printf "%.3f", d / 1e9}')"
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for side in "$rev" working; do
  printf '%-10s median %s s  (%s )\n' "$side" "$(echo "${t[$side]}" | median)" "${t[$side]}"
done
