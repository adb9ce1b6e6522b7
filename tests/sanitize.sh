#!/usr/bin/env bash
# The unit tests of the parts that take input from outside (the frontend's
# lexer, parser and builder, the IR's wire form, verifier and hash, the
# interpreter, layout inference, the runtime's JSON and artifact readers)
# built with clang-19, AddressSanitizer (with leak checking) and
# UndefinedBehaviorSanitizer, undefined behaviour fatal, and run; part of the
# README's test command (docs/security.md "Sanitizers").
#
#   tests/sanitize.sh [BUILD_DIR]          (default build-sanitize)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build-sanitize}
tests=(lexer_test parser_test frontend_test ir_test verifier_test wire_test proto_convert_test
       hash_test interp_test layout_test layout_inference_test runtime_json_test
       runtime_artifact_test)
CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja -DTILEC_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 $(printf -- '--target %s ' "${tests[@]}")
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for t in "${tests[@]}"; do
  bin=$(find "$build/tests" -type f -name "$t" -perm -u+x | head -1)
  if ! "$bin" --gtest_brief=1 >"$build/$t.log" 2>&1; then
    echo "tests/sanitize.sh: $t failed under ASan/UBSan:"
    tail -40 "$build/$t.log"
    status=1
  else
    echo "tests/sanitize.sh: $t ok ($(grep -o '[0-9]* tests\?' "$build/$t.log" | tail -1))"
  fi
done
exit $status
