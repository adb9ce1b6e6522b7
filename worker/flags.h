// tilec-worker's command line.
//
//   tilec-worker --server HOST:PORT[,HOST:PORT...] --device cuda:N|hip:N|emulator
//                [--profile P] [--token_file F] [--tls_ca F]
//                [--cache_dir DIR] [--id NAME] [--verify_key PEM]
//
// Test-only fault injection (for the server's tests; never in production):
//   --test_corrupt_output NAME=VALUE  jobs whose artifact config binds NAME to
//                                     VALUE report every sampled output
//                                     value plus 1.0 (the server's result
//                                     check must catch it)
//   --test_job_delay_s S              sleep S seconds after MeasureStarted
//                                     (a window to kill a worker mid-job)
#ifndef TILEC_WORKER_FLAGS_H_
#define TILEC_WORKER_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/backend.h"

namespace tilec::worker {

struct WorkerFlags {
  // HOST:PORT of each tilecd served (--server, repeated or comma-separated):
  // a session with each, one job at a time on the device.
  std::vector<std::string> servers;
  runtime::DeviceSpec device;
  std::string profile;     // empty: the matched one
  std::string token_file;  // empty: $TILEC_TOKEN, if set
  std::string tls_ca;      // empty: plaintext
  std::string cache_dir;   // empty: DefaultWorkerCacheDir()
  std::string id;          // empty: host:pid:device
  std::string verify_key;  // empty: artifacts are not checked for a signature
  // Test-only fault injection (see above).
  std::optional<std::pair<std::string, int64_t>> test_corrupt_output;
  double test_job_delay_s = 0;
  bool help = false;  // --help: print Usage() and exit 0
};

// `args` without the program name. INVALID_ARGUMENT naming the flag for an
// unknown flag, a missing or malformed value, or a missing --server/--device
// (not checked with --help).
absl::StatusOr<WorkerFlags> ParseWorkerFlags(const std::vector<std::string>& args);

// The --help text.
std::string Usage();

}  // namespace tilec::worker

#endif  // TILEC_WORKER_FLAGS_H_
