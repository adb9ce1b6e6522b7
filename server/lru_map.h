// A map that keeps its most recently used entries within a budget: each
// entry costs what its owner says (1 to bound the number of entries, its
// size to bound bytes), and storing an entry evicts the least recently used
// ones until the total is within the budget again (the new entry too, when
// it alone exceeds it). Not thread-safe: its owners hold their own lock.
// The response memo (response_memo.h) and the hit path's blobs
// (hit_path.h) keep their entries in one.
#ifndef TILEC_SERVER_LRU_MAP_H_
#define TILEC_SERVER_LRU_MAP_H_

#include <cstddef>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>

namespace tilec::server {

template <typename V>
class LruMap {
 public:
  explicit LruMap(size_t budget) : budget_(budget) {}

  // The entry of `key`, now the most recently used; null when absent. The
  // pointer is valid until the map next changes.
  V* Find(const std::string& key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second.order);
    return &it->second.value;
  }

  // Stores `value` under `key` (replacing what was there) as the most
  // recently used entry, costing `cost`, then evicts down to the budget.
  void Put(const std::string& key, V value, size_t cost) {
    Erase(key);
    order_.push_front(key);
    entries_.emplace(key, Entry{std::move(value), cost, order_.begin()});
    used_ += cost;
    while (used_ > budget_ && !order_.empty()) {
      const std::string victim = order_.back();
      Erase(victim);
    }
  }

  void Erase(const std::string& key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    used_ -= it->second.cost;
    order_.erase(it->second.order);
    entries_.erase(it);
  }

  size_t size() const { return entries_.size(); }
  size_t budget() const { return budget_; }

 private:
  struct Entry {
    V value;
    size_t cost;
    std::list<std::string>::iterator order;
  };
  size_t budget_;
  size_t used_ = 0;
  std::list<std::string> order_;  // most recent first
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_LRU_MAP_H_
