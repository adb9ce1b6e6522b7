// The subcommands of the tilec CLI. Each prints its result on stdout, its
// diagnostics on stderr, and returns an exit code from cli.h.
#ifndef TILEC_CLIENT_COMMANDS_H_
#define TILEC_CLIENT_COMMANDS_H_

#include "absl/status/statusor.h"
#include "client/cli.h"
#include "compiler/ir/ir.h"

namespace tilec::cli {

// Reads FILE, evaluates --fn with the -D bindings (and -U names left
// unbound), and verifies the program.
// Errors come back ready to print (a located diagnostic for a bad program).
absl::StatusOr<ir::Program> LoadProgram(const Flags& flags);

// Prints the program's hash, and its IR with --print, or everything as JSON
// with --json.
int ParseCommand(const Flags& flags);

// Runs the program on the reference interpreter with random or .npy inputs
// and writes every tensor parameter to --out as .npy.
int RunCommand(const Flags& flags);

// Compiles for --target in this process (no cache) and writes <program>.cubin,
// .cu and .json to -o DIR (compile_command.cc).
int CompileCommand(const Flags& flags);

// `tilec bench` (bench_command.cc).
int BenchCommand(const Flags& flags);

// Prints a failed status the way users read it: diagnostics as they are,
// anything else with its code, and internal errors as compiler bugs.
int ReportError(const absl::Status& status);

}  // namespace tilec::cli

#endif  // TILEC_CLIENT_COMMANDS_H_
