#include "compiler/targets/host/emulator/block.h"

#include <algorithm>
#include <boost/context/fiber.hpp>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/targets/host/emulator/block_impl.h"
#include "compiler/targets/host/emulator/stack_pool.h"
#include "compiler/targets/host/emulator/symbolize.h"
#include "compiler/targets/host/emulator/warp_ops.h"

namespace tilec::host {

std::string Ranges(const std::vector<int>& ids) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    parts.push_back(j == i ? absl::StrCat(ids[i]) : absl::StrCat(ids[i], "-", ids[j]));
    i = j + 1;
  }
  return absl::StrJoin(parts, ", ");
}

namespace {

ThreadState& Self(tl::host::Thread* t) { return *static_cast<ThreadState*>(t->impl); }

}  // namespace

const tl::host::Runtime BlockRunner::Impl::kRuntime = {
    tl::host::kAbiVersion,
    [](tl::host::Thread* t) { Self(t).runner->Syncthreads(Self(t)); },
    [](tl::host::Thread* t, uint32_t op, const void* in, void* out) {
      Self(t).runner->Collective(Self(t), op, in, out);
    },
    [](tl::host::Thread* t, void* smem, const void* gmem, uint32_t bytes, uint32_t src_bytes) {
      Self(t).runner->CpAsync(Self(t), smem, gmem, bytes, src_bytes);
    },
    [](tl::host::Thread* t) { Self(t).runner->CpAsyncCommit(Self(t)); },
    [](tl::host::Thread* t, int32_t n) { Self(t).runner->CpAsyncWait(Self(t), n); },
    [](tl::host::Thread* t, const void* p, uint64_t bytes, const char* what) {
      Self(t).runner->CheckGlobal(Self(t), p, bytes, what);
    },
    [](tl::host::Thread* t, const void* p, uint64_t bytes, const char* what) {
      Self(t).runner->CheckShared(Self(t), p, bytes, what);
    },
    [](tl::host::Thread* t, const char* message) { Self(t).runner->Trap(Self(t), message); },
    [](tl::host::Thread* t, const void* p, tl::host::BufferBounds* out) {
      return Self(t).runner->LookupGlobal(Self(t), p, out);
    },
    [](tl::host::Thread* t, const tl::host::AccessFault* f) {
      Self(t).runner->AccessFault(Self(t), *f);
    },
    [](tl::host::Thread* t, const void* pc) { Self(t).runner->Poll(Self(t), pc); },
    [](tl::host::Thread* t, uint32_t op, void* bar, uint64_t arg) {
      return Self(t).runner->BlockOp(Self(t), op, bar, arg);
    },
    [](tl::host::Thread* t, const void* p, uint64_t bytes) {
      Self(t).runner->SmemWritten(p, bytes, Self(t).tid);
    },
    [](tl::host::Thread* t, const void* p, uint64_t bytes, const void* pc) {
      Self(t).runner->SmemRead(Self(t), p, bytes, pc);
    },
    [](tl::host::Thread* t, const tl::host::TmaLoadIn* in) {
      Self(t).runner->TmaLoad(Self(t), *in);
    },
    [](tl::host::Thread* t, uint32_t id, uint32_t count) {
      Self(t).runner->NamedBarrier(Self(t), id, count);
    },
    [](tl::host::Thread* t, const tl::host::TmaLoadIn* in, int32_t wait) {
      Self(t).runner->TmaStore(Self(t), in, wait);
    },
    [](tl::host::Thread* t) { Self(t).runner->FenceProxyAsync(Self(t)); },
    [](tl::host::Thread* t, const void* p, uint64_t bytes, const void* pc) {
      Self(t).runner->AsyncRead(Self(t), p, bytes, pc);
    },
};

