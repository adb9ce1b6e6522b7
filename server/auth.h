// Bearer-token authorization for tilecd.
//
// The token file holds one token per line: `<token> [compile|read]` (compile
// when the role is left out). Blank lines and lines starting with '#' are
// ignored. A call carries "authorization: Bearer <token>" metadata.
// Check returns UNAUTHENTICATED when the token is missing or unknown, and
// PERMISSION_DENIED when a read-only token asks to compile. Tokens are
// compared in constant time.
#ifndef TILEC_SERVER_AUTH_H_
#define TILEC_SERVER_AUTH_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

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

  size_t size() const { return tokens_.size(); }

 private:
  std::map<std::string, Access> tokens_;
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_AUTH_H_
