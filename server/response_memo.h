// Compile hits at key-value speed: the responses to requests whose every
// target was served or stored by the cache, remembered by the request's
// bytes as received, and kept serialized as a hit, so that a repeated
// request is answered with those bytes without parsing it or running the
// frontend again (CompileCore would parse, verify and hash the program to
// find the same cache keys). A request that means the same but is encoded
// otherwise is another key: it takes the normal path.
//
// Only responses that depend on nothing but the request are kept: every
// result stored in the cache (no store_error), no tile parameter chosen by
// recommendation or autotuning (those follow the tuning database, which
// changes). A remembered response is served only while every entry it names
// is still in the disk cache (DiskStore::Touch, which also refreshes its LRU
// time) and every blob is the file it was when remembered (same size, inode
// and modification time: a blob rewritten or modified in place is read and
// verified again on the normal path); results then say cache_hit,
// compile_seconds 0. Bounded: the least recently used responses are
// forgotten first.
#ifndef TILEC_SERVER_RESPONSE_MEMO_H_
#define TILEC_SERVER_RESPONSE_MEMO_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "proto/tilec/v1/service.pb.h"
#include "server/lru_map.h"

namespace tilec::server {

class ResponseMemo {
 public:
  // `touch(cache_key)`: whether the entry is still stored (refreshing it);
  // `stamp(digest)`: the identity of the blob as stored, "" when absent.
  ResponseMemo(size_t capacity, std::function<bool(const std::string&)> touch,
               std::function<std::string(const std::string&)> stamp)
      : touch_(std::move(touch)), stamp_(std::move(stamp)), slots_(capacity) {}

  // The memo key of a request: SHA-256 of its bytes as received.
  static std::string KeyOf(const std::string& request_bytes);

  // The remembered response, serialized, every result a cache hit with
  // compile_seconds 0.
  std::optional<std::string> Get(const std::string& key);
  // Remembers `response` when it may be (see above).
  void Put(const std::string& key, const tilec::v1::CompileResponse& response);

  int64_t hits() const { return hits_.load(); }

 private:
  struct Checked {  // per result: what must still be stored, unchanged
    std::string cache_key, digest, stamp;
  };
  struct Slot {
    std::string bytes;  // the response as a hit
    std::vector<Checked> results;
  };
  std::function<bool(const std::string&)> touch_;
  std::function<std::string(const std::string&)> stamp_;
  std::mutex mu_;
  LruMap<Slot> slots_;  // one unit of the capacity each
  std::atomic<int64_t> hits_{0};
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_RESPONSE_MEMO_H_
