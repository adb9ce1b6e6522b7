// The block runner's internals, shared by its implementation files:
// block.cc (fibers, scheduling, barriers, warp collectives, cp.async),
// block_checks.cc (bounds checks, the watchdog, uninitialised shared reads)
// and block_sync.cc (votes and mbarriers) and block_tma.cc (TMA loads). Internal to the emulator.
#ifndef TILEC_COMPILER_TARGETS_HOST_EMULATOR_BLOCK_IMPL_H_
#define TILEC_COMPILER_TARGETS_HOST_EMULATOR_BLOCK_IMPL_H_

#include <boost/context/fiber.hpp>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/targets/host/emulator/block.h"
#include "compiler/targets/host/emulator/stack_pool.h"
#include "compiler/targets/host/emulator/warp_ops.h"

namespace tilec::host {

namespace ctx = boost::context;

enum class State { kReady, kRunning, kBarrier, kCollective, kVote, kMbarrierWait, kDone };

struct CopyOp {
  void* dst;
  const void* src;
  uint32_t bytes;
  uint32_t src_bytes;
};

// A TMA store queued by a thread (block_tma.cc).
struct TmaStoreOp {
  tl::host::TensorMapDesc map;
  uint8_t* smem = nullptr;
  int32_t coords[tl::host::kTensorMapMaxRank] = {};
  const void* pc = nullptr;
};

// Thrown on a fiber to unwind it after a fault; caught at the fiber boundary.
// `pc` (when set) is resolved to a source line once the block has stopped.
struct KernelFault {
  absl::Status status;
  const void* pc = nullptr;
};

inline std::string Dims(const tl::host::Dim3& d) {
  return absl::StrFormat("(%u, %u, %u)", d.x, d.y, d.z);
}

// "0-15, 17, 20-31" for sorted ids.
std::string Ranges(const std::vector<int>& ids);

struct ThreadState {
  tl::host::Thread pub;
  BlockRunner::Impl* runner = nullptr;
  int tid = 0, warp = 0, lane = 0;
  State state = State::kReady;
  ctx::fiber fiber;   // this thread while it is suspended (or not started)
  ctx::fiber caller;  // the scheduler while this thread runs
  uint32_t op = 0;    // the collective it waits at
  uint32_t barrier_id = 0;  // the bar.sync it waits at (0: syncthreads)
  bool unfenced = false;    // wrote shared memory (generic proxy) since its last fence
  LaneOperands operands;
  uint64_t vote_mask = 0;                  // the member mask of the vote it waits at
  void* wait_bar = nullptr;                // the mbarrier it waits on
  uint32_t wait_parity = 0;                // ... for the phase of this parity to complete
  std::vector<CopyOp> open_group;          // cp.async not yet committed
  std::deque<std::vector<CopyOp>> groups;  // committed, oldest first
  std::vector<TmaStoreOp> store_open;      // TMA stores not yet committed
  std::deque<std::vector<TmaStoreOp>> store_groups;  // committed, oldest first
};

class BlockRunner::Impl {
 public:
  explicit Impl(const GridContext& grid);
  ~Impl();

  absl::Status Run(Dim3 block_idx);

  // The runtime table's operations, on the calling thread's fiber.
  void Syncthreads(ThreadState& t);
  void NamedBarrier(ThreadState& t, uint32_t id, uint32_t count);
  void Collective(ThreadState& t, uint32_t op, const void* in, void* out);
  void CpAsync(ThreadState& t, void* smem, const void* gmem, uint32_t bytes, uint32_t src_bytes);
  void CpAsyncCommit(ThreadState& t);
  void CpAsyncWait(ThreadState& t, int32_t n);
  void CheckGlobal(ThreadState& t, const void* p, uint64_t bytes, const char* what);
  void CheckShared(ThreadState& t, const void* p, uint64_t bytes, const char* what);
  [[noreturn]] void Trap(ThreadState& t, const std::string& message, const void* pc = nullptr);
  // block_checks.cc
  int32_t LookupGlobal(ThreadState& t, const void* p, tl::host::BufferBounds* out);
  [[noreturn]] void AccessFault(ThreadState& t, const tl::host::AccessFault& f);
  void Poll(ThreadState& t, const void* pc);
  // `writer`: the thread whose generic-proxy write it is, or -1 for an
  // async-proxy write (a TMA load), which needs no fence.
  void SmemWritten(const void* p, uint64_t bytes, int writer);
  void SmemRead(ThreadState& t, const void* p, uint64_t bytes, const void* pc);
  void FenceProxyAsync(ThreadState& t);
  void AsyncRead(ThreadState& t, const void* p, uint64_t bytes, const void* pc);
  // block_sync.cc
  uint64_t BlockOp(ThreadState& t, uint32_t op, void* bar, uint64_t arg);
  void Vote(ThreadState& t, const tl::host::VoteIn& in, uint64_t* out);
  // block_tma.cc
  void TmaLoad(ThreadState& t, const tl::host::TmaLoadIn& in);
  void TmaStore(ThreadState& t, const tl::host::TmaLoadIn* in, int32_t wait);

