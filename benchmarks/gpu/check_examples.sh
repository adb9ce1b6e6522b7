#!/usr/bin/env bash
# Every case of examples/cases.txt compiled by tilec, run on a device through
# the runtime and checked against the reference interpreter (`tilec bench`,
# random inputs from the seed, the cases' ragged shapes included):
#
#   benchmarks/gpu/check_examples.sh [DEVICE] [SEED]     (defaults: cuda:0, random)
#
# TILEC_BUILD_DIR (default build) holds client/tilec; JOBS (default 4) cases
# run at once. Prints one line per case (ok, MISMATCH with the failing
# tensors, or ERROR with the message's last line) and a summary; the exit
# status is 1 when any case is not ok. On the emulator (DEVICE=emulator) it is
# the CI check of the emitted code; on a GPU it is the same check on the
# hardware.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=${TILEC_REPO:-$(cd "$here/../.." && pwd)}
device=${1:-cuda:0}
seed=${2:-$((RANDOM * 32768 + RANDOM))}
build=${TILEC_BUILD_DIR:-$repo/build}
cli=$build/client/tilec
jobs=${JOBS:-4}
[[ -x $cli ]] || { echo "check_examples.sh: $cli is missing (TILEC_BUILD_DIR)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-check-examples.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "check_examples.sh: device $device, seed $seed, $(cat "$build/../VERSION" 2>/dev/null || git -C "$repo" rev-parse --short HEAD 2>/dev/null)"

one() {  # NAME FILE FN BINDINGS...
  local name=$1 file=$2 fn=$3; shift 3
  local args=()
  for b in "$@"; do args+=(-D "$b"); done
  "$cli" bench "$repo/examples/$file" --fn "$fn" "${args[@]}" --device "$device" \
    --seed "$seed" --warmup 1 --iters 3 >"$work/$name.out" 2>"$work/$name.err"
  echo $? >"$work/$name.rc"
}
export -f one
export cli repo device seed work

grep -v '^\s*#' "$repo/examples/cases.txt" | grep -v '^\s*$' |
  xargs -P "$jobs" -L 1 bash -c 'one "$@"' _

names=$(grep -v '^\s*#' "$repo/examples/cases.txt" | grep -v '^\s*$' | awk '{print $1}')
ok=0 bad=0
for n in $names; do
  rc=$(cat "$work/$n.rc" 2>/dev/null || echo missing)
  case $rc in
    0) ok=$((ok + 1)); printf '%-32s ok   %s\n' "$n" "$(grep -m1 'median' "$work/$n.out")" ;;
    3) bad=$((bad + 1)); printf '%-32s MISMATCH\n' "$n"; grep '^check' "$work/$n.out" | grep -v ': ok:' | sed 's/^/    /' | head -8 ;;
    *) bad=$((bad + 1)); printf '%-32s ERROR (exit %s): %s\n' "$n" "$rc" "$(tail -1 "$work/$n.err")" ;;
  esac
done
echo "check_examples.sh: $ok ok, $bad not ok, on $device (seed $seed)"
[[ $bad -eq 0 ]]
