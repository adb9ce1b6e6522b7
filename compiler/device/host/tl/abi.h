// The interface between a kernel compiled for the host target (a shared object
// built by clang from the generated CUDA C++ and the host twin of the device
// library) and tilec's SIMT emulator runtime (compiler/targets/host/emulator).
//
// The kernel side never links against tilec: the runtime hands every emulated
// thread a `Thread` whose `rt` table holds the operations that need the other
// threads of the block (barriers, warp collectives) or the runtime's
// bookkeeping (asynchronous copies, bounds checks). Those calls may switch to
// another thread's fiber before they return, and report errors by throwing a
// runtime exception through the kernel's frames, so the kernel is compiled
// with exceptions and unwind tables (clang's defaults).
//
// Each `__global__` function F gets two exported symbols (see tl/entry.h):
//   extern "C" void tilec_host_entry_F(tl::host::Thread*, void** args);
//   extern "C" int tilec_host_arity_F();
// `args` holds one pointer per kernel parameter, pointing at its value (the
// cuLaunchKernel convention).
//
// This header is plain C++ with no dependencies: the runtime includes it too.
// Bump kAbiVersion whenever a struct or the table changes.
#ifndef TILEC_DEVICE_HOST_TL_ABI_H_
#define TILEC_DEVICE_HOST_TL_ABI_H_

#include <cstdint>

