#include "server/response_memo.h"

#include "compiler/cache/digest.h"

namespace tilec::server {

std::string ResponseMemo::KeyOf(const std::string& request_bytes) {
  return cache::Sha256Hex(request_bytes);
}

std::optional<std::string> ResponseMemo::Get(const std::string& key) {
  std::string bytes;
  std::vector<Checked> results;
  {
    std::lock_guard<std::mutex> l(mu_);
    const Slot* slot = slots_.Find(key);
    if (slot == nullptr) return std::nullopt;
    bytes = slot->bytes;
    results = slot->results;
  }
  for (const Checked& c : results) {
    if (stamp_(c.digest) != c.stamp || !touch_(c.cache_key)) {
      std::lock_guard<std::mutex> l(mu_);
      slots_.Erase(key);
      return std::nullopt;
    }
  }
  hits_.fetch_add(1);
  return bytes;
}

void ResponseMemo::Put(const std::string& key, const tilec::v1::CompileResponse& response) {
  if (slots_.budget() == 0 || response.results().empty()) return;
  std::vector<Checked> results;
  for (const tilec::v1::CompileResult& res : response.results()) {
    if (!res.store_error().empty() || !res.artifact().empty() || res.config_size() > 0 ||
        res.cache_key().empty()) {
      return;
    }
    // The blob as the cache holds it now, verified by the read or write
    // that made this response.
    results.push_back({res.cache_key(), res.digest(), stamp_(res.digest())});
    if (results.back().stamp.empty()) return;
  }
  tilec::v1::CompileResponse hit = response;
  for (tilec::v1::CompileResult& res : *hit.mutable_results()) {
    res.set_cache_hit(true);
    res.set_compile_seconds(0);
  }
  std::string bytes = hit.SerializeAsString();
  std::lock_guard<std::mutex> l(mu_);
  slots_.Put(key, Slot{std::move(bytes), std::move(results)}, 1);
}

}  // namespace tilec::server
