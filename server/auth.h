// Bearer-token authorization for tilecd.
//
// The token file holds one token per line: `<token> [compile|read]` (compile
// when the role is left out). Blank lines and lines starting with '#' are
// ignored. A call carries "authorization: Bearer <token>" metadata.
// Check returns UNAUTHENTICATED when the token is missing or unknown, and
// PERMISSION_DENIED when a read-only token asks to compile. Tokens are
// compared in constant time. Reload reads the file again (tilecd on SIGHUP):
// the new tokens replace the old ones at once, for calls already waiting
// too; a file that does not parse leaves the old tokens in force.
#ifndef TILEC_SERVER_AUTH_H_
#define TILEC_SERVER_AUTH_H_

#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace tilec::server {

enum class Access { kRead, kCompile };

class TokenAuth {
 public:
  // INVALID_ARGUMENT naming the file and line for a malformed file.
  static absl::StatusOr<std::unique_ptr<TokenAuth>> FromFile(const std::string& path);
  static absl::StatusOr<std::unique_ptr<TokenAuth>> FromText(const std::string& text,
                                                             const std::string& name);

  // `authorization` is the metadata value ("Bearer <token>"), empty if absent.
  absl::Status Check(const std::string& authorization, Access needed) const;

  // The file FromFile read, again; its error (naming the file and line) when
  // it cannot be read or parsed, the old tokens kept. FAILED_PRECONDITION for
  // an instance made FromText.
  absl::Status Reload();

  size_t size() const;

 private:
  std::string path_;  // empty when made FromText
  mutable absl::Mutex mu_;
  std::map<std::string, Access> tokens_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_AUTH_H_
