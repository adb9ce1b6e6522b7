// Language features that produce device code (T.clamp, T.any_of / T.all_of,
// T.atomic_max / T.atomic_min, tvm.tir helpers, bit operations on the
// unsigned types, generator expressions and classes evaluated while a kernel
// is built),
// emitted for sm_80 and sm_90a, compiled by NVRTC, and run on the SIMT
// emulator against the reference interpreter on random inputs at ragged
// sizes. TILEC_TEST_SEED reproduces a run.
#include <string>
#include <vector>

#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::tilec::testing::BindingList;
using ::tilec::testing::CompileSource;
using ::tilec::testing::EmitFor;
using ::tilec::testing::ExpectEmulatorMatchesInterpreter;
using ::tilec::testing::TestSeed;

constexpr char kKernels[] = R"py(
import tilelang
import tilelang.language as T
import tvm
from tvm import tir
from dataclasses import dataclass


@dataclass
class Tiling:
    block_M: int = 16
    block_N: int = 16

    def grid(self, M, N):
        return tilelang.cdiv(N, self.block_N), tilelang.cdiv(M, self.block_M)


def clamp(M, N, lo, hi, dtype="float16"):
    tiles = Tiling()

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), "int32")):
        with T.Kernel(*tiles.grid(M, N), threads=128) as (bx, by):
            for i, j in T.Parallel(tiles.block_M, tiles.block_N):
                r = by * tiles.block_M + i
                c = bx * tiles.block_N + j
                if r < M and c < N:
                    B[r, c] = T.clamp(A[r, c] * 2, lo, hi)
                    C[r, c] = T.clamp(r - c, -3, 5)
    return main


def any_all(M, block_M=32):
    @T.prim_func
    def main(Mask: T.Tensor((M, 4), "bool"), B: T.Tensor((M,), "int32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
            for i in T.Parallel(block_M):
                r = bx * block_M + i
                if r < M:
                    B[r] = T.if_then_else(T.any_of(Mask[r, 1:4]), 1, 0) + 2 * T.if_then_else(T.all_of(Mask[r, :]), 1, 0)
    return main


def row_extrema(M, N, block_N=16, dtype="float32", threads=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), Mx: T.Tensor((M,), dtype), Mn: T.Tensor((M,), dtype),
             Ci: T.Tensor((M,), "int32")):
        with T.Kernel(T.ceildiv(N, block_N), M, threads=threads) as (bx, by):
            for j in T.Parallel(block_N):
                c = bx * block_N + j
                if c < N:
                    T.atomic_max(Mx[by], A[by, c])
                    T.atomic_min(Mn[by], A[by, c])
                    T.atomic_min(Ci[by], T.cast(A[by, c] * 100, "int32"))
    return main


def block_max(M, N, block_N=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), Out: T.Tensor((M, T.ceildiv(N, block_N)), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), M, threads=32) as (bx, by):
            S = T.alloc_shared((1,), "float32")
            T.fill(S, -T.infinity("float32"))
            for j in T.Parallel(block_N):
                c = bx * block_N + j
                if c < N:
                    T.atomic_max(S[0], A[by, c])
            Out[by, bx] = S[0]
    return main


def _unpack(nbit, val, pos, dtype):
    mask = tir.const((1 << nbit) - 1, "uint8")
    return ((val >> (pos * nbit).astype("uint8")) & mask).astype(dtype)


