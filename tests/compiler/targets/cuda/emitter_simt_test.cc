// Per-thread code: kernels that read the thread index (T.get_thread_binding,
// threads=(x, y)), with T.alloc_local buffers private to each thread, scalar
// atomics per thread, branches on the thread index, mixed with collective
// tile operators. The interpreter is checked against a float64 reference,
// the emulator (code emitted for sm_80 and sm_90a, compiled by NVRTC) against
// the interpreter, on random inputs at ragged sizes. TILEC_TEST_SEED
// reproduces a run.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/interp/interp.h"
#include "compiler/ir/printer.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::tilec::testing::BindingList;
using ::tilec::testing::CompileSource;
using ::tilec::testing::EmitFor;
using ::tilec::testing::ExpectEmulatorMatchesInterpreter;
using ::tilec::testing::TestSeed;

constexpr char kKernels[] = R"py(
import tilelang.language as T

# y = B @ x with a block of (BLOCK_N, reduce_threads) threads: thread (tn, tk)
# sums every reduce_threads-th element of row tn into a private accumulator,
# then the partial sums meet in shared memory through atomic adds.
def gemv(N, K, BLOCK_N=32, reduce_threads=4, dtype="float16", accum="float32"):
    @T.prim_func
    def main(x: T.Tensor((K,), dtype), B: T.Tensor((N, K), dtype),
             y: T.Tensor((N,), accum)):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, reduce_threads)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            acc = T.alloc_local((1,), accum)
            part = T.alloc_shared((BLOCK_N,), accum)
            if tk == 0:
                part[tn] = 0
            T.clear(acc)
            for k0 in T.serial(T.ceildiv(K, reduce_threads)):
                k = k0 * reduce_threads + tk
                if k < K and bn * BLOCK_N + tn < N:
                    acc[0] += x[k].astype(accum) * B[bn * BLOCK_N + tn, k].astype(accum)
            T.atomic_add(part[tn], acc[0])
            if tk == 0 and bn * BLOCK_N + tn < N:
                y[bn * BLOCK_N + tn] = part[tn]
    return main


# A collective copy into shared memory, then each thread reads a row of it
# through a private buffer, in a loop over tiles; a reversed write shows that
# threads read what other threads' share of the copy brought.
def rows(M, N, bm=64, bn=16, threads=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), S: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=threads) as bx:
            tid = T.get_thread_binding()
            A_s = T.alloc_shared((bm, bn), "float32")
            row = T.alloc_local((bn,), "float32")
            total = T.alloc_var("float32")
            total = 0.0
            for ko in T.serial(T.ceildiv(N, bn)):
                T.copy(A[bx * bm, ko * bn], A_s)
                for r in T.serial(bm // threads):
                    for j in T.serial(bn):
                        row[j] = A_s[bm - 1 - (r * threads + tid), j]
                    for j in T.serial(bn):
                        total += row[j] * (j + 1)
            if bx * bm + bm - 1 - tid < M:
                S[bx * bm + bm - 1 - tid] = total
    return main


# Row sums or maxima with TVM's block all-reduce: a block of (tx, rows)
# threads, each row's threads combine their partial results over tx.
def allreduce(M, N, threads_x=32, rows=4, op="sum"):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, rows), threads=(threads_x, rows)) as bm:
            tx = T.thread_binding(0, threads_x, thread="threadIdx.x")
            ty = T.get_thread_binding(1)
            acc = T.alloc_local((1,), "float32")
            red = T.alloc_local((1,), "float32")
            acc[0] = 0.0 if op == "sum" else -T.infinity("float32")
            for k in T.serial(T.ceildiv(N, threads_x)):
                if k * threads_x + tx < N and bm * rows + ty < M:
                    if op == "sum":
                        acc[0] += A[bm * rows + ty, k * threads_x + tx]
                    else:
                        acc[0] = T.max(acc[0], A[bm * rows + ty, k * threads_x + tx])
            reducer = T.comm_reducer(lambda x, y: x + y, [T.Cast("float32", 0)])
            if op == "max":
                reducer = T.comm_reducer(lambda x, y: T.max(x, y), [-T.infinity("float32")])
            with T.attr(reducer, "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), acc[0], True, red[0], tx,
                                                  dtype="handle"))
            if tx == 0 and bm * rows + ty < M:
                B[bm * rows + ty] = red[0]
    return main


