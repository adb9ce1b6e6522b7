// Layouts of tile buffers: where each element of a fragment lives (which
// thread, which slot of that thread's registers) and where each element of a
// shared buffer is stored. docs/cuda_backend.md ("Common templates", "Layout
// plan") fixes the formulas; this file is their one implementation on the
// compiler side.
//
// A FragmentLayout is a mixed-radix map. Every logical dimension d of the
// fragment is written as digits, most significant first; each digit lives
// either in the thread index or in the local (per-thread register) index,
// with a stride there. Replication digits belong to no dimension: they are
// thread digits whose value does not change the element, so `replicate`
// threads hold a copy of each element. For example the mma accumulator's row
// is the digits (wm, mi, h, g) and its column (wn, ni, q, e); wm, wn, g, q are
// thread digits (strides 32, 32*WarpsM, 4, 1) and mi, ni, h, e local digits.
//
// Invariants (checked by MakeFragmentLayout):
// - thread digits (replication included), sorted by stride, form a
//   mixed-radix numbering of [0, threads): the smallest stride is 1 and each
//   next stride is the previous stride times the previous extent; their
//   product is `threads`. The local digits do the same for [0, local_size).
// - the digits of dimension d have a product >= shape[d]. When it is larger,
//   the layout is padded: some (thread, local) pairs map to indices past the
//   shape, and `valid` says which pairs hold a real element.
// So (thread, local) -> logical index is total, and every logical element is
// held by exactly `replicate` threads, at the same local index in each.
//
// The IR expressions use integer * + / % on non-negative int32 values only
// (C and floor semantics agree), simplified (no x*1, x+0, x%c when x < c).
#ifndef TILEC_COMPILER_INFERENCE_LAYOUT_H_
#define TILEC_COMPILER_INFERENCE_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/ir.h"

namespace tilec::inference {

// One digit of a fragment layout.
struct LayoutDigit {
  int dim = -1;            // logical dimension; -1 for a replication digit
  int64_t extent = 1;      // number of values of the digit (>= 1)
  bool on_thread = false;  // digit of the thread index (else of the local index)
  int64_t stride = 1;      // weight in the thread index or the local index
  // Weight in the logical index of `dim`; for a replication digit, in the
  // replica number (replication digits are listed most significant first).
  int64_t place = 0;
};

// Where each element of a fragment lives. Build with MakeFragmentLayout or
// the named constructors below; the fields are filled consistently by them.
struct FragmentLayout {
  std::string kind;            // "mma_accumulator(...)", "blocked(...)", ...
  std::vector<int64_t> shape;  // the fragment's logical shape
  int64_t threads = 0;         // threads of the block
  int64_t local_size = 0;      // elements (slots) per thread
  int64_t replicate = 1;       // threads holding each element
  // All digits: per dimension most significant first, dimensions in order,
  // then the replication digits.
  std::vector<LayoutDigit> digits;

  // Variables the expressions below are over (int32).
  ir::Var thread_var;               // thread index in the block, [0, threads)
  ir::Var local_var;                // local slot, [0, local_size)
  ir::Var replica_var;              // replica number, [0, replicate)
  std::vector<ir::Var> index_vars;  // one per dimension

  // Inverse map: the logical index held by slot `local_var` of thread
  // `thread_var`, one expression per dimension.
  std::vector<ir::Expr> logical;
  // Over thread_var and local_var: whether that slot holds a real element
  // (null when the layout has no padding).
  ir::Expr valid;
  // Forward maps over index_vars: the local slot of an element, and the
  // thread holding replica `replica_var` of it.
  ir::Expr local;
  ir::Expr thread;
  // Over thread_var: which replica that thread holds (IntImm 0 when
  // replicate == 1).
  ir::Expr replica;

  // The same maps computed in C++ (for tests and for the inference itself).
  std::vector<int64_t> LogicalAt(int64_t thread, int64_t local) const;
  bool ValidAt(int64_t thread, int64_t local) const;
  int64_t LocalOf(const std::vector<int64_t>& index) const;
  int64_t ThreadOf(const std::vector<int64_t>& index, int64_t replica) const;
  int64_t ReplicaOf(int64_t thread) const;

