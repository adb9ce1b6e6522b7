#!/usr/bin/env bash
# Fails if a static library calls anything that reaches files, processes,
# the network or the environment: its undefined symbols (nm -u) are checked
# against a deny list of libc functions and C++ file streams. ctest runs it
# on the frontend and the IR libraries, which take a program from a client
# and must never read a file, import a module or run a command
# (docs/security.md "Review of the surface").
#
#   tests/no_io_symbols.sh LIB.a [LIB.a ...]
set -euo pipefail
deny_c='^(open|open64|openat|openat64|creat|creat64|fopen|fopen64|freopen|opendir|fdopendir|scandir|stat|stat64|lstat|lstat64|access|faccessat|readlink|realpath|popen|system|execl|execlp|execle|execv|execve|execvp|execvpe|fork|vfork|posix_spawn|posix_spawnp|dlopen|dlmopen|socket|connect|bind|getenv|secure_getenv|mmap|mmap64)(@.*)?$'
deny_cxx='basic_ifstream|basic_ofstream|basic_fstream|basic_filebuf|std::filesystem|std::__fs::filesystem'
status=0
for lib in "$@"; do
  [[ -f $lib ]] || { echo "no_io_symbols: $lib does not exist" >&2; exit 2; }
  c=$(nm -u "$lib" | awk '{print $NF}' | grep -E "$deny_c" | sort -u || true)
  cxx=$(nm -uC "$lib" | sed 's/^ *U //' | grep -E "$deny_cxx" | sort -u || true)
  if [[ -n $c || -n $cxx ]]; then
    echo "no_io_symbols: $lib calls what it must not:"
    [[ -z $c ]] || printf '  %s\n' $c
    [[ -z $cxx ]] || printf '%s\n' "$cxx" | sed 's/^/  /'
    status=1
  else
    echo "no_io_symbols: $lib: $(nm -u "$lib" | awk '{print $NF}' | sort -u | wc -l) undefined symbols, none that reach files, processes, the network or the environment"
  fi
done
exit $status