# Per-thread int8 dot products with T.dp4a.
def dot4(N):
    @T.prim_func
    def main(A: T.Tensor((N, 16), "int8"), B: T.Tensor((N, 16), "int8"),
             C: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:
            tx = T.get_thread_binding()
            a = T.alloc_local((16,), "int8")
            b = T.alloc_local((16,), "int8")
            acc = T.alloc_local((1,), "int32")
            acc[0] = 0
            if bx * 32 + tx < N:
                for k in T.serial(16):
                    a[k] = A[bx * 32 + tx, k]
                    b[k] = B[bx * 32 + tx, k]
                for k in T.serial(4):
                    T.dp4a(a[k * 4], b[k * 4], acc[0])
                C[bx * 32 + tx] = acc[0]
    return main


# Values passed between threads through shared memory inside a loop of
# per-thread code: each step every thread publishes its value and adds its
# neighbour's, which needs a barrier between the write and the read (and
# before the next step's write).
def ring(N, steps=3):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            tx = T.get_thread_binding()
            S = T.alloc_shared((64,), "float32")
            v = T.alloc_local((1,), "float32")
            v[0] = T.if_then_else(bx * 64 + tx < N, A[bx * 64 + tx], 0)
            for s in T.serial(steps):
                S[tx] = v[0]
                v[0] = v[0] + S[(tx + 1) % 64]
            if bx * 64 + tx < N:
                B[bx * 64 + tx] = v[0]
    return main


# Collective operators under a condition on the thread index alone: each
# branch some thread takes runs once, for the whole block (here the first
# half of the threads fill the tile, the rest scale it).
def masked(M, N, bm=32, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=256) as (bx, by):
            A_s = T.alloc_shared((bm, bn), "float16")
            tx = T.get_thread_binding(0)
            if tx < 128:
                for i, k in T.Parallel(bm, bn):
                    A_s[i, k] = T.if_then_else(by * bm + i < M and bx * bn + k < N,
                                               A[by * bm + i, bx * bn + k], 0)
            if tx % 2 == 0 and tx < 1000:
                for i, k in T.Parallel(bm, bn):
                    A_s[i, k] = A_s[i, k] * 2
            else:
                for i, k in T.Parallel(bm, bn):
                    A_s[i, k] = A_s[i, k] + 1
            if tx >= 1000:
                T.clear(A_s)
            T.copy(A_s, B[by * bm, bx * bn])
    return main
)py";

// y = B @ x in float64 from the same inputs.
std::vector<double> GemvReference(const interp::Tensor& x, const interp::Tensor& b, int64_t n,
                                  int64_t k) {
  std::vector<double> y(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) y[i] += x.GetDouble(j) * b.GetDouble(i * k + j);
  }
  return y;
}

