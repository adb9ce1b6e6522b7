#!/usr/bin/env bash
# The README's first command, after the build: starts a local tilecd on
# loopback (a fresh cache), compiles the GEMM example for sm_90a and sm_80
# through it twice with the tilec CLI (the second time a cache hit), prints
# the summary and the server's stats, and stops the server.
#
# Usage: deploy/demo.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tilecd="$build/server/tilecd"
tilec="$build/client/tilec"
for b in "$tilecd" "$tilec"; do
  [[ -x $b ]] || { echo "demo: $b is not built; run cmake --build $build first" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-demo.XXXXXX")
pid=""
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

"$tilecd" --cache_dir="$work/cache" --host=127.0.0.1 --port=0 --port_file="$work/port" \
  --metrics_port=0 --metrics_port_file="$work/metrics_port" 2>"$work/tilecd.log" &
pid=$!
for _ in $(seq 300); do
  [[ -s $work/port ]] && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/tilecd.log" >&2; exit 1; }
  sleep 0.1
done
[[ -s $work/port ]] || { echo "demo: tilecd did not start" >&2; cat "$work/tilecd.log" >&2; exit 1; }
server="127.0.0.1:$(cat "$work/port")"
echo "tilecd listening on $server (metrics on 127.0.0.1:$(cat "$work/metrics_port"))"

gemm=(examples/gemm.py --fn matmul -D M=1024 -D N=1024 -D K=1024
      -D block_M=128 -D block_N=128 -D block_K=32 --target sm_90a --target sm_80)
mkdir -p "$work/out"
echo
echo "== compile 1: GEMM 1024^3 for sm_90a and sm_80 (cold)"
t0=$(date +%s%N)
"$tilec" compile "${gemm[@]}" --server "$server" --out "$work/out"
t1=$(date +%s%N)
echo
echo "== compile 2: the same request (served from the cache)"
"$tilec" compile "${gemm[@]}" --server "$server" | tee "$work/second.txt"
t2=$(date +%s%N)
hits=$(grep -c 'cache hit' "$work/second.txt" || true)
echo
echo "== artifacts"
for f in "$work"/out/*.cubin; do
  printf '%-22s %8d bytes\n' "$(basename "$f")" "$(stat -c %s "$f")"
done
echo
echo "== server stats"
"$tilec" stats --server "$server"
echo
echo "== summary: cold compile of 2 targets $(((t1 - t0) / 1000000)) ms;" \
  "repeat $(((t2 - t1) / 1000000)) ms with $hits/2 targets from the cache"
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=""
echo "tilecd stopped"
