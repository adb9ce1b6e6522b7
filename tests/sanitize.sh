#!/usr/bin/env bash
# Built with clang-19, AddressSanitizer (with leak checking) and
# UndefinedBehaviorSanitizer, undefined behaviour fatal, and run; part of the
# README's test command (docs/security.md "Sanitizers"):
# - the unit tests of the parts that take input from outside: the frontend's
#   lexer, parser, builder and staging budget, the IR's names, wire form,
#   verifier and hash, the interpreter, layout inference, the runtime's JSON
#   and artifact readers;
#   and of the server and worker: tokens, the scheduler, the service and its
#   compile core, remembered responses, the disk store, signing, cache keys,
#   single flight, the tuning database, the Redis tier, the worker's
#   artifact cache, flags and session;
# - end to end, a sanitized tilecd (and its compile children) under the e2e
#   tests of the server, crashes, exhaustion, security, the hit path and
#   hardening (names, staging budgets, overload), and the load tool
#   (100 clients, idle and unread connections). Left out: the tests of the
#   compile memory limit (AddressSanitizer's shadow fits no RLIMIT_AS), the
#   CLI and fleet e2e tests, and the emulator's (see docs/security.md).
#
#   tests/sanitize.sh [BUILD_DIR]          (default build-sanitize)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build-sanitize}
unit=(lexer_test parser_test amdgpu_toolchain_test target_registry_test frontend_test staging_budget_test
      ir_test names_test verifier_test wire_test proto_convert_test
      hash_test interp_test layout_test layout_inference_test runtime_json_test
      runtime_artifact_test
      auth_test scheduler_test hit_server_test service_test compile_core_test response_memo_test disk_store_test
      signing_test cache_key_test single_flight_test tuning_db_test shared_tier_test shared_tier_tls_test
      worker_artifact_cache_test worker_flags_test worker_session_test)
# e2e test binary, then its gtest filter.
e2e=("server_e2e_test" "-ServerE2E.CompileKilledByItsLimitFailsAlone"
     "crash_e2e_test" "*"
     "exhaustion_e2e_test" "*"
     "security_e2e_test" "-SecurityMemoryE2E.*"
     "hit_path_e2e_test" "*"
     "hardening_e2e_test" "*")
targets=("${unit[@]}" tilecd tilec_load)
for ((i = 0; i < ${#e2e[@]}; i += 2)); do targets+=("${e2e[i]}"); done
CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja -DTILEC_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 $(printf -- '--target %s ' "${targets[@]}")
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
# run NAME LOG COMMAND...: runs it, says ok with the count of tests or
# failed with the log's tail.
run() {
  local name=$1 log=$2
  shift 2
  if ! "$@" >"$log" 2>&1; then
    echo "tests/sanitize.sh: $name failed under ASan/UBSan:"
    tail -40 "$log"
    status=1
  else
    local summary
    summary=$(grep -o '[0-9]* tests\?' "$log" | tail -1 || true)
    [[ -n $summary ]] || summary=$(grep -m1 '^answers' "$log" || true)
    echo "tests/sanitize.sh: $name ok ($summary)"
  fi
}
binary() { find "$build/tests" -type f -name "$1" -perm -u+x | head -1; }
for t in "${unit[@]}"; do
  run "$t" "$build/$t.log" "$(binary "$t")" --gtest_brief=1
done
for ((i = 0; i < ${#e2e[@]}; i += 2)); do
  t=${e2e[i]}
  run "$t" "$build/$t.log" "$(binary "$t")" --gtest_brief=1 "--gtest_filter=${e2e[i + 1]}"
done
run "tilec_load (100 clients, 5 s)" "$build/tilec_load.log" "$build/benchmarks/tilec_load" \
  --clients 100 --seconds 5 --miss_percent 2 --hit_programs 4 --idle 50 --stalled 10 \
  --settle_s 3 --expect_clean
exit $status