BlockRunner::Impl::Impl(const GridContext& grid)
    : grid_(grid),
      nthreads_(static_cast<int>(grid.block.x * grid.block.y * grid.block.z)),
      stacks_(grid.stack_bytes),
      threads_(nthreads_) {
  // 128-byte aligned, as the GPU's dynamic shared memory base; at least one
  // byte so the base is a real address even without shared memory.
  const size_t bytes = (std::max<size_t>(grid.smem_bytes, 1) + 127) / 128 * 128;
  smem_ = static_cast<uint8_t*>(std::aligned_alloc(128, bytes));
  if (smem_ == nullptr) throw std::bad_alloc();
  if (grid.check_uninit) {
    written_.resize(grid.smem_bytes);
    unfenced_.resize(grid.smem_bytes);
  }
  const int ws = grid.warp_size;
  for (int w = 0; w * ws < nthreads_; ++w) {
    warps_.push_back(WarpState{w * ws, std::min(ws, nthreads_ - w * ws), 0, 0});
  }
  lanes_.resize(static_cast<size_t>(ws));
  for (int i = 0; i < nthreads_; ++i) {
    ThreadState& t = threads_[i];
    t.runner = this;
    t.tid = i;
    t.warp = i / ws;
    t.lane = i % ws;
    const auto bx = grid.block.x, by = grid.block.y;
    const auto u = static_cast<unsigned>(i);
    t.pub.thread_idx = {u % bx, (u / bx) % by, u / (bx * by)};
    t.pub.block_dim = {grid.block.x, grid.block.y, grid.block.z};
    t.pub.grid_dim = {grid.grid.x, grid.grid.y, grid.grid.z};
    t.pub.smem = smem_;
    t.pub.smem_bytes = grid.smem_bytes;
    t.pub.warp_size = static_cast<uint32_t>(ws);
    t.pub.lane = static_cast<uint32_t>(t.lane);
    t.pub.rt = &kRuntime;
    t.pub.impl = &t;
    t.pub.check_uninit = grid.check_uninit ? 1 : 0;
  }
}

BlockRunner::Impl::~Impl() {
  TearDown();
  std::free(smem_);
}

std::string BlockRunner::Impl::At(const void* pc) const {
  const std::string line = SourceLine(pc, grid_.symbolizer);
  return line.empty() ? "" : absl::StrCat(" at ", line);
}

void BlockRunner::Impl::StartFiber(ThreadState& t) {
  t.fiber = ctx::fiber(
      std::allocator_arg, PooledStackAllocator{&stacks_}, [this, &t](ctx::fiber&& caller) {
        t.caller = std::move(caller);
        try {
          grid_.entry(&t.pub, grid_.args);
        } catch (const ctx::detail::forced_unwind&) {
          throw;  // the fiber is being destroyed: let Boost unwind it
        } catch (const KernelFault& fault) {
          Fail(fault.status, fault.pc);
        } catch (const std::exception& e) {
          Fail(absl::AbortedError(absl::StrCat(Where(t), ": C++ exception: ", e.what())));
        } catch (...) {
          Fail(absl::AbortedError(absl::StrCat(Where(t), ": unknown C++ exception")));
        }
        t.state = State::kDone;
        ++done_;
        return std::move(t.caller);
      });
}