 private:
  struct WarpState {
    int first = 0, size = 0, arrived = 0;
    uint32_t op = 0;
  };

  static const tl::host::Runtime kRuntime;

  void StartFiber(ThreadState& t);
  void Yield(ThreadState& t) { t.caller = std::move(t.caller).resume(); }
  void Release(ThreadState& t) {
    t.state = State::kReady;
    runnable_.push_back(t.tid);
  }
  void Fail(absl::Status status, const void* pc = nullptr) {
    if (error_.ok()) {
      error_ = std::move(status);
      error_pc_ = pc;
    }
  }
  std::string Where() const {
    return absl::StrCat("kernel ", grid_.kernel_name, ", block ", Dims(block_idx_));
  }
  std::string Where(const ThreadState& t) const {
    return absl::StrCat(Where(), ", thread ", Dims(t.pub.thread_idx));
  }
  // " at kernel.cu:12:5" for a code address, or "" when it has no line.
  std::string At(const void* pc) const;
  bool Expired() const;
  absl::Status DeadlineError(const ThreadState& t, const void* pc) const;
  absl::Status Diagnose() const;
  absl::Status DiagnoseSync() const;  // block_sync.cc: votes and mbarriers
  void TearDown();
  // The mbarrier at `bar` after checking its address, for the runtime ops.
  uint64_t* BarrierWord(ThreadState& t, void* bar);
  std::string BarrierName(const void* bar) const;
  // TMA loads issued and not landed yet (block_tma.cc).
  struct PendingTma {
    tl::host::TensorMapDesc map;
    uint8_t* smem = nullptr;
    void* bar = nullptr;
    uint64_t bytes = 0;
    int32_t coords[tl::host::kTensorMapMaxRank] = {};
    const void* pc = nullptr;
  };
  // Lands the pending loads on `bar`, in issue order, completing their
  // transactions (which may complete the phase and release its waiters).
  void LandTma(ThreadState& t, void* bar);
  // Checks `in` against its map and the destination's alignment; the box's bytes.
  uint64_t CheckTmaBox(ThreadState& t, const tl::host::TmaLoadIn& in, const char* what);
  // Moves the box at `coords` between the tensor and shared memory at `smem`
  // (swizzled as the map says): loads zero-fill outside the tensor, stores
  // drop what lies outside.
  void TransferBox(ThreadState& t, const tl::host::TensorMapDesc& m, uint8_t* smem,
                   const int32_t* coords, bool store);
  bool TmaPendingOn(const void* bar) const;
  absl::Status TmaLeftPending() const;  // OK when none is pending

  const GridContext& grid_;
  const int nthreads_;
  tl::host::Dim3 block_idx_{0, 0, 0};
  uint8_t* smem_ = nullptr;
  std::vector<uint8_t> written_;  // per shared byte, when check_uninit
  // Per shared byte, when check_uninit: 1 + the thread whose generic-proxy
  // write no fence.proxy.async of its has covered yet; 0 when none.
  std::vector<int32_t> unfenced_;
  StackPool stacks_;
  std::vector<ThreadState> threads_;
  std::vector<WarpState> warps_;
  std::vector<LaneOperands> lanes_;  // scratch for ExecuteWarpOp
  std::deque<int> runnable_;
  std::vector<PendingTma> tma_pending_;
  struct NamedBarrierState {
    uint32_t arrived = 0, count = 0;
  };
  NamedBarrierState named_[16];
  int at_barrier_ = 0;
  int done_ = 0;
  absl::Status error_;
  const void* error_pc_ = nullptr;
};

}  // namespace tilec::host

#endif  // TILEC_COMPILER_TARGETS_HOST_EMULATOR_BLOCK_IMPL_H_
