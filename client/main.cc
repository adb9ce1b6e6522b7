// tilec: the command-line interface to the tilec compiler.
//
//   tilec parse FILE --fn NAME -D k=v ... [--print] [--json]
//   tilec run FILE --fn NAME -D k=v ... --interp [--seed S] [--in x.npy ...] [--out DIR]
//   tilec recommend FILE --fn NAME -D k=v ... [-U k ...] --target h100 [--top 5] [--json]
//                   [--server HOST:PORT]   (the Recommend RPC; embedded without)
//   tilec compile FILE --fn NAME -D k=v ... --target sm_80 --local -o DIR [--json]
//
// Exit codes are in client/cli.h.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "client/cli.h"
#include "client/commands.h"
#include "client/recommend_command.h"
#include "client/remote.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(tilec::cli::Usage().c_str(), stderr);
    return tilec::cli::kUsageError;
  }
  // `tilec help`, `tilec --help` and `tilec COMMAND --help` print the usage
  // and succeed.
  if (args[0] == "help" ||
      std::any_of(args.begin(), args.end(), [](const std::string& a) {
        return a == "--help" || a == "-h";
      })) {
    std::fputs(tilec::cli::Usage().c_str(), stdout);
    return tilec::cli::kOk;
  }
  // compile --local runs in this process; other compiles go to a server or
  // the embedded cache.
  const bool local_compile =
      args[0] == "compile" && std::find(args.begin(), args.end(), "--local") != args.end();
  if (!local_compile && tilec::cli::IsRemoteCommand(args)) return tilec::cli::RemoteMain(args);
  auto flags = tilec::cli::ParseFlags(args);
  if (!flags.ok()) {
    std::fprintf(stderr, "%s", std::string(flags.status().message()).c_str());
    return tilec::cli::kUsageError;
  }
  if (flags->command == "parse") return tilec::cli::ParseCommand(*flags);
  if (flags->command == "recommend") return tilec::cli::RecommendCommand(*flags);
  if (flags->command == "compile") return tilec::cli::CompileCommand(*flags);
  if (flags->command == "bench") return tilec::cli::BenchCommand(*flags);
  return tilec::cli::RunCommand(*flags);
}