absl::Status BlockRunner::Impl::Run(Dim3 block_idx) {
  block_idx_ = {block_idx.x, block_idx.y, block_idx.z};
  std::memset(smem_, grid_.smem_fill, grid_.smem_bytes);
  runnable_.clear();
  at_barrier_ = 0;
  for (NamedBarrierState& b : named_) b = NamedBarrierState();
  done_ = 0;
  tma_pending_.clear();
  error_ = absl::OkStatus();
  error_pc_ = nullptr;
  std::fill(written_.begin(), written_.end(), uint8_t{0});
  std::fill(unfenced_.begin(), unfenced_.end(), 0);
  for (WarpState& w : warps_) w.arrived = 0;
  try {
    for (ThreadState& t : threads_) {
      t.pub.block_idx = block_idx_;
      t.state = State::kReady;
      t.open_group.clear();
      t.groups.clear();
      t.store_open.clear();
      t.store_groups.clear();
      t.pub.pc = nullptr;
      StartFiber(t);
      runnable_.push_back(t.tid);
    }
  } catch (const std::bad_alloc&) {
    TearDown();
    return absl::ResourceExhaustedError(
        absl::StrCat(Where(), ": cannot map fiber stacks for ", nthreads_, " threads"));
  }
  uint32_t switches = 0;
  while (!runnable_.empty() && error_.ok()) {
    ThreadState& t = threads_[runnable_.front()];
    // Threads that wait by yielding (test_wait loops) poll the watchdog here.
    if (++switches % 64 == 0 && Expired()) {
      Fail(DeadlineError(t, t.pub.pc));
      break;
    }
    runnable_.pop_front();
    t.state = State::kRunning;
    t.fiber = std::move(t.fiber).resume();
  }
  if (error_.ok() && done_ != nthreads_) error_ = Diagnose();
  if (error_.ok()) error_ = TmaLeftPending();
  TearDown();
  if (!error_.ok() && error_pc_ != nullptr) {
    error_ = absl::Status(error_.code(), absl::StrCat(error_.message(), At(error_pc_)));
  }
  return error_;
}

void BlockRunner::Impl::TearDown() {
  // Destroying a suspended fiber unwinds its stack (Boost's forced_unwind).
  for (ThreadState& t : threads_) t.fiber = ctx::fiber();
}

absl::Status BlockRunner::Impl::Diagnose() const {
  if (absl::Status s = DiagnoseSync(); !s.ok()) return s;
  for (size_t w = 0; w < warps_.size(); ++w) {
    const WarpState& warp = warps_[w];
    if (warp.arrived == 0) continue;
    std::vector<int> waiting, exited, at_barrier, at_vote;
    for (int i = warp.first; i < warp.first + warp.size; ++i) {
      const ThreadState& t = threads_[i];
      if (t.state == State::kCollective) waiting.push_back(t.lane);
      if (t.state == State::kDone) exited.push_back(t.lane);
      if (t.state == State::kBarrier) at_barrier.push_back(t.lane);
      if (t.state == State::kVote) at_vote.push_back(t.lane);
    }
    std::vector<std::string> others;
    if (!exited.empty()) others.push_back(absl::StrCat("lanes ", Ranges(exited), " have exited"));
    if (!at_barrier.empty()) {
      others.push_back(absl::StrCat("lanes ", Ranges(at_barrier), " wait at syncthreads"));
    }
    if (!at_vote.empty())
      others.push_back(absl::StrCat("lanes ", Ranges(at_vote), " wait at a vote"));
    return absl::AbortedError(
        absl::StrCat(Where(), ", warp ", w, ": lanes ", Ranges(waiting), " wait at ",
                     WarpOpName(warp.op), " but ", absl::StrJoin(others, " and "),
                     " (every lane of the warp must execute the same collective)"));
  }
  std::vector<int> waiting, exited;
  for (const ThreadState& t : threads_) {
    if (t.state == State::kBarrier) waiting.push_back(t.tid);
    if (t.state == State::kDone) exited.push_back(t.tid);
  }
  if (!waiting.empty()) {
    const uint32_t id = threads_[waiting.front()].barrier_id;
    const std::string at =
        id == 0 ? std::string("syncthreads")
                : absl::StrCat("bar.sync ", id, ", ", named_[id].count, " (", named_[id].arrived,
                               " arrived)");
    return absl::AbortedError(absl::StrCat("barrier divergence in ", Where(), ": threads ",
                                           Ranges(waiting), " wait at ", at, " but threads ",
                                           Ranges(exited), " have exited (linear thread ids)"));
  }
  return absl::InternalError(
      absl::StrCat(Where(), ": emulator bug: the block stalled with no thread waiting"));
}

