// SHA-256 of bytes as 64 lowercase hex digits: the name of an artifact and
// of a cache key.
#ifndef TILEC_COMPILER_CACHE_DIGEST_H_
#define TILEC_COMPILER_CACHE_DIGEST_H_

#include <string>
#include <string_view>

namespace tilec::cache {

std::string Sha256Hex(std::string_view bytes);

// True when `s` is 64 lowercase hex digits (a name safe to use as a file name).
bool IsHexDigest(std::string_view s);

}  // namespace tilec::cache

#endif  // TILEC_COMPILER_CACHE_DIGEST_H_
