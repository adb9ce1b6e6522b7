#include "server/response_memo.h"

#include "compiler/cache/digest.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace tilec::server {

std::string ResponseMemo::KeyOf(const tilec::v1::CompileRequest& request) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    request.SerializeToCodedStream(&coded);
  }
  return cache::Sha256Hex(bytes);
}

std::optional<tilec::v1::CompileResponse> ResponseMemo::Get(const std::string& key) {
  tilec::v1::CompileResponse r;
  std::vector<std::string> stamps;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = slots_.find(key);
    if (it == slots_.end()) return std::nullopt;
    lru_.splice(lru_.begin(), lru_, it->second.order);
    r = it->second.response;
    stamps = it->second.stamps;
  }
  for (int i = 0; i < r.results_size(); ++i) {
    const tilec::v1::CompileResult& res = r.results(i);
    if (stamp_(res.digest()) != stamps[i] || !touch_(res.cache_key())) {
      std::lock_guard<std::mutex> l(mu_);
      auto it = slots_.find(key);
      if (it != slots_.end()) {
        lru_.erase(it->second.order);
        slots_.erase(it);
      }
      return std::nullopt;
    }
  }
  for (tilec::v1::CompileResult& res : *r.mutable_results()) {
    res.set_cache_hit(true);
    res.set_compile_seconds(0);
  }
  hits_.fetch_add(1);
  return r;
}

void ResponseMemo::Put(const std::string& key, const tilec::v1::CompileResponse& response) {
  if (capacity_ == 0 || response.results().empty()) return;
  std::vector<std::string> stamps;
  for (const tilec::v1::CompileResult& res : response.results()) {
    if (!res.store_error().empty() || !res.artifact().empty() || res.config_size() > 0 ||
        res.cache_key().empty()) {
      return;
    }
    // The blob as the cache holds it now, verified by the read or write
    // that made this response.
    stamps.push_back(stamp_(res.digest()));
    if (stamps.back().empty()) return;
  }
  std::lock_guard<std::mutex> l(mu_);
  auto it = slots_.find(key);
  if (it != slots_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.order);
    it->second.response = response;
    it->second.stamps = std::move(stamps);
    return;
  }
  lru_.push_front(key);
  slots_[key] = Slot{response, std::move(stamps), lru_.begin()};
  while (slots_.size() > capacity_) {
    slots_.erase(lru_.back());
    lru_.pop_back();
  }
}

}  // namespace tilec::server