void BlockRunner::Impl::Syncthreads(ThreadState& t) {
  t.state = State::kBarrier;
  t.barrier_id = 0;
  if (++at_barrier_ < nthreads_) {
    Yield(t);  // resumed once the last thread arrives
    return;
  }
  at_barrier_ = 0;
  for (ThreadState& u : threads_) {
    if (&u != &t && u.state == State::kBarrier && u.barrier_id == 0) Release(u);
  }
  t.state = State::kRunning;
}

void BlockRunner::Impl::NamedBarrier(ThreadState& t, uint32_t id, uint32_t count) {
  if (id < 1 || id > 15) Trap(t, absl::StrCat("bar.sync ", id, ": named barriers are 1 to 15"), t.pub.pc);
  if (count == 0 || count % t.pub.warp_size != 0 || count > static_cast<uint32_t>(nthreads_)) {
    Trap(t,
         absl::StrCat("bar.sync ", id, ", ", count, ": the count must be a multiple of ",
                      t.pub.warp_size, " up to the block's ", nthreads_, " threads"),
         t.pub.pc);
  }
  NamedBarrierState& b = named_[id];
  if (b.arrived > 0 && b.count != count) {
    Trap(t,
         absl::StrCat("bar.sync ", id, ", ", count, " while ", b.arrived,
                      " threads wait at bar.sync ", id, ", ", b.count),
         t.pub.pc);
  }
  b.count = count;
  t.state = State::kBarrier;
  t.barrier_id = id;
  if (++b.arrived < count) {
    Yield(t);  // resumed once the count is reached
    return;
  }
  b.arrived = 0;
  for (ThreadState& u : threads_) {
    if (&u != &t && u.state == State::kBarrier && u.barrier_id == id) Release(u);
  }
  t.state = State::kRunning;
}

void BlockRunner::Impl::Collective(ThreadState& t, uint32_t op, const void* in, void* out) {
  if (op == tl::host::kWarpVote) {
    Vote(t, *static_cast<const tl::host::VoteIn*>(in), static_cast<uint64_t*>(out));
    return;
  }
  WarpState& warp = warps_[t.warp];
  if (warp.arrived > 0 && warp.op != op) {
    std::vector<int> waiting;
    for (int i = warp.first; i < warp.first + warp.size; ++i) {
      if (threads_[i].state == State::kCollective) waiting.push_back(threads_[i].lane);
    }
    throw KernelFault{absl::AbortedError(
        absl::StrCat(Where(), ", warp ", t.warp, ": lane ", t.lane, " executes ", WarpOpName(op),
                     " while lanes ", Ranges(waiting), " wait at ", WarpOpName(warp.op),
                     " (every lane of the warp must execute the same collective)"))};
  }
  warp.op = op;
  t.op = op;
  t.operands = LaneOperands{in, out};
  t.state = State::kCollective;
  if (++warp.arrived < warp.size) {
    Yield(t);  // resumed once the last lane arrives and computed our result
    return;
  }
  warp.arrived = 0;
  for (int i = 0; i < warp.size; ++i) lanes_[i] = threads_[warp.first + i].operands;
  absl::Status s =
      ExecuteWarpOp(op, absl::MakeConstSpan(lanes_.data(), static_cast<size_t>(warp.size)),
                    grid_.warp_size, SharedWindow{smem_, grid_.smem_bytes});
  if (!s.ok()) {
    throw KernelFault{absl::Status(s.code() == absl::StatusCode::kInternal
                                       ? absl::StatusCode::kInternal
                                       : absl::StatusCode::kAborted,
                                   absl::StrCat(Where(), ", warp ", t.warp, ": ", s.message()))};
  }
  for (int i = warp.first; i < warp.first + warp.size; ++i) {
    if (i != t.tid) Release(threads_[i]);
  }
  t.state = State::kRunning;
}

