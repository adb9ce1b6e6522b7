// `tilec warmup MANIFEST`: compiles (and optionally autotunes) a list of
// kernels x shapes x targets before a deployment needs them, so that serving
// engines find every kernel in the cache at start-up. Against --server the
// fleet's shared cache is filled once for all its servers; without one, the
// local cache (--cache_dir).
//
//   tilec warmup MANIFEST [--server HOST:PORT | --cache_dir DIR]
//                [--jobs N] [--report FILE] [--json] [--timeout_s S]
//
// The manifest is tilec.v1.WarmupManifest as JSON:
//   {"kernels": [{"file": "gemm.py", "fn": "matmul",
//                 "defines": {"block_M": "128"},
//                 "shapes": [{"defines": {"M": "4096"}}, {"defines": {"M": "8192"}}],
//                 "targets": ["sm_90a", "sm_80"],
//                 "unbound": [], "profile": "h100", "autotune": false}]}
// `file` is relative to the manifest's folder. Each kernel x shape x target
// is one compile; with "autotune": true, each kernel x shape is autotuned on
// `profile` first (a server with workers is needed), and its compiles then
// use the tuned config. Progress goes to stderr, one line per compile; the
// report (tilec.v1.WarmupReport as JSON) to --report FILE, or stdout with
// --json. Exit code: 0 when every item succeeded, else that of the first
// failure (client/remote.h), after all items ran.
#ifndef TILEC_CLIENT_WARMUP_H_
#define TILEC_CLIENT_WARMUP_H_

#include <functional>
#include <memory>
#include <string>

#include "grpcpp/support/status.h"
#include "proto/tilec/v1/service.pb.h"

namespace tilec::cli {

class HitClient;  // client/hit_client.h

// Where compiles go: a server or this process's embedded compiler.
struct CompileBackend {
  std::function<grpc::Status(const tilec::v1::CompileRequest&, tilec::v1::CompileResponse*)>
      compile;
  std::function<grpc::Status(const std::string& digest, std::string* bytes)> fetch;
  std::string where;  // for the progress line
  bool remote = false;
  // Runs an autotune to its end (null without a server).
  std::function<grpc::Status(const tilec::v1::AutotuneRequest&)> autotune;
  // The server's hit path (tilec compile --hit), or null.
  std::shared_ptr<HitClient> hit;
};

struct WarmupOptions {
  std::string manifest;
  std::string report;  // "" : none (or stdout with json)
  bool json = false;
  int jobs = 4;  // compiles in flight (1 for the embedded compiler)
};

int Warmup(const WarmupOptions& options, const CompileBackend& backend);

}  // namespace tilec::cli

#endif  // TILEC_CLIENT_WARMUP_H_