TEST(PerThreadCode, InterpreterGemvMatchesFloat64) {
  const uint64_t seed = TestSeed(20261126);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  absl::StatusOr<ir::Program> p =
      CompileSource("simt.py", kKernels, "gemv", {{"N", "77"}, {"K", "50"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<std::vector<interp::Tensor>> args = interp::MakeInputs(*p, {}, seed);
  ASSERT_TRUE(args.ok()) << args.status();
  std::vector<double> want = GemvReference((*args)[0], (*args)[1], 77, 50);
  absl::Status st = interp::RunProgram(*p, *args);
  ASSERT_TRUE(st.ok()) << st;
  for (int64_t i = 0; i < 77; ++i) {
    // float32 sums of 50 float16 products of magnitude <= 1.
    EXPECT_NEAR((*args)[2].GetDouble(i), want[i], 1e-4) << "row " << i;
  }
}

void Check(const std::string& function, const BindingList& bindings, uint64_t seed,
           std::vector<std::string> written) {
  absl::StatusOr<ir::Program> p = CompileSource("simt.py", kKernels, function, bindings);
  ASSERT_TRUE(p.ok()) << p.status();
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<CudaSource> src = EmitFor(*p, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    absl::StatusOr<NvrtcResult> cubin = CompileCuda(src->code, p->name + ".cu", arch);
    EXPECT_TRUE(cubin.ok()) << cubin.status();
    ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = TestSeed(seed), .written = written});
  }
}

TEST(PerThreadCode, GemvOnTheEmulator) { Check("gemv", {{"N", "77"}, {"K", "50"}}, 41, {"y"}); }

TEST(PerThreadCode, GemvFloat32EightReducers) {
  Check(
      "gemv",
      {{"N", "45"}, {"K", "33"}, {"BLOCK_N", "16"}, {"reduce_threads", "8"}, {"dtype", "float32"}},
      42, {"y"});
}

// Both branches of `tx % 2 == 0` are taken by some thread, so both run:
// B = (A * 2) + 1; `tx >= 1000` is taken by none, so nothing is cleared.
TEST(PerThreadCode, CollectiveOperatorsUnderAThreadMask) {
  Check("masked", {{"M", "70"}, {"N", "50"}}, 44, {"B"});
  absl::StatusOr<ir::Program> p =
      CompileSource("simt.py", kKernels, "masked", {{"M", "32"}, {"N", "32"}});
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat16, {32, 32}, 5),
                                      interp::Tensor(ir::DType::kFloat16, {32, 32})};
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  for (int64_t i = 0; i < 32 * 32; ++i) {
    const double a = args[0].GetDouble(i);
    EXPECT_NEAR(args[1].GetDouble(i), a * 2 + 1, 2e-3 * (1 + std::fabs(a))) << i;
  }
}

TEST(PerThreadCode, BlockAllReduceSum) {
  Check("allreduce", {{"M", "30"}, {"N", "70"}}, 45, {"B"});
  absl::StatusOr<ir::Program> p =
      CompileSource("simt.py", kKernels, "allreduce", {{"M", "9"}, {"N", "70"}});
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat32, {9, 70}, 6),
                                      interp::Tensor(ir::DType::kFloat32, {9})};
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  for (int64_t i = 0; i < 9; ++i) {
    double want = 0;
    for (int64_t j = 0; j < 70; ++j) want += args[0].GetDouble(i * 70 + j);
    EXPECT_NEAR(args[1].GetDouble(i), want, 1e-4) << "row " << i;
  }
}

TEST(PerThreadCode, BlockAllReduceMaxOverEightThreads) {
  Check("allreduce",
        {{"M", "13"}, {"N", "21"}, {"threads_x", "8"}, {"rows", "16"}, {"op", "\"max\""}}, 46,
        {"B"});
}

TEST(PerThreadCode, Dp4a) {
  Check("dot4", {{"N", "45"}}, 47, {"C"});
  absl::StatusOr<ir::Program> p = CompileSource("simt.py", kKernels, "dot4", {{"N", "40"}});
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kInt8, {40, 16}, 7),
                                      interp::RandomTensor(ir::DType::kInt8, {40, 16}, 8),
                                      interp::Tensor(ir::DType::kInt32, {40})};
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  for (int64_t i = 0; i < 40; ++i) {
    int64_t want = 0;
    for (int64_t k = 0; k < 16; ++k)
      want += args[0].GetInt(i * 16 + k) * args[1].GetInt(i * 16 + k);
    EXPECT_EQ(args[2].GetInt(i), want) << i;
  }
}

