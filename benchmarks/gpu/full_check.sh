#!/usr/bin/env bash
# Everything a GPU session checks, in one command, from a bundle (bundle.sh)
# or a checkout with a build:
#
#   benchmarks/gpu/full_check.sh OUT_DIR [DEVICE]        (default cuda:0)
#
# 1. nvidia-smi (the card as found; nothing is changed);
# 2. check_examples.sh: every examples/cases.txt case on the device against
#    the reference interpreter (OUT_DIR/examples.txt);
# 3. run.py: the benchmark beside torch and Triton (OUT_DIR/bench.txt,
#    OUT_DIR/gpu_results.json);
# 4. autotuning through a real tilecd and a tilec-worker on the device: the
#    top-8 GEMM configs of the device's profile measured, checked and ranked
#    (OUT_DIR/autotune.txt), then a compile of the unbound program that takes
#    the tuned config.
# 5. tilec-difftest on the device: DIFFTEST_N (default 500) generated programs
#    and their metamorphic variants compiled for sm_90a and run on the GPU
#    against the interpreter (OUT_DIR/difftest.txt).
# STEPS (default "examples bench autotune difftest") picks the steps.
# COMPILE_USER= (empty) runs tilecd's compile children as the calling user:
# needed as root when the build lies where user nobody cannot read it.
# Each step has a time limit (STEP_S, default 240 s) and runs even when an
# earlier one failed; the exit status is 1 when any step failed.
set -uo pipefail
out=${1:?usage: full_check.sh OUT_DIR [DEVICE]}
device=${2:-cuda:0}
gpu_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$gpu_dir/../.." && pwd)
if [[ -f $root/env.sh ]]; then source "$root/env.sh" || exit 1; fi
build=${TILEC_BUILD_DIR:-$root/build}
step_s=${STEP_S:-240}
mkdir -p "$out"
failed=0
step() {  # NAME COMMAND...
  local name=$1; shift
  local t0=$SECONDS
  echo "== $name"
  timeout "$step_s" "$@"
  local rc=$?
  echo "== $name: exit $rc in $((SECONDS - t0)) s"
  [[ $rc -eq 0 ]] || failed=1
}

command -v nvidia-smi >/dev/null && nvidia-smi | tee "$out/nvidia-smi.txt"
steps=" ${STEPS:-examples bench autotune difftest} "
want() { [[ $steps == *" $1 "* ]]; }
want examples && step examples bash -c "set -o pipefail; JOBS=${JOBS:-8} '$gpu_dir/check_examples.sh' '$device' | tee '$out/examples.txt'"
want bench && step bench bash -c "set -o pipefail; PYTHONUNBUFFERED=1 python3 '$gpu_dir/run.py' --device '$device' --iters ${ITERS:-20} --out '$out/gpu_results.json' 2>&1 | tee '$out/bench.txt'"

autotune() {
  local dir port
  dir=$(mktemp -d "${TMPDIR:-/tmp}/tilec-full-check.XXXXXX")
  "$build/server/tilecd" --cache_dir "$dir/cache" --host 127.0.0.1 --port 0 \
    --port_file "$dir/port" --metrics_port 0 \
    --compile_user "${COMPILE_USER-nobody}" >"$dir/tilecd.log" 2>&1 &
  local server=$!
  for _ in $(seq 50); do [[ -s $dir/port ]] && break; sleep 0.2; done
  port=$(cat "$dir/port")
  "$build/worker/tilec-worker" --server "127.0.0.1:$port" --device "$device" \
    --cache_dir "$dir/worker" >"$dir/worker.log" 2>&1 &
  local worker=$!
  sleep 2
  local profile shape=(-D M=${TUNE_M:-4096} -D N=${TUNE_N:-4096} -D K=${TUNE_K:-4096})
  profile=$(grep -o 'profile [a-z0-9_]*' "$dir/worker.log" | head -1 | cut -d' ' -f2)
  profile=${profile:-h100_sxm}
  local cli=$build/client/tilec rc=0
  "$cli" autotune "$root/examples/gemm.py" --fn matmul "${shape[@]}" -U num_stages -U threads \
    --target "$profile" --top 8 --server "127.0.0.1:$port" || rc=1
  "$cli" compile "$root/examples/gemm.py" --fn matmul "${shape[@]}" -U num_stages -U threads \
    --target sm_90a --profile "$profile" --server "127.0.0.1:$port" --out "$dir/artifact" || rc=1
  "$cli" stats --server "127.0.0.1:$port" || rc=1
  kill "$worker" 2>/dev/null; wait "$worker"
  kill "$server" 2>/dev/null; wait "$server"
  echo "-- tilecd log (tail)"; tail -5 "$dir/tilecd.log"
  echo "-- worker log (tail)"; tail -5 "$dir/worker.log"
  rm -rf "$dir"
  return $rc
}
export -f autotune
export build root device
want autotune && step autotune bash -c "set -o pipefail; autotune 2>&1 | tee '$out/autotune.txt'"
difftest=$build/tests/difftest/tilec-difftest
[[ -x $difftest ]] || difftest=$build/difftest/tilec-difftest  # in a bundle
difftest_seed=${DIFFTEST_SEED:-$((RANDOM * 32768 + RANDOM))}
want difftest && step difftest bash -c "set -o pipefail; '$difftest' run \
  --n ${DIFFTEST_N:-500} --seed $difftest_seed --jobs ${JOBS:-8} --batch 4 --targets sm_90a \
  --device '$device' --features 2>&1 | tee '$out/difftest.txt'"
exit $failed