namespace tl::host {

inline constexpr uint32_t kAbiVersion = 5;

// CUDA's uint3 / dim3 as seen by a thread.
struct Dim3 {
  unsigned x, y, z;
};

// Warp-collective operations: every lane of the warp must arrive at the same
// operation; the runtime computes all lanes' results at once.
enum WarpOp : uint32_t {
  kWarpShflBfly = 1,  // in: ShflIn, out: uint32_t
  kWarpShflIdx = 2,   // in: ShflIn, out: uint32_t
  kWarpLdmatrix = 3,  // in: LdmatrixIn, out: uint32_t[4] (first `num` used)
  kWarpMma = 4,       // in: MmaIn, out: float[4]
  kWarpVote = 5,      // in: VoteIn, out: uint64_t (ballot bits, or 0/1 for all/any)
  kWarpStmatrix = 6,  // in: StmatrixIn, out: none (writes shared memory)
  kWarpMfma = 7,      // in: MfmaIn, out: float[16] (the first 4 for a 16x16 tile)
};

enum VoteMode : int32_t { kVoteAll = 0, kVoteAny = 1, kVoteBallot = 2 };

// vote.sync.{all,any,ballot}: the lanes of `member_mask` take part (every lane
// executing it must be in the mask and name the same mask).
struct VoteIn {
  int32_t mode;  // VoteMode
  int32_t pred;
  uint64_t member_mask;
};

struct ShflIn {
  uint32_t value;  // this lane's 32-bit register
  int32_t lane;    // the lane mask (bfly) or the source lane (idx)
};

struct LdmatrixIn {
  const void* row;  // this lane's row address (used for lanes < 8 * num)
  int32_t num;      // 1, 2 or 4 matrices
  int32_t trans;    // .trans
};

// stmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16: this lane's row
// address and its registers (the inverse of ldmatrix).
struct StmatrixIn {
  void* row;      // this lane's row address (used for lanes < 8 * num)
  int32_t num;    // 1, 2 or 4 matrices
  int32_t trans;  // .trans
  uint32_t r[4];  // register j holds two elements of matrix j (first `num` used)
};

enum MmaKind : int32_t {
  kMmaM16N8K16F16F32 = 1,   // mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
  kMmaM16N8K16Bf16F32 = 2,  // mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
};

struct MmaIn {
  int32_t kind;  // MmaKind
  uint32_t a[4];
  uint32_t b[2];
  float c[4];
};

// AMD's matrix instructions over a 64-lane wavefront (tl/mfma.h):
// v_mfma_f32_{32x32x8,16x16x16}_{f16,bf16} (four 16-bit values per lane) and
// gfx942's v_mfma_f32_{32x32x16,16x16x32}_{fp8,bf8}_{fp8,bf8} (eight).
enum MfmaType : int32_t {
  kMfmaF16 = 1,
  kMfmaBf16 = 2,  // the _1k forms
  kMfmaFp8 = 3,   // float8_e4m3fnuz
  kMfmaBf8 = 4,   // float8_e5m2fnuz
};

struct MfmaIn {
  int32_t tile;    // T: 32 or 16
  int32_t a_type;  // MfmaType of the instruction's A operand
  int32_t b_type;  // and of its B operand (both 16-bit or both 8-bit)
  uint16_t a[8];   // operand bits, k = V * (lane / T) + j in a[j], V = 4 or 8
  uint16_t b[8];
  float c[16];  // accumulator registers (the first 4 for a 16x16 tile)
};

// The extent of a buffer a checked pointer may touch.
struct BufferBounds {
  const void* lo;    // first byte
  const void* hi;    // one past the last byte
  const char* name;  // for messages; never null
};

// A checked load or store that left its buffer (tl/buffer.h).
struct AccessFault {
  const void* addr;
  uint64_t bytes;
  BufferBounds bounds;
  int32_t shared;  // 1: a shared-memory buffer, 0: global
  int32_t store;   // 1: a store, 0: a load
  const void* pc;  // a return address inside the faulting access
};

// mbarrier operations (tl/mbarrier.h). `arg` and the result per operation.
enum MbarrierOp : uint32_t {
  kMbarInit = 1,             // arg: expected arrival count
  kMbarArrive = 2,           // arg: arrival count; returns the phase token
  kMbarArriveExpectTx = 3,   // arg: tx count (then one arrival); returns the token
  kMbarExpectTx = 4,         // arg: tx count
  kMbarCompleteTx = 5,       // arg: tx count
  kMbarTestWait = 6,         // arg: token; returns 1 when that phase completed
  kMbarTestWaitParity = 7,   // arg: phase parity; returns 1 when completed
  kMbarTryWait = 8,          // arg: token; blocks until complete; returns 1
  kMbarTryWaitParity = 9,    // arg: phase parity; blocks until complete; returns 1
  kMbarInval = 10,           // invalidates the barrier object
  kActiveMask = 12,          // bar: null; returns the lanes of the warp not exited
};

// The emulator's CUtensorMap (tl::TmaMap, 128 bytes, 64-byte aligned): the
// geometry cuTensorMapEncodeTiled takes, in the order it takes it, with
// interleave none, element strides 1, zero fill out of bounds. Dimension 0
// is the innermost (contiguous) one; strides[0] is the element size and
// strides[d] (d >= 1) the byte distance between consecutive indices of d.
// swizzle_bytes: 0 (none), 32, 64 or 128: 16-byte chunk bits 4.. of each
// shared address are XORed with bits 7.. (Swizzle<1|2|3, 4, 3>).
inline constexpr uint32_t kTensorMapMagic = 0x746d6170;  // "tmap"
inline constexpr int kTensorMapMaxRank = 5;

struct TensorMapDesc {
  uint32_t magic;  // kTensorMapMagic once encoded
  uint32_t rank;   // 1 .. 5
  uint32_t elem_bytes;
  uint32_t swizzle_bytes;
  const void* base;
  uint64_t dims[kTensorMapMaxRank];
  uint64_t strides[kTensorMapMaxRank];
  uint32_t box[kTensorMapMaxRank];
  uint32_t reserved;
};
static_assert(sizeof(TensorMapDesc) == 128, "a tensor map is 128 bytes");

// cp.async.bulk.tensor.<rank>d.shared::cluster.global.mbarrier::complete_tx::bytes:
// the box at `coords` (dimension 0 first; out-of-bounds elements read as
// zero) into shared memory at `smem`, completing box bytes of transactions
// on the mbarrier `bar`.
struct TmaLoadIn {
  void* smem;
  const TensorMapDesc* map;
  void* bar;
  int32_t rank;  // of the instruction: must be the map's
  int32_t coords[kTensorMapMaxRank];
};

struct Thread;

// Operations the runtime provides. All of them may throw (a runtime error
// unwinds the thread's fiber); none returns an error code.
struct Runtime {
  uint32_t abi_version;
  // bar.sync 0 over all threads of the block.
  void (*syncthreads)(Thread* self);
  // A warp-synchronous collective (WarpOp): deposits `in`, waits for all
  // lanes of the warp, and returns with this lane's result in `out`.
  void (*warp_collective)(Thread* self, uint32_t op, const void* in, void* out);
  // cp.async of `bytes` bytes (4, 8 or 16); `src_bytes` is `bytes` or 0 (the
  // destination is zero-filled and `gmem` is not read). The copy lands when a
  // later cp_async_wait retires its group.
  void (*cp_async)(Thread* self, void* smem, const void* gmem, uint32_t bytes, uint32_t src_bytes);
  void (*cp_async_commit)(Thread* self);
  // cp.async.wait_group n: all but the newest n committed groups land.
  void (*cp_async_wait)(Thread* self, int32_t n);
  // Errors unless [p, p + bytes) lies inside one of the launch's registered
  // global buffers (no-op when the launch registered none).
  void (*check_global)(Thread* self, const void* p, uint64_t bytes, const char* what);
  // Errors unless [p, p + bytes) lies inside the block's dynamic shared memory.
  void (*check_shared)(Thread* self, const void* p, uint64_t bytes, const char* what);
  // Aborts the launch with `message` (a failed device-side check).
  void (*trap)(Thread* self, const char* message);
  // --- version 2 ---
  // The registered global buffer holding p: returns 1 and fills *out; 0 when
  // the launch registered buffers but none holds p; 2 when it registered none
  // (accesses are then unchecked).
  int32_t (*lookup_global)(Thread* self, const void* p, BufferBounds* out);
  // Aborts the launch for an out-of-bounds checked access.
  void (*access_fault)(Thread* self, const AccessFault* fault);
  // The watchdog: aborts the launch once its time limit has passed. `pc` is
  // where the thread is (a return address in the kernel).
  void (*poll)(Thread* self, const void* pc);
  // An mbarrier operation (MbarrierOp) on the 8-byte object at `bar` in shared
  // memory; waits switch to the block's other threads. (kActiveMask, which
  // needs the warp's state too, goes through this entry.)
  uint64_t (*mbarrier)(Thread* self, uint32_t op, void* bar, uint64_t arg);
  // Reads of shared memory no thread wrote since the block started (only
  // when the launch asked for it, see Thread::check_uninit): [p, p + bytes)
  // is marked written / checked.
  void (*smem_written)(Thread* self, const void* p, uint64_t bytes);
  void (*smem_read)(Thread* self, const void* p, uint64_t bytes, const void* pc);
  // --- version 3 ---
  // A TMA load (TmaLoadIn). Like the hardware at its latest, the emulator
  // lands the box when a thread waits on (or tests) the barrier, or at once
  // when threads already wait on it; shared memory before then holds what it
  // held, so a read that does not wait sees old data.
  void (*tma_load)(Thread* self, const TmaLoadIn* in);
  // bar.sync id, count (id 1 .. 15; count a multiple of the warp size, at
  // most the block's threads, the same for every thread using the barrier).
  void (*named_barrier)(Thread* self, uint32_t id, uint32_t count);
  // TMA stores: `in` (bar unused) queues a store of the box at in->smem to
  // the tensor; in == null commits the queued ones as a group (wait < 0) or
  // retires all but the newest `wait` groups: reads their boxes from shared
  // memory then and writes them (elements outside the tensor dropped).
  void (*tma_store)(Thread* self, const TmaLoadIn* in, int32_t wait);
  // With check_uninit, shared memory written through the generic proxy
  // (threads' stores, cp.async, stmatrix) stays unfenced until its writer
  // executes fence.proxy.async; an async-proxy read (a wgmma operand, a TMA
  // store's box) of unfenced bytes is an error, as is one of unwritten bytes.
  void (*fence_proxy_async)(Thread* self);
  void (*async_read)(Thread* self, const void* p, uint64_t bytes, const void* pc);
};

// One emulated thread. The runtime owns it; the kernel reads it through
// tl::host::self().
struct Thread {
  Dim3 thread_idx;
  Dim3 block_idx;
  Dim3 block_dim;
  Dim3 grid_dim;
  uint8_t* smem;
  uint64_t smem_bytes;
  uint32_t warp_size;
  uint32_t lane;
  const Runtime* rt;
  void* impl;  // the runtime's private per-thread state
  // --- version 2 ---
  const void* pc;        // where the thread last entered the runtime (for messages)
  int32_t check_uninit;  // shared reads of never-written bytes are errors
};

}  // namespace tl::host

#endif  // TILEC_DEVICE_HOST_TL_ABI_H_
