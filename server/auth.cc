#include "server/auth.h"

#include <openssl/crypto.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tilec::server {

absl::StatusOr<std::unique_ptr<TokenAuth>> TokenAuth::FromFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the token file ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  absl::StatusOr<std::unique_ptr<TokenAuth>> auth = FromText(ss.str(), path);
  if (auth.ok()) (*auth)->path_ = path;
  return auth;
}

absl::Status TokenAuth::Reload() {
  if (path_.empty()) return absl::FailedPreconditionError("these tokens came from no file");
  absl::StatusOr<std::unique_ptr<TokenAuth>> fresh = FromFile(path_);
  if (!fresh.ok()) return fresh.status();
  std::map<std::string, Access> tokens;
  {
    absl::MutexLock lock(&(*fresh)->mu_);
    tokens = std::move((*fresh)->tokens_);
  }
  absl::MutexLock lock(&mu_);
  tokens_ = std::move(tokens);
  return absl::OkStatus();
}

size_t TokenAuth::size() const {
  absl::MutexLock lock(&mu_);
  return tokens_.size();
}

absl::StatusOr<std::unique_ptr<TokenAuth>> TokenAuth::FromText(const std::string& text,
                                                               const std::string& name) {
  auto auth = std::make_unique<TokenAuth>();
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> parts = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    Access access = Access::kCompile;
    if (parts.size() == 2 && parts[1] == "read") {
      access = Access::kRead;
    } else if (parts.size() > 2 || (parts.size() == 2 && parts[1] != "compile")) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ":", line_no, ": expected `<token> [compile|read]`, got '", line, "'"));
    }
    absl::MutexLock lock(&auth->mu_);
    auth->tokens_[std::string(parts[0])] = access;
  }
  if (auth->size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": the token file holds no token"));
  }
  return auth;
}

absl::Status TokenAuth::Check(const std::string& authorization, Access needed) const {
  // RFC 6750 2.1: `Bearer 1*SP b64token`, the scheme case-insensitive
  // (RFC 7235 2.1).
  absl::string_view value = authorization;
  const size_t space = value.find(' ');
  const bool bearer =
      space != absl::string_view::npos && absl::EqualsIgnoreCase(value.substr(0, space), "bearer");
  if (bearer) value = absl::StripLeadingAsciiWhitespace(value.substr(space));
  if (!bearer || value.empty()) {
    return absl::UnauthenticatedError(
        "this server needs a bearer token (authorization: Bearer <token>; tilec --token_file)");
  }
  absl::MutexLock lock(&mu_);
  const Access* found = nullptr;
  for (const auto& [token, access] : tokens_) {
    // Constant time per comparison, and every token is compared.
    bool same = token.size() == value.size() &&
                CRYPTO_memcmp(token.data(), value.data(), value.size()) == 0;
    if (same) found = &access;
  }
  if (found == nullptr) return absl::UnauthenticatedError("unknown bearer token");
  if (needed == Access::kCompile && *found != Access::kCompile) {
    return absl::PermissionDeniedError("this token may read artifacts and stats but not compile");
  }
  return absl::OkStatus();
}

}  // namespace tilec::server
