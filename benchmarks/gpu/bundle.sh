#!/usr/bin/env bash
# Packs what the GPU benchmark needs into one folder (and a .tar.gz of it) for
# a GPU machine that has torch, triton and a CUDA toolkit but no package
# registry and no tilec build:
#
#   benchmarks/gpu/bundle.sh [OUT_DIR] [BUILD_DIR]     (defaults: out/gpu-bench, build)
#
# OUT_DIR/
#   env.sh                        sets LD_LIBRARY_PATH, TILEC_BUILD_DIR, PYTHONPATH
#   run.sh                        sources env.sh; runs benchmarks/gpu/run.py with its arguments
#   build/client/tilec            the CLI (stripped copy)
#   build/runtime/libtilec_runtime.so
#   build/server/tilecd, build/worker/tilec-worker   (when built: autotuning there)
#   build/difftest/tilec-difftest (when built: generated programs on the GPU)
#   lib/                          the shared libraries ldd lists for both that are
#                                 not part of glibc (gRPC, protobuf, absl, boost, ...)
#   lib/fallback/                 libstdc++, libgcc_s, OpenSSL, zlib: used by run.sh
#                                 only when the machine's own copies do not satisfy
#                                 the binaries (they would shadow the system's for
#                                 torch too)
#   python/tilec/                 the Python package
#   examples/                     the kernels and examples/cases.txt
#   benchmarks/gpu/               the harness
#   VERSION                       commit and date of the bundle
#
# NVRTC is not bundled: tilec loads it from the machine's CUDA toolkit
# ($CUDA_HOME, /usr/local/cuda; CUDA 12 or 13). The binaries need glibc >= 2.34.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$repo/out/gpu-bench}
build=${2:-$repo/build}
cli=$build/client/tilec
lib=$build/runtime/libtilec_runtime.so
services=()
for f in "$build/server/tilecd" "$build/worker/tilec-worker" "$build/tests/difftest/tilec-difftest"; do
  [[ -f $f ]] && services+=("$f")
done

for f in "$cli" "$lib"; do
  [[ -f $f ]] || { echo "bundle.sh: $f is missing: build tilec first (cmake --build $build)" >&2; exit 1; }
done

rm -rf "$out"
mkdir -p "$out/build/client" "$out/build/runtime" "$out/build/server" "$out/build/worker" \
         "$out/lib/fallback" "$out/python" "$out/benchmarks/gpu"

# Stripped copies: the debug info is most of the size.
install -m 755 "$cli" "$out/build/client/tilec"
install -m 755 "$lib" "$out/build/runtime/libtilec_runtime.so"
for f in "${services[@]}"; do
  install -D -m 755 "$f" "$out/build/$(basename "$(dirname "$f")")/$(basename "$f")"
done
if command -v strip >/dev/null; then
  strip --strip-unneeded "$out"/build/*/*
fi

# The non-glibc shared libraries of both binaries.
glibc='^(linux-vdso|ld-linux|libc|libm|libpthread|libdl|librt|libutil|libresolv|libmvec)\.so'
fallback='^(libstdc\+\+|libgcc_s|libssl|libcrypto|libz)\.so'
ldd "$cli" "$lib" "${services[@]}" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u |
while read -r name path; do
  if [[ $name =~ $glibc ]]; then
    continue
  elif [[ $name =~ $fallback ]]; then
    cp -L "$path" "$out/lib/fallback/$name"
  else
    cp -L "$path" "$out/lib/$name"
  fi
done
if ldd "$cli" "$lib" "${services[@]}" | grep -q "not found"; then
  echo "bundle.sh: ldd finds unresolved libraries here:" >&2
  ldd "$cli" "$lib" "${services[@]}" | grep "not found" >&2
  exit 1
fi

# The Python package, the examples and the harness.
cp -r "$repo/runtime/python/tilec" "$out/python/"
cp -r "$repo/examples" "$out/examples"
for f in run.py cases.py triton_kernels.py check_examples.sh full_check.sh sweep_gemm.sh README.md; do
  cp "$repo/benchmarks/gpu/$f" "$out/benchmarks/gpu/"
done
find "$out" -name __pycache__ -type d -prune -exec rm -rf {} +

commit=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
if [[ -n $(git -C "$repo" status --porcelain 2>/dev/null | head -1) ]]; then
  commit="$commit (with uncommitted changes)"
fi
echo "$commit, bundled $(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$out/VERSION"

cat > "$out/env.sh" <<'EOF'
# Sourced by run.sh (and by hand before running build/*/ or check_examples.sh):
# TILEC_BUILD_DIR, PYTHONPATH, TILEC_CACHE_DIR and LD_LIBRARY_PATH for this
# bundle, with the bundled libstdc++/OpenSSL/zlib only when the machine's own
# do not satisfy the binaries.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export TILEC_BUILD_DIR=$here/build
export TILEC_REPO=$here
export PYTHONPATH=$here/python${PYTHONPATH:+:$PYTHONPATH}
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-$here/cache}
export LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tilec_bundle_starts() {
  "$here/build/client/tilec" --help >/dev/null 2>&1 &&
    python3 -c "import ctypes, sys; ctypes.CDLL(sys.argv[1])" \
      "$here/build/runtime/libtilec_runtime.so" >/dev/null 2>&1
}
if ! tilec_bundle_starts; then
  export LD_LIBRARY_PATH=$here/lib:$here/lib/fallback${LD_LIBRARY_PATH#$here/lib}
  if ! tilec_bundle_starts; then
    echo "env.sh: tilec cannot start on this machine:" >&2
    "$here/build/client/tilec" --help 2>&1 >/dev/null | head -5 >&2 || true
    ldd "$here"/build/*/* | grep -i "not found" >&2 || true
    return 1
  fi
  echo "env.sh: using the bundled libstdc++/OpenSSL/zlib (lib/fallback)" >&2
fi
echo "env.sh: tilec $(cat "$here/VERSION")" >&2
EOF

cat > "$out/run.sh" <<'EOF'
#!/usr/bin/env bash
# Runs the tilec GPU benchmark from this bundle: run.sh [run.py arguments]
#   run.sh                     every case on cuda:0, results in gpu_results.json
#   run.sh --only gemm_f16     float16 GEMMs only;   run.sh --help for the rest
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/env.sh"
exec python3 "$here/benchmarks/gpu/run.py" "$@"
EOF
chmod +x "$out/run.sh"

tar -C "$(dirname "$out")" -czf "$out.tar.gz" "$(basename "$out")"
echo "bundle.sh: $out ($(du -sh "$out" | cut -f1)), $out.tar.gz ($(du -h "$out.tar.gz" | cut -f1))"
echo "on the GPU machine: tar xzf $(basename "$out").tar.gz && $(basename "$out")/run.sh"