  // Number of consecutive elements of the last dimension held by one thread
  // in consecutive local slots (the innermost local digit of the last
  // dimension when it has stride 1 and place 1; else 1).
  int64_t ContiguousRun() const;

  // One line: kind, shape, threads, local_size, replicate and the digits.
  std::string ToString() const;
};

// Builds a layout from its digits (per dimension most significant first; any
// order across dimensions; dim -1 for replication). `place` is computed.
// INTERNAL error (a compiler bug) when the invariants above do not hold.
absl::StatusOr<FragmentLayout> MakeFragmentLayout(std::string kind, std::vector<int64_t> shape,
                                                  int64_t threads, std::vector<LayoutDigit> digits);

// Two layouts are the same when they have the same shape, threads and
// local_size and every (thread, local) slot holds the same element (padding
// slots agree on being padding).
bool SameLayout(const FragmentLayout& a, const FragmentLayout& b);

// ---------------------------------------------------------------------------
// Gemm warp partition (docs/cuda_backend.md "Warp partition").

struct GemmWarpPartition {
  int64_t warps_m = 1;
  int64_t warps_n = 1;
  // Groups of warps_m * warps_n warps that each compute the whole tile (the
  // block has 32 * warps_m * warps_n * replicas threads). Warp w computes the
  // part (wm, wn) = (w % warps_m, (w / warps_m) % warps_n); the accumulator
  // and register-A layouts are replicated over w / (warps_m * warps_n). More
  // than 1 only when no exact partition uses every warp (small tiles).
  int64_t replicas = 1;
  // False when no factorisation of any number of warps divides M and N as
  // the templates require (M % (16 * warps_m) == 0, N % (8 * warps_n) ==
  // 0); the partition then uses every warp, pads the least, and the
  // accumulator layout is padded.
  bool exact = true;
  // Hopper's warpgroup mma (sm_90a; docs/cuda_backend.md "wgmma"): warps
  // come in warpgroups of 4 consecutive warps, warps_m = 4 * wg_m (a
  // multiple of 4) and warps_n = wg_n; warpgroup g = w / 4 computes the
  // (M / wg_m) x (N / wg_n) part (g % wg_m, (g / wg_m) % wg_n) with
  // m64nNk16 (k32 for float8) instructions, MI = M / wg_m / 64 of them per
  // k-step. Always exact.
  bool wgmma = false;
  // AMD's matrix cores (docs/amdgpu.md "MFMA"): 0, or the MFMA tile edge.
  // Warps are then 64-lane wavefronts (the block has 64 * warps_m * warps_n
  // * replicas threads) and each computes its part in MFMA x MFMA tiles:
  // 32 (v_mfma_f32_32x32x8, k-steps of 8) or 16 (v_mfma_f32_16x16x16,
  // k-steps of 16).
  int64_t mfma = 0;
  bool operator==(const GemmWarpPartition& o) const {
    return warps_m == o.warps_m && warps_n == o.warps_n && replicas == o.replicas &&
           exact == o.exact && wgmma == o.wgmma && mfma == o.mfma;
  }
};

// For W = warps (docs/cuda_backend.md "Warp partition"): FullRow: (W, 1)
// when M % (16 * W) == 0 (and N % 8 == 0), else as Square. FullCol: (1, W)
// when N % (8 * W) == 0 (and M % 16 == 0), else as Square. Square: the
// factorisation W = warps_m * warps_n with M % (16 * warps_m) == 0 and
// N % (8 * warps_n) == 0 minimising |M / warps_m - N / warps_n|, ties to the
// larger warps_m. When W has no exact partition, the same is tried with W/2,
// W/4, ... warps (each divisor of `warps`, descending), the other warps
// replicating (replicas = warps / W). When none is exact even with one warp,
// the partition of all the warps that pads the least is taken (the policy's
// own when its condition holds, else Square's smallest padded tile, M
// rounded up to 16 * warps_m times N rounded up to 8 * warps_n, then the
// same tie rules), with exact = false. Requires warps, M, N >= 1.
GemmWarpPartition ChooseWarpPartition(ir::GemmPolicy policy, int64_t m, int64_t n, int64_t warps);

// The wgmma partition of an [M, N] tile over `warps` warps, or nullopt when
// there is none: warps a multiple of 4; over the divisors G of warps / 4
// (descending; the other warpgroups replicate), the factorisation G = wg_m *
// wg_n with M % (64 * wg_m) == 0, N % (8 * wg_n) == 0, N / wg_n <= 256 and
// N / wg_n a multiple of `n_align` when wg_n > 1 (an MN-major B's swizzle
// width in elements: each warpgroup's columns start a swizzle block),
// preferring the largest wg_m (the widest instructions).
// With `one_tile` (A from registers) only partitions whose warpgroups each
// compute one m64 tile (M == 64 * wg_m) qualify.
std::optional<GemmWarpPartition> ChooseWgmmaPartition(int64_t m, int64_t n, int64_t warps,
                                                      int64_t n_align, bool one_tile = false);

// The MFMA partition of an [M, N] tile over `waves` 64-lane wavefronts: the
// ChooseWarpPartition rules with 32 x 32 tiles (mfma = 32) when they give an
// exact partition with no more replicas than 16 x 16 tiles would, else the
// 16 x 16 partition (mfma = 16, padded when not exact).
GemmWarpPartition ChooseMfmaPartition(ir::GemmPolicy policy, int64_t m, int64_t n, int64_t waves);

// ---------------------------------------------------------------------------
// Fragment layout constructors. Each requires positive sizes.

// The m16n8k16 accumulator of an [M, N] gemm output: thread tx, lane = tx %
// 32, g = lane / 4, q = lane % 4, w = tx / 32, wm = w % warps_m, wn = (w /
// warps_m) % warps_n; slot ((mi * NI + ni) * 2 + h) * 2 + e holds row wm * WM + mi * 16
// + h * 8 + g, column wn * WN + ni * 8 + 2 * q + e, with WM = M / warps_m, WN
// = N / warps_n, MI = WM / 16, NI = WN / 8. threads = 32 * warps_m *
// warps_n * replicas; replicate = replicas. M and N that do not divide are
// padded (rows past M, columns past N are padding).
//
// With p.wgmma (the wgmma accumulator, the PTX ISA's m64nNk16 D fragment per
// warpgroup): wg_m = warps_m / 4, wgm = (w / 4) % wg_m, wgn = (w / 4 / wg_m)
// % wg_n, WGM = M / wg_m, WGN = N / wg_n, MI = WGM / 64, NI = WGN / 8; slot
// ((mi * NI + ni) * 2 + h) * 2 + e holds row wgm * WGM + mi * 64 + (w % 4) *
// 16 + h * 8 + g, column wgn * WGN + ni * 8 + 2 * q + e. With MI = 1 this is
// the m16n8k16 accumulator of the same warps_m x warps_n.
//
// With p.mfma (AMD's MFMA D registers of C^T = B^T A^T, wave64; lane = tx %
// 64, w = tx / 64, MI = WM / T, NI = WN / T for the tile T = p.mfma): with
// T = 32, slot (mi * NI + ni) * 16 + r holds row wm * WM + mi * 32 + lane %
// 32, column wn * WN + ni * 32 + 8 * (r / 4) + 4 * (lane / 32) + r % 4; with
// T = 16, slot (mi * NI + ni) * 4 + r holds row wm * WM + mi * 16 + lane %
// 16, column wn * WN + ni * 16 + 4 * (lane / 16) + r. Runs of 4 columns sit
// in consecutive slots, and with warps_n = 1 this is RegisterA's layout of
// an [M, N] A operand (a product feeds the next gemm in registers).
FragmentLayout MmaAccumulator(int64_t m, int64_t n, const GemmWarpPartition& p);

// The register A operand of gemm_rs for an [M, K] A (shape [K, M] when
// `transposed`): the accumulator layout of an [M, K] output with warps_n = 1
// over the warp_m slices, replicated over the warps_n warps of the gemm's
// partition: slot ((mi * (K / 8) + kk) * 2 + h) * 2 + e holds row wm * WM +
// mi * 16 + h * 8 + g, k = kk * 8 + 2 * q + e. threads = 32 * warps_m *
// warps_n * replicas; replicate = warps_n * replicas.
//
// With p.mfma it is the MFMA A operand (wave64): with T = 32, slot (mi * KI
// + kk) * 4 + j holds row wm * WM + mi * 32 + lane % 32, k = kk * 8 + 4 *
// (lane / 32) + j (KI = K / 8); with T = 16, row wm * WM + mi * 16 + lane %
// 16, k = kk * 16 + 4 * (lane / 16) + j (KI = K / 16).
FragmentLayout RegisterA(int64_t m, int64_t k, const GemmWarpPartition& p, bool transposed);

// Row-major flat index split into `vector`-element runs dealt round-robin to
// the threads (run r to thread r % threads, slot (r / threads) * vector + v),
// built per dimension from the last: the last dimension gives the vector
// digit (vector must divide it; else vector 1 is used), then each dimension
// takes the largest divisor of the remaining threads not above its remaining
// extent as a thread digit and keeps the rest as a local digit (padded when
// it does not divide). Threads left over are replication.
FragmentLayout Blocked(const std::vector<int64_t>& shape, int64_t threads, int64_t vector);

// Every thread holds every element (slot = row-major flat index);
// replicate = threads.
FragmentLayout Replicated(const std::vector<int64_t>& shape, int64_t threads);

// The layout of reduce(src, dim)'s result: `parent` with dimension `dim`
// removed. Its thread digits become replication (every thread that held a
// part of a row holds the row's result), its local digits are dropped and
// the remaining local slots renumbered in the same order. A 1-D parent gives
// shape [1].
FragmentLayout Projected(const FragmentLayout& parent, int dim);

// ---------------------------------------------------------------------------
// Shared-memory layouts (docs/cuda_backend.md "Shared-memory layouts").

struct SharedLayout {
  enum class Kind : uint8_t { kRowMajor, kSwizzled };
  Kind kind = Kind::kRowMajor;
  std::vector<int64_t> shape;  // the buffer's shape
  int64_t rows = 1;            // product of all but the last dim
  int64_t cols = 1;            // the last dim
  int64_t elem_bytes = 1;