def dequant(M, N, num_bits=4, block_M=16, storage="uint8"):
    per = tvm.DataType(storage).bits // num_bits

    @T.prim_func
    def main(B: T.Tensor((M, N // per), storage), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
            for i, j in T.Parallel(block_M, N):
                r = bx * block_M + i
                if r < M:
                    C[r, j] = _unpack(num_bits, B[r, j // per], j % per, "float16")
    return main


def group_quant(M, N, blk_m=8, group=128):
    qmax = 448.0

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Q: T.Tensor((M, N), "float8_e4m3"),
             S: T.Tensor((M, T.ceildiv(N, group)), "float32")):
        with T.Kernel(T.ceildiv(M, blk_m), T.ceildiv(N, group), threads=128) as (bx, by):
            x = T.alloc_fragment((blk_m, group), "float32")
            amax = T.alloc_fragment((blk_m,), "float32")
            q = T.alloc_fragment((blk_m, group), "float32")
            q8 = T.alloc_fragment((blk_m, group), "float8_e4m3")
            T.annotate_layout({x: T.Fragment(x.shape, forward_thread_fn=lambda i, j: (i // 2) * 32 + j % 32)})
            T.copy(X[bx * blk_m:(bx + 1) * blk_m, by * group:(by + 1) * group], x)
            T.reduce_absmax(x, amax, dim=1)
            for i in T.Parallel(blk_m):
                amax[i] = T.max(amax[i], 1e-4) / qmax
            for i, j in T.Parallel(blk_m, group):
                q[i, j] = T.clamp(x[i, j] / amax[i], -qmax, qmax)
            T.copy(q, q8)
            for i in T.Parallel(blk_m):
                if bx * blk_m + i < M:
                    S[bx * blk_m + i, by] = amax[i]
            T.copy(q8, Q[bx * blk_m:(bx + 1) * blk_m, by * group:(by + 1) * group])
    return main


def block_sparse_gemm(M, N, K, cond=2, block=32, num_stages=2, where="global"):
    mask_shape = (M // block, N // block, K // block, cond)

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             Mask: T.Tensor(mask_shape, "bool"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(N // block, M // block, threads=128) as (bx, by):
            As = T.alloc_shared((block, block), "float16")
            Bs = T.alloc_shared((block, block), "float16")
            acc = T.alloc_fragment((block, block), "float32")
            mask = T.alloc_local((cond,), "bool")
            T.clear(acc)
            for k in T.Pipelined(K // block, num_stages=num_stages):
                for i in T.serial(cond):
                    mask[i] = Mask[by, bx, k, i]
                if T.any_of(Mask[by, bx, k, :]) if where == "global" else T.all_of(mask):
                    T.copy(A[by * block, k * block], As)
                    T.copy(B[k * block, bx * block], Bs)
                    T.gemm(As, Bs, acc)
            T.copy(acc, C[by * block, bx * block])
    return main


def tile_extrema(K, M, N, block_M=16, block_N=16):
    @T.prim_func
    def main(A: T.Tensor((K, M, N), "float32"), Mx: T.Tensor((M, N), "float32"),
             Mn: T.Tensor((M, N), "float32"), Rows: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), K, threads=64) as (bx, by, bz):
            frag = T.alloc_fragment((block_M, block_N), "float32")
            sh = T.alloc_shared((block_M, block_N), "float32")
            row = T.alloc_shared((block_M,), "float32")
            T.copy(A[bz, bx * block_M:(bx + 1) * block_M, by * block_N:(by + 1) * block_N], frag)
            T.copy(frag, sh)
            T.atomic_max(Mx[bx * block_M:(bx + 1) * block_M, by * block_N:(by + 1) * block_N], frag)
            T.atomic_min(Mn[bx * block_M, by * block_N], sh)
            T.fill(row, -T.infinity("float32"))
            for i, j in T.Parallel(block_M, block_N):
                T.atomic_max(row[i], sh[i, j])
            T.atomic_max(Rows[bx * block_M:(bx + 1) * block_M], row)
    return main


def one_block(N):
    @T.prim_func
    def main(Src: T.Tensor((N,), "float32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(threads=32):
            frag = T.alloc_fragment((N,), "float32")
            for i in T.Parallel(N):
                frag[i] = Src[i] * 3
            for i in T.Parallel(N):
                T.atomic_max(Out[i], frag[i])
    return main


def strided_sum(M, N, step, block_M=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
            for i in T.Parallel(block_M):
                row = bx * block_M + i
                if row < M:
                    B[row] = sum(A[row, k] * (k + 1) for k in range(0, N, step))
    return main


def unsigned_bits(N, dtype="uint32", block=32):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype),
             D: T.Tensor((N,), dtype), E: T.Tensor((N,), "int32"), F: T.Tensor((N,), dtype),
             G: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                k = bx * block + i
                if k < N:
                    B[k] = ~A[k]
                    C[k] = (A[k] >> 3) ^ (A[k] << 5)
                    D[k] = A[k] // 7 + A[k] % 5
                    E[k] = T.if_then_else(A[k] > B[k], 1, 0) + T.if_then_else(A[k] <= 12345, 2, 0)
                    F[k] = T.min(A[k], T.max_value(dtype) - A[k])
                    G[k] = T.cast(A[k], "float32")
    return main
)py";

void Check(const std::string& function, const BindingList& bindings, uint64_t seed,
           std::vector<std::string> written) {
  absl::StatusOr<ir::Program> p = CompileSource("language.py", kKernels, function, bindings);
  ASSERT_TRUE(p.ok()) << p.status();
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<CudaSource> src = EmitFor(*p, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    absl::StatusOr<NvrtcResult> cubin = CompileCuda(src->code, p->name + ".cu", arch);
    EXPECT_TRUE(cubin.ok()) << cubin.status();
    ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = TestSeed(seed), .written = written});
  }
}

TEST(LanguageOnEmulator, ClampRagged) {
  Check("clamp", {{"M", "45"}, {"N", "37"}, {"lo", "-0.5"}, {"hi", "0.75"}}, 31, {"B", "C"});
}

TEST(LanguageOnEmulator, ClampBfloat16) {
  Check("clamp", {{"M", "17"}, {"N", "50"}, {"lo", "-1"}, {"hi", "0.5"}, {"dtype", "bfloat16"}},
        32, {"B", "C"});
}

TEST(LanguageOnEmulator, AnyOfAllOfRagged) { Check("any_all", {{"M", "77"}}, 33, {"B"}); }

TEST(LanguageOnEmulator, AtomicMaxMinFloat32) {
  Check("row_extrema", {{"M", "7"}, {"N", "45"}}, 35, {"Mx", "Mn", "Ci"});
}

TEST(LanguageOnEmulator, AtomicMaxMinFloat16ManyThreads) {
  Check("row_extrema", {{"M", "5"}, {"N", "77"}, {"block_N", "64"}, {"dtype", "float16"},
                        {"threads", "64"}},
        36, {"Mx", "Mn", "Ci"});
}

TEST(LanguageOnEmulator, AtomicMaxIntoShared) {
  Check("block_max", {{"M", "3"}, {"N", "150"}}, 37, {"Out"});
}

TEST(LanguageOnEmulator, TirHelperDequantRagged) {
  Check("dequant", {{"M", "37"}, {"N", "24"}}, 38, {"C"});
  Check("dequant", {{"M", "21"}, {"N", "16"}, {"num_bits", "2"}}, 39, {"C"});
}

// T.Fragment in T.annotate_layout is accepted and ignored (tilec infers
// fragment layouts); the values are the same.
TEST(LanguageOnEmulator, GroupQuantWithFragmentHintRagged) {
  Check("group_quant", {{"M", "20"}, {"N", "300"}}, 40, {"Q", "S"});
}

// T.any_of / T.all_of deciding whether a pipelined step copies and
// multiplies (the block-sparse pattern of TileLang's any_of test).
TEST(LanguageOnEmulator, BlockSparseGemmAnyOfAllOf) {
  Check("block_sparse_gemm", {{"M", "64"}, {"N", "96"}, {"K", "128"}}, 41, {"C"});
  Check("block_sparse_gemm", {{"M", "64"}, {"N", "64"}, {"K", "96"}, {"where", "local"}}, 42,
        {"C"});
}

// The tile form of T.atomic_max / T.atomic_min: fragment and shared sources,
// global destinations given as a region and as a head element, clipped at the
// ragged border.
TEST(LanguageOnEmulator, TileAtomicMaxMinRagged) {
  Check("tile_extrema", {{"K", "3"}, {"M", "37"}, {"N", "29"}}, 43, {"Mx", "Mn", "Rows"});
}

// T.Kernel(threads=...) without grid extents: one block.
TEST(LanguageOnEmulator, KernelWithoutGrid) { Check("one_block", {{"N", "45"}}, 44, {"Out"}); }

TEST(LanguageOnEmulator, GeneratorSumRagged) {
  Check("strided_sum", {{"M", "50"}, {"N", "13"}, {"step", "4"}}, 34, {"B"});
}

// ~, shifts, xor, floor division and modulo, comparison, T.min and the
// conversion to float32 on the unsigned types; the random inputs cover the whole range, top bit included,
// so signed arithmetic anywhere would show.
TEST(LanguageOnEmulator, UnsignedBitsRagged) {
  for (const char* dtype : {"uint16", "uint32", "uint64"}) {
    SCOPED_TRACE(dtype);
    Check("unsigned_bits", {{"N", "77"}, {"dtype", dtype}}, 51, {"B", "C", "D", "E", "F", "G"});
  }
}

}  // namespace
}  // namespace tilec::cuda