TEST(PerThreadCode, ExchangeThroughSharedMemoryInALoop) {
  Check("ring", {{"N", "100"}}, 48, {"B"});
  absl::StatusOr<ir::Program> p = CompileSource("simt.py", kKernels, "ring", {{"N", "64"}});
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat32, {64}, 12),
                                      interp::Tensor(ir::DType::kFloat32, {64})};
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  // Every thread writes before any reads, each step.
  std::vector<double> v(64);
  for (int t = 0; t < 64; ++t) v[t] = args[0].GetDouble(t);
  for (int step = 0; step < 3; ++step) {
    std::vector<double> s = v;
    for (int t = 0; t < 64; ++t) v[t] = static_cast<float>(v[t] + s[(t + 1) % 64]);
  }
  for (int t = 0; t < 64; ++t) EXPECT_NEAR(args[1].GetDouble(t), v[t], 1e-5) << t;
}

TEST(PerThreadCode, RowsThroughSharedMemory) {
  Check("rows", {{"M", "100"}, {"N", "40"}}, 43, {"S"});
}

// The thread index in the printed IR, and the decomposition of a
// two-dimensional block: threadIdx.y is the linear index over BLOCK_N.
TEST(PerThreadCode, TheThreadIndexInTheIr) {
  absl::StatusOr<ir::Program> p =
      CompileSource("simt.py", kKernels, "gemv", {{"N", "64"}, {"K", "64"}});
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string text = ir::Print(*p);
  EXPECT_THAT(text, HasSubstr("threads=128")) << text;
  EXPECT_THAT(text, HasSubstr("T.get_thread_binding() % 32")) << text;
  EXPECT_THAT(text, HasSubstr("T.get_thread_binding() // 32")) << text;
}

struct Refusal {
  const char* name;
  const char* body;
  const char* message;
};

// Tile operators run once per block: under a condition on the thread, or on
// per-thread values, they are refused with a message naming the operator.
TEST(PerThreadCode, CollectiveOperatorsOnPerThreadValuesAreRefused) {
  const Refusal cases[] = {
      {"copy_under_thread_condition",
       "            if tx < bx + 64:\n"
       "                T.copy(A[0, 0], A_s)\n",
       "T.copy runs under a condition that depends on the thread"},
      {"parallel_reads_local",
       "            loc = T.alloc_local((1,), \"float32\")\n"
       "            loc[0] = tx\n"
       "            for i, j in T.Parallel(32, 32):\n"
       "                A_s[i, j] = loc[0]\n",
       "a T.Parallel loop reads a per-thread value"},
      {"copy_at_thread_offset", "            T.copy(A[tx, 0], A_s)\n",
       "T.copy reads a per-thread value"},
  };
  for (const Refusal& c : cases) {
    std::string text = std::string(R"py(
import tilelang.language as T

def f():
    @T.prim_func
    def main(A: T.Tensor((128, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1, threads=128) as bx:
            tx = T.get_thread_binding()
            A_s = T.alloc_shared((32, 32), "float32")
)py") + c.body + "            T.copy(A_s, B)\n    return main\n";
    absl::StatusOr<ir::Program> p = CompileSource("refuse.py", text, "f");
    if (!p.ok()) {
      // The frontend refuses what it can see at the statement (an operand
      // indexed by the thread), with its location.
      EXPECT_THAT(std::string(p.status().message()), HasSubstr(c.message)) << c.name;
      EXPECT_THAT(std::string(p.status().message()), HasSubstr("refuse.py:")) << c.name;
      continue;
    }
    absl::StatusOr<CudaSource> src = EmitFor(*p, CudaArch::kSm80);
    ASSERT_FALSE(src.ok()) << c.name;
    EXPECT_THAT(std::string(src.status().message()), HasSubstr(c.message)) << c.name;
    std::vector<interp::Tensor> args = {interp::Tensor(ir::DType::kFloat32, {128, 32}),
                                        interp::Tensor(ir::DType::kFloat32, {32, 32})};
    absl::Status st = interp::RunProgram(*p, args);
    EXPECT_THAT(std::string(st.message()), HasSubstr(c.message)) << c.name;
  }
}

}  // namespace
}  // namespace tilec::cuda