  int64_t tile_rows = 1;        // rows of one matrix: the dim before the last (1 for 1-D)

  // Offset in elements of (r, c) of the [rows, cols] view (device twin:
  // tl::RowMajor, tl::Swizzled in tl/layout.h):
  //   RowMajor: r * cols + c.
  //   Swizzled: RB = cols * E, chunk k = c * E / 16, e = c % (16 / E);
  //     RB <= 128: offset = r * cols + (k ^ ((r / (128 / RB)) % (RB / 16))) * (16 / E) + e;
  //     RB >  128: matrix t = r / tile_rows, row i = r % tile_rows, block k / 8 of
  //       128 bytes; byte t * tile_rows * RB + (k / 8) * tile_rows * 128 + i * 128 +
  //       ((k % 8) ^ (i % 8)) * 16, plus e elements.
  int64_t Offset(int64_t r, int64_t c) const;
  // The same as an IR expression (int32).
  ir::Expr OffsetExpr(const ir::Expr& r, const ir::Expr& c) const;
  // Offset of buffer[indices...] (one index per dimension of `shape`; the
  // leading ones flattened row-major into r).
  ir::Expr IndexExpr(const std::vector<ir::Expr>& indices) const;

  std::string ToString() const;  // "row_major[64, 32]", "swizzled[64, 32] x2B"
};

// Whether rows of `cols` elements of `elem_bytes` bytes can be swizzled:
// the row is 32 or 64 bytes, or a multiple of 128 bytes (so that the swizzle
// stays inside the row).
bool CanSwizzle(int64_t cols, int64_t elem_bytes);

SharedLayout RowMajorLayout(const std::vector<int64_t>& shape, int64_t elem_bytes);
// Requires CanSwizzle(shape.back(), elem_bytes).
SharedLayout SwizzledLayout(const std::vector<int64_t>& shape, int64_t elem_bytes);

}  // namespace tilec::inference

#endif  // TILEC_COMPILER_INFERENCE_LAYOUT_H_
