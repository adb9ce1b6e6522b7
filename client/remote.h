// The tilec CLI as a thin client of a tilecd server: `compile`, `get`,
// `stats` and `health` against --server HOST:PORT or $TILEC_SERVER. Without
// a server, `compile` runs the same compiler in this process with a local
// cache (client/embedded.h; --cache_dir DIR, default $TILEC_CACHE_DIR or
// ~/.cache/tilec; --cache_bytes B).
//
//   tilec compile FILE --fn NAME [-D k=v ...] [-U k ...] --target sm_90a
//         [--target sm_80] [--profile P] [--out DIR] [--json] [--line_info]
//         [--max_registers N] [--cache_dir DIR] [--verify_key PUB.pem]
//         [--hit HOST:PORT]
//   tilec get DIGEST -o FILE [--hit HOST:PORT]
//   tilec stats [--json]
//   tilec health
// Common: --server HOST:PORT, --token_file F (bearer token, or
// $TILEC_TOKEN), --tls_ca F (TLS with this root), --timeout_s S.
//
// --hit names the server's hit path (tilecd --http_port): compile asks it
// for the program's hash first, and both commands read artifacts from it
// (checked against their digests); a miss (404) goes to the server over gRPC as
// usual, as does anything the hit path cannot answer (said on stderr).
// --verify_key refuses (exit 77) a result not signed by that Ed25519 key
// (the server's --signing_key; docs/fleet.md) and bytes that are not the
// signed digest; --out then also writes <fn>.<target>.sig.
// --out DIR writes DIR/<fn>.<target>.cubin and .json (the metadata); DIR
// is created (with its parents) before compiling. An artifact the server
// compiled but could not store (CompileResult.store_error, a full disk) is
// written from the response's bytes, with the reason as a warning.
// Tile parameters left unbound (-U, or without a default) are bound to the
// top recommendation for the target's profile (--profile overrides it); the
// summary names the config chosen.
// Exit codes (a script branches on them): 0 OK; 1 the program is wrong
// (INVALID_ARGUMENT, FAILED_PRECONDITION, UNIMPLEMENTED: the diagnostic is
// printed); 2 usage; 4 a local file could not be read or written (also the
// embedded cache's I/O errors); 69 the server is unreachable (UNAVAILABLE
// from a server); UNIMPLEMENTED without a message (the server could not
// parse the request or lacks the method) is 70, not the program's fault;
// 75 temporary (RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, CANCELLED: retry);
// 77 refused (UNAUTHENTICATED, PERMISSION_DENIED); 70 anything else (a
// compiler or server bug).
// On a terminal, a long compile shows a progress line on stderr.
#ifndef TILEC_CLIENT_REMOTE_H_
#define TILEC_CLIENT_REMOTE_H_

#include <string>
#include <vector>

#include "grpcpp/support/status.h"
#include "proto/tilec/v1/service.pb.h"

namespace tilec::cli {

inline constexpr int kRemoteUnreachable = 69;
inline constexpr int kRemoteTemporary = 75;
inline constexpr int kRemoteRefused = 77;

// True when `args` (after the program name) is one of the commands above:
// `compile` (remote or embedded), `get`, `stats` or `health`.
bool IsRemoteCommand(const std::vector<std::string>& args);

int RemoteMain(const std::vector<std::string>& args);

// The exit code for a failed call (the list above); `remote`: the status came
// from a server rather than from this process (embedded).
int ExitCodeForStatus(const grpc::Status& status, bool remote);

// A tilecd to call, as the flags above name it. The token is read from
// `token_file` when set, else taken from $TILEC_TOKEN.
struct ServerConnection {
  std::string server;  // HOST:PORT
  std::string token_file;
  std::string tls_ca;
  double timeout_s = 600;
};

// Calls Recommend; 0 on success, else prints the error as the commands above
// do and returns their exit code.
int RemoteRecommend(const ServerConnection& connection, const tilec::v1::RecommendRequest& request,
                    tilec::v1::RecommendResponse* response);

}  // namespace tilec::cli

#endif  // TILEC_CLIENT_REMOTE_H_