void BlockRunner::Impl::CheckShared(ThreadState& t, const void* p, uint64_t bytes,
                                    const char* what) {
  const auto* b = static_cast<const uint8_t*>(p);
  if (b >= smem_ && bytes <= grid_.smem_bytes && b <= smem_ + grid_.smem_bytes - bytes) return;
  Trap(t, absl::StrFormat("%s: shared address %p (+%d bytes) is outside the block's dynamic "
                          "shared memory [%p, +%d bytes)",
                          what, p, bytes, smem_, grid_.smem_bytes));
}

void BlockRunner::Impl::CheckGlobal(ThreadState& t, const void* p, uint64_t bytes,
                                    const char* what) {
  if (grid_.buffers.empty()) return;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  // The last buffer starting at or before p.
  auto it = std::upper_bound(
      grid_.buffers.begin(), grid_.buffers.end(), addr,
      [](uintptr_t a, const GlobalBuffer& b) { return a < reinterpret_cast<uintptr_t>(b.data); });
  std::string near;
  if (it != grid_.buffers.begin()) {
    const GlobalBuffer& b = *std::prev(it);
    const uintptr_t start = reinterpret_cast<uintptr_t>(b.data);
    if (addr - start <= b.bytes && bytes <= b.bytes - (addr - start)) return;
    near = absl::StrFormat(" (%d bytes from the start of buffer '%s', which has %d bytes)",
                           addr - start, b.name, b.bytes);
  }
  Trap(t, absl::StrFormat("%s: global address %p (+%d bytes) is outside every buffer of the "
                          "launch%s",
                          what, p, bytes, near));
}

void BlockRunner::Impl::CpAsync(ThreadState& t, void* smem, const void* gmem, uint32_t bytes,
                                uint32_t src_bytes) {
  if (bytes != 4 && bytes != 8 && bytes != 16) {
    Trap(t, absl::StrCat("cp_async of ", bytes, " bytes (4, 8 or 16)"));
  }
  if (src_bytes != 0 && src_bytes != bytes) {
    Trap(t, absl::StrCat("cp_async with ", src_bytes, " source bytes of ", bytes));
  }
  CheckShared(t, smem, bytes, "cp_async destination");
  if (reinterpret_cast<uintptr_t>(smem) % bytes != 0) {
    Trap(t, absl::StrFormat("cp_async destination at shared offset %d is not %d-byte aligned",
                            static_cast<uint8_t*>(smem) - smem_, bytes));
  }
  if (src_bytes != 0) {
    if (reinterpret_cast<uintptr_t>(gmem) % bytes != 0) {
      Trap(t, absl::StrFormat("cp_async source %p is not %d-byte aligned", gmem, bytes));
    }
    CheckGlobal(t, gmem, bytes, "cp_async source");
  }
  t.open_group.push_back(CopyOp{smem, gmem, bytes, src_bytes});
}

void BlockRunner::Impl::CpAsyncCommit(ThreadState& t) {
  t.groups.push_back(std::move(t.open_group));
  t.open_group.clear();
}

void BlockRunner::Impl::CpAsyncWait(ThreadState& t, int32_t n) {
  if (n < 0) Trap(t, absl::StrCat("cp_async_wait<", n, ">"));
  while (t.groups.size() > static_cast<size_t>(n)) {
    for (const CopyOp& c : t.groups.front()) {
      if (c.src_bytes == 0) {
        std::memset(c.dst, 0, c.bytes);
      } else {
        std::memcpy(c.dst, c.src, c.bytes);
      }
      SmemWritten(c.dst, c.bytes, t.tid);  // cp.async: the generic proxy
    }
    t.groups.pop_front();
  }
}

void BlockRunner::Impl::Trap(ThreadState& t, const std::string& message, const void* pc) {
  throw KernelFault{absl::AbortedError(absl::StrCat(Where(t), ": ", message)), pc};
}

BlockRunner::BlockRunner(const GridContext& grid) : impl_(std::make_unique<Impl>(grid)) {}
BlockRunner::~BlockRunner() = default;
absl::Status BlockRunner::Run(Dim3 block_idx) { return impl_->Run(block_idx); }

}  // namespace tilec::host
