#!/usr/bin/env bash
# Two tilec bundles (benchmarks/gpu/bundle.sh, as .tar.gz) side by side on one
# GPU in one run: a GEMM tile sweep alternating old and new, then run.py with
# the old bundle and full_check.sh (examples, bench, autotune, difftest) with
# the new one:
#
#   benchmarks/gpu/ab_bundles.sh OLD.tar.gz NEW.tar.gz OUT_DIR
#
# OUT_DIR gets sweep_ab.txt, bench_old.txt, new_log.txt and the new bundle's
# new_{bench,autotune,difftest,examples}.txt and new_gpu_results.json.
set -u
old_tar=${1:?usage: ab_bundles.sh OLD.tar.gz NEW.tar.gz OUT_DIR}
new_tar=${2:?}
out=${3:?}
mkdir -p "$out"
b=$(mktemp -d "${TMPDIR:-/tmp}/tilec-ab.XXXXXX")
mkdir -p "$b/old" "$b/new"
tar xzf "$old_tar" -C "$b/old" && tar xzf "$new_tar" -C "$b/new" || exit 1
old=$(dirname "$b"/old/*/VERSION); new=$(dirname "$b"/new/*/VERSION)
cat "$new/VERSION" "$old/VERSION"
sweep() {  # BUNDLE SIZE CONFIG
  local d=$1 s=$2; shift 2
  (source "$d/env.sh" 2>/dev/null && "$d/benchmarks/gpu/sweep_gemm.sh" "${DEVICE:-cuda:0}" "$s" float16 "$@")
}
{
for cfg in "128 128 32 3 128" "128 128 64 3 128" "128 128 32 4 128" "64 128 64 4 128" "128 256 64 4 256"; do
  echo -n "old 4096: "; sweep "$old" 4096 "$cfg"; echo -n "new 4096: "; sweep "$new" 4096 "$cfg"
done
echo -n "old 8192: "; sweep "$old" 8192 "128 128 32 3 128"; echo -n "new 8192: "; sweep "$new" 8192 "128 128 32 3 128"
} 2>&1 | tee "$out/sweep_ab.txt"
(source "$old/env.sh" && cd "$old" && PYTHONUNBUFFERED=1 timeout 100 python3 benchmarks/gpu/run.py \
   --device "${DEVICE:-cuda:0}" --iters 20 --out "$b/old_results.json" >"$out/bench_old.txt" 2>&1)
echo "old bench: $?"
(cd "$new" && COMPILE_USER= STEPS="examples bench autotune difftest" STEP_S=100 JOBS=14 ITERS=20 \
   DIFFTEST_N=300 DIFFTEST_SEED=14000000 benchmarks/gpu/full_check.sh "$b/fc" "${DEVICE:-cuda:0}" \
   >"$out/new_log.txt" 2>&1)
echo "new full_check: $?"
for f in bench.txt autotune.txt difftest.txt examples.txt gpu_results.json; do
  cp "$b/fc/$f" "$out/new_$f"
done
grep -E "^== |ok, |match|Spearman|best" "$out/new_log.txt"
grep -E "^gemm|^flash|^gqa|^mla" "$out/bench_old.txt" "$out/new_bench.txt"
