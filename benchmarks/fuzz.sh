#!/usr/bin/env bash
# Runs tilec's fuzz targets (tests/fuzz/) with libFuzzer, ASan and UBSan, and
# reports executions and findings (docs/security.md "Fuzzing"):
#
#   benchmarks/fuzz.sh [SECONDS_PER_TARGET] [TARGET ...]     (default 60, all eight)
#
# Builds build-fuzz/ with clang-19 (-DTILEC_FUZZ=ON) when it is missing, the
# seed corpora from examples/cases.txt with the ordinary build's fuzz_corpus
# (build/, built when missing) and artifact metadata from `tilec compile`,
# then runs each target for the given time on its own copy of the corpus
# (out/fuzz/corpus/<target>, kept between runs, so later runs start where
# earlier ones stopped). Crashes land in out/fuzz/crashes/<target>/; each
# one found becomes a file under tests/fuzz/regressions/<target>/, which
# ctest replays (fuzz_replay_<target>). Exit status 1 when any target found
# a crash.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(frontend wire npy artifact request code_object names staging)
out=$root/out/fuzz
jobs=${JOBS:-2}

if [[ ! -f $root/build-fuzz/build.ninja && ! -f $root/build-fuzz/Makefile ]]; then
  CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$root/build-fuzz" -G Ninja -DTILEC_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
fi
cmake --build "$root/build-fuzz" -j"$jobs" $(printf -- '--target fuzz_%s ' "${targets[@]}") || exit 1
cmake --build "$root/build" -j"$jobs" --target fuzz_corpus tilec || exit 1

seeds=$out/seeds
rm -rf "$seeds"
"$root/build/tests/fuzz/fuzz_corpus" "$seeds" || exit 1
mkdir -p "$seeds/artifact"
for c in "gemm.py matmul M=128 N=128 K=64 block_M=64 block_N=64 block_K=32" \
         "softmax.py softmax M=32 N=128 block_M=8 block_N=64" \
         "flash_attention.py flashattn batch=1 heads=2 seq_q=128 seq_kv=128 dim=64 is_causal=True block_M=64 block_N=64"; do
  read -r file fn rest <<<"$c"
  defs=()
  for b in $rest; do defs+=(-D "$b"); done
  for target in sm_80 sm_90a; do
    tmp=$(mktemp -d)
    if "$root/build/client/tilec" compile "$root/examples/$file" --fn "$fn" "${defs[@]}" \
         --target "$target" --local -o "$tmp" >/dev/null 2>&1; then
      for j in "$tmp"/*.json; do cp "$j" "$seeds/artifact/${fn}_${target}.json"; done
    fi
    rm -rf "$tmp"
  done
done

# AMD code objects: the ones committed as regressions (clang-19 output).
mkdir -p "$seeds/code_object"
cp "$root/tests/fuzz/regressions/code_object/"* "$seeds/code_object/"

status=0
total=0
printf '%-10s %14s %8s %9s\n' target executions crashes corpus
for t in "${targets[@]}"; do
  corpus=$out/corpus/$t
  crashes=$out/crashes/$t
  mkdir -p "$corpus" "$crashes"
  log=$out/$t.log
  "$root/build-fuzz/tests/fuzz/fuzz_$t" "$corpus" "$seeds/$t" -max_total_time="$seconds" \
    -print_final_stats=1 -artifact_prefix="$crashes/" -rss_limit_mb=4096 -timeout=20 \
    -fork="$jobs" -ignore_crashes=1 >"$log" 2>&1
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s += $2} END {print s + 0}')
  if [[ $execs == 0 ]]; then  # -fork mode: the parent's last status line counts them
    execs=$(grep -oE '#[0-9]+' "$log" | tail -1 | tr -d '#')
  fi
  found=$(find "$crashes" -type f | wc -l)
  total=$((total + ${execs:-0}))
  printf '%-10s %14s %8s %9s\n' "$t" "${execs:-?}" "$found" "$(find "$corpus" -type f | wc -l)"
  if [[ $found -gt 0 ]]; then
    status=1
    mkdir -p "$root/tests/fuzz/regressions/$t"
    cp "$crashes"/* "$root/tests/fuzz/regressions/$t/"
  fi
done
echo "total executions: $total in $seconds s per target ($(date -u +%FT%TZ), $(git -C "$root" rev-parse --short HEAD))"
exit $status
