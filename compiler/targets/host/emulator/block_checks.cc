// The block runner's checks of generated code's own memory accesses (the
// checked pointers of tl/buffer.h), the watchdog, and the optional tracking of
// shared-memory bytes no thread has written.
#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/targets/host/emulator/block_impl.h"

namespace tilec::host {

int32_t BlockRunner::Impl::LookupGlobal(ThreadState&, const void* p, tl::host::BufferBounds* out) {
  if (grid_.buffers.empty()) return 2;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  auto it = std::upper_bound(
      grid_.buffers.begin(), grid_.buffers.end(), addr,
      [](uintptr_t a, const GlobalBuffer& b) { return a < reinterpret_cast<uintptr_t>(b.data); });
  if (it == grid_.buffers.begin()) return 0;
  const GlobalBuffer& b = *std::prev(it);
  const auto start = reinterpret_cast<uintptr_t>(b.data);
  if (addr - start > b.bytes) return 0;
  out->lo = b.data;
  out->hi = static_cast<const uint8_t*>(b.data) + b.bytes;
  out->name = b.name.c_str();
  return 1;
}

void BlockRunner::Impl::AccessFault(ThreadState& t, const tl::host::AccessFault& f) {
  const auto a = reinterpret_cast<uintptr_t>(f.addr);
  const auto lo = reinterpret_cast<uintptr_t>(f.bounds.lo);
  const auto hi = reinterpret_cast<uintptr_t>(f.bounds.hi);
  std::string where;
  if (a < lo) {
    where = absl::StrCat(lo - a, " bytes before the start");
  } else {
    where = absl::StrCat(a + f.bytes - hi, " bytes past the end");
  }
  std::string buffer;
  std::string address = absl::StrFormat("%p", f.addr);
  if (f.shared) {
    address = absl::StrCat("shared offset ",
                           static_cast<int64_t>(a - reinterpret_cast<uintptr_t>(smem_)));
    buffer = absl::StrCat("shared buffer '", f.bounds.name, "' (offset ",
                          lo - reinterpret_cast<uintptr_t>(smem_), ", ", hi - lo, " bytes)");
  } else {
    buffer = absl::StrCat("global buffer '", f.bounds.name, "' (", hi - lo, " bytes)");
  }
  Trap(t,
       absl::StrCat("out-of-bounds ", f.store ? "store" : "load", " of ", f.bytes, " bytes at ",
                    address, ": ", where, " of ", buffer),
       f.pc);
}

bool BlockRunner::Impl::Expired() const {
  return grid_.time_limit_s > 0 && std::chrono::steady_clock::now() > grid_.deadline;
}

absl::Status BlockRunner::Impl::DeadlineError(const ThreadState& t, const void* pc) const {
  return absl::DeadlineExceededError(
      absl::StrCat(Where(t), ": the launch ran past its time limit of ", grid_.time_limit_s,
                   " s (a thread that never finishes: a spin on memory nobody writes, or a wait "
                   "nobody completes?)",
                   pc != nullptr ? absl::StrCat("; this thread was", At(pc)) : ""));
}

void BlockRunner::Impl::Poll(ThreadState& t, const void* pc) {
  if (Expired()) throw KernelFault{DeadlineError(t, pc)};
}

void BlockRunner::Impl::SmemWritten(const void* p, uint64_t bytes, int writer) {
  if (written_.empty()) return;
  const auto* b = static_cast<const uint8_t*>(p);
  if (b < smem_ || b + bytes > smem_ + written_.size()) return;
  std::fill_n(written_.begin() + (b - smem_), bytes, uint8_t{1});
  std::fill_n(unfenced_.begin() + (b - smem_), bytes, writer + 1);
  if (writer >= 0) threads_[writer].unfenced = true;
}

void BlockRunner::Impl::FenceProxyAsync(ThreadState& t) {
  if (unfenced_.empty() || !t.unfenced) return;
  const int32_t mine = t.tid + 1;
  for (int32_t& w : unfenced_) {
    if (w == mine) w = 0;
  }
  t.unfenced = false;
}

void BlockRunner::Impl::AsyncRead(ThreadState& t, const void* p, uint64_t bytes, const void* pc) {
  SmemRead(t, p, bytes, pc);
  if (unfenced_.empty()) return;
  const auto* b = static_cast<const uint8_t*>(p);
  if (b < smem_ || b + bytes > smem_ + unfenced_.size()) return;
  const size_t offset = static_cast<size_t>(b - smem_);
  for (uint64_t i = 0; i < bytes; ++i) {
    if (const int32_t w = unfenced_[offset + i]; w != 0) {
      Trap(t,
           absl::StrCat("the async proxy (wgmma, TMA) reads shared byte ", offset + i,
                        ", which thread ", Dims(threads_[w - 1].pub.thread_idx),
                        " wrote through the generic proxy with no fence.proxy.async since "
                        "(tl::fence_proxy_async() before the barrier)"),
           pc);
    }
  }
}

void BlockRunner::Impl::SmemRead(ThreadState& t, const void* p, uint64_t bytes, const void* pc) {
  if (written_.empty()) return;
  const auto* b = static_cast<const uint8_t*>(p);
  if (b < smem_ || b + bytes > smem_ + written_.size()) return;
  const size_t offset = static_cast<size_t>(b - smem_);
  for (uint64_t i = 0; i < bytes; ++i) {
    if (written_[offset + i] == 0) {
      Trap(t,
           absl::StrCat("load of ", bytes, " bytes at shared offset ", offset, " reads byte ",
                        offset + i,
                        ", which no thread of the block has written (uninitialised shared memory)"),
           pc);
    }
  }
}

}  // namespace tilec::host
