#!/usr/bin/env bash
# Installs everything tilec builds and tests with, from Debian's archive and
# PyPI only. Idempotent: packages already present are left alone, and a
# machine that has everything runs no package manager at all.
#
# Usage: deploy/install-deps.sh        (as root, or with passwordless sudo)
set -euo pipefail

# Keep sorted; say in a comment what each group is for.
apt_packages=(
  # build
  ccache cmake g++ make ninja-build pkg-config
  # RPC, wire form, error handling
  libabsl-dev libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  # hashing (SHA-256 of canonical programs and artifacts)
  libssl-dev
  # host and AMDGPU toolchain; libFuzzer and the sanitizer runtimes
  # (benchmarks/fuzz.sh)
  clang-19 libclang-19-dev lld-19 llvm-19-dev libclang-rt-19-dev
  # emulator fibers
  libboost-context-dev
  # the HTTP/2 front door for untrusted clients (deploy/haproxy; the rapid
  # reset regression test)
  haproxy
  # metrics (promtool, from prometheus, checks the exposition format in tests)
  prometheus prometheus-cpp-dev
  # the fleet's shared tier (server/shared_tier.h; the fleet test runs a
  # redis-server) and the cache benchmark's raw Redis GET
  libhiredis-dev redis-server
  # test certificates (TLS to tilecd and to Redis)
  openssl
  # deploy recipe checks (deploy/check_recipes.py parses the YAML)
  python3-yaml
  # tests and benchmarks
  libbenchmark-dev libgmock-dev libgtest-dev
)

missing=()
for p in "${apt_packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi

# The CUDA toolkit is not in Debian's archive; tilec expects it at
# /usr/local/cuda (override with CUDA_HOME) for NVRTC and ptxas.
cuda_home=${CUDA_HOME:-/usr/local/cuda}
for f in include/nvrtc.h lib64/libnvrtc.so bin/ptxas; do
  if [[ ! -e "$cuda_home/$f" ]]; then
    echo "install-deps: the CUDA toolkit is missing $cuda_home/$f; install the CUDA toolkit" \
         "(NVRTC and ptxas) at /usr/local/cuda or set CUDA_HOME" >&2
    exit 1
  fi
done
echo "install-deps: CUDA toolkit at $cuda_home"

# SASS readers for the static checks of generated code (PyPI; Debian has none).
py=$(command -v python3 || true)
[[ -n "$py" ]] || { echo "install-deps: python3 is missing (needed for cuobjdump from PyPI)" >&2; exit 1; }
if ! compgen -G "$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/nvidia/*/bin/cuobjdump" >/dev/null; then
  echo "install-deps: installing cuobjdump and nvdisasm from PyPI"
  "$py" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
fi
echo "install-deps: cuobjdump at $(compgen -G "$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/nvidia/*/bin/cuobjdump" | head -1)"

# numpy: the Python package's tests and the benchmark harness's dry run
# (runtime/python, benchmarks/gpu).
if ! "$py" -c 'import numpy' 2>/dev/null; then
  echo "install-deps: installing numpy from PyPI"
  "$py" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore numpy
fi
echo "install-deps: numpy $("$py" -c 'import numpy; print(numpy.__version__)')"
