// The tilec command line: flags shared by the subcommands, and exit codes a
// script can branch on.
#ifndef TILEC_CLIENT_CLI_H_
#define TILEC_CLIENT_CLI_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace tilec::cli {

// Exit codes. Scripts branch on these; keep them stable.
enum ExitCode : int {
  kOk = 0,
  kProgramError = 1,  // the tile program is wrong: a diagnostic was printed
  kUsageError = 2,    // bad flags or arguments
  kMismatch = 3,      // `run --compare`: results disagree beyond tolerance
  kIoError = 4,       // a file could not be read or written
  kTimeout = 5,       // `run --emulate`: the kernel ran past --timeout_s
  kInternalError = 70,  // a compiler bug (EX_SOFTWARE)
};

struct Flags {
  std::string command;  // parse | run | recommend | compile (--local) | bench
  std::string file;
  std::string function;
  std::vector<std::pair<std::string, std::string>> defines;  // -D k=v, in order
  std::vector<std::string> unbound;  // -U name: leave a parameter with a default unbound
  bool print = false;
  bool json = false;
  bool explain = false;  // compile: print each kernel's schedule (warp specialisation)
  // run: --interp (reference interpreter), --emulate --target sm_80|sm_90a
  // (the emitted CUDA on the SIMT emulator), --compare (both, then compare)
  bool interp = false;
  bool emulate = false;
  bool compare = false;
  bool shuffle_blocks = false;
  bool check_uninit = false;  // --check_uninit: emulated reads of unwritten shared memory fail
  uint64_t seed = 0;
  std::vector<std::string> inputs;  // --in x.npy, one per tensor parameter in order
  std::string out_dir;
  std::vector<std::pair<std::string, int64_t>> dims;  // --dim M=100 for dynamic dims
  // recommend
  std::string target;        // --target h100 (a hardware profile id or alias)
  int top = 5;               // --top K
  std::string profiles_dir;  // --profiles DIR: more hardware profiles (*.textproto)
  // recommend against a tilecd (--server HOST:PORT or $TILEC_SERVER), with
  // --token_file F (or $TILEC_TOKEN), --tls_ca F and --timeout_s S.
  std::string server, token_file, tls_ca;
  double timeout_s = 600;
  bool timeout_given = false;  // run --emulate stops after --timeout_s, default 60
  // compile --local: --profile P binds unbound tile parameters by P's top
  // recommendation (default: the target's own profile)
  std::string profile;
  // compile --local: --target sm_80|sm_90a, output folder in out_dir (-o/--out)
  bool local = false;
  // bench: --device cuda:N|hip:N|emulator, --warmup W, --iters N, --no-flush
  // (keep the cache warm between runs), --no-check (skip the interpreter)
  std::string device = "emulator";
  int warmup = 3;
  int iters = 20;
  bool flush = true;
  bool check = true;
};

// Parses argv after the program name. Errors are INVALID_ARGUMENT with a
// message meant for the user.
absl::StatusOr<Flags> ParseFlags(const std::vector<std::string>& args);

std::string Usage();

// Maps a status to the exit code a script sees.
int ExitCodeFor(const absl::Status& status);

}  // namespace tilec::cli

#endif  // TILEC_CLIENT_CLI_H_
