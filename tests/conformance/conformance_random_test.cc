// Conformance: random numbers in kernels (T.rng_init, T.rng_rand,
// T.rng_rand_float), as curand's device API draws them with the
// Philox4_32_10 generator. The interpreter is checked against a generator
// written here from the algorithm (itself checked against Philox4x32-10's
// published known-answer vectors), the emitted code on the SIMT emulator
// against the interpreter.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/conformance_testing.h"

namespace tilec::conformance {
namespace {

using ir::DType;

// ---- The reference generator ------------------------------------------------

using Words = std::array<uint32_t, 4>;

Words Philox(Words c, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{0xD2511F53u} * c[0], p1 = uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

// curand_init(seed, seq, off) and the draws, one thread's state.
class Stream {
 public:
  Stream(uint64_t seed, uint64_t seq, uint64_t off)
      : k0_(static_cast<uint32_t>(seed)), k1_(static_cast<uint32_t>(seed >> 32)) {
    const uint64_t n = off / 4;
    ctr_ = {static_cast<uint32_t>(n), static_cast<uint32_t>(n >> 32), static_cast<uint32_t>(seq),
            static_cast<uint32_t>(seq >> 32)};
    at_ = static_cast<int>(off % 4);
    out_ = Philox(ctr_, k0_, k1_);
  }
  uint32_t Next() {
    const uint32_t r = out_[at_++];
    if (at_ == 4) {
      for (uint32_t& w : ctr_) {
        if (++w != 0) break;
      }
      out_ = Philox(ctr_, k0_, k1_);
      at_ = 0;
    }
    return r;
  }
  float Uniform() { return static_cast<float>(Next()) * 0x1p-32f + 0x1p-33f; }
  double Uniform64() { return static_cast<double>(Next()) * 0x1p-32 + 0x1p-32; }
  float Normal() {
    if (has_normal_) {
      has_normal_ = false;
      return normal_;
    }
    const float u = static_cast<float>(Next()) * 0x1p-32f + 0x1p-33f;
    const float step = 6.2831855f * 0x1p-32f;
    const float v = static_cast<float>(Next()) * step + step / 2;
    const float s = std::sqrt(-2.0f * std::log(u));
    normal_ = std::cos(v) * s;
    has_normal_ = true;
    return std::sin(v) * s;
  }
  double Normal64() {
    if (has_normal64_) {
      has_normal64_ = false;
      return normal64_;
    }
    auto z = [&]() {
      const uint64_t w0 = Next(), w1 = Next();
      return static_cast<double>(w0 ^ (w1 << 21));
    };
    const double zx = z(), zy = z();
    const double u = zx * 0x1p-53 + 0x1p-54;
    const double v = (zy * 0x1p-52 + 0x1p-53) * 3.1415926535897932;
    const double s = std::sqrt(-2.0 * std::log(u));
    normal64_ = std::cos(v) * s;
    has_normal64_ = true;
    return std::sin(v) * s;
  }

 private:
  Words ctr_, out_;
  uint32_t k0_, k1_;
  int at_ = 0;
  bool has_normal_ = false, has_normal64_ = false;
  float normal_ = 0;
  double normal64_ = 0;
};

TEST(ConformanceRandom, ReferenceMatchesThePublishedPhiloxVectors) {
  // Philox4x32-10's known-answer vectors (Salmon et al., Random123).
  EXPECT_EQ(Philox({0, 0, 0, 0}, 0, 0), (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox({~0u, ~0u, ~0u, ~0u}, ~0u, ~0u),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// ---- Kernels ----------------------------------------------------------------

constexpr char kSource[] = R"(
import tilelang
import tilelang.language as T

def draws(M, seed, off, threads=32):
    @T.prim_func
    def main(A: T.Tensor((M,), "uint32"), B: T.Tensor((M,), "float32"),
             C: T.Tensor((M,), "float64"), D: T.Tensor((M,), "float32"),
             E: T.Tensor((M,), "float64")):
        with T.Kernel(T.ceildiv(M, threads), threads=threads) as bx:
            tx = T.get_thread_binding()
            T.rng_init(seed, off=off)
            idx = bx * threads + tx
            if idx < M:
                A[idx] = T.rng_rand()
                B[idx] = T.rng_rand_float()
                C[idx] = T.rng_rand_float(bit=64)
                D[idx] = T.rng_rand_float(dist="normal")
                E[idx] = T.rng_rand_float(bit=64, dist="normal")
    return main

def serial(M, per, seed, base, threads=4):
    @T.prim_func
    def main(A: T.Tensor((M,), "uint32"), D: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, threads * per), threads=threads) as bx:
            tx = T.get_thread_binding()
            T.rng_init(seed, 7, base + (bx * threads + tx) * per)
            for j in T.serial(per):
                idx = (bx * threads + tx) * per + j
                if idx < M:
                    A[idx] = T.rng_rand()
                    D[idx] = T.rng_rand_float(dist="normal")
    return main

def one_thread(M, seed, per=16):
    @T.prim_func
    def main(A: T.Tensor((M,), "uint32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, per), threads=1) as bx:
            tx = T.get_thread_binding()
            T.rng_init(seed, 0, bx * per + tx * per)
            for i, j in T.Parallel(1, per):
                idx = (bx + i) * per + j
                if idx < M:
                    A[idx] = T.rng_rand()
            for i, j in T.Parallel(1, per):
                idx = (bx + i) * per + j
                if idx < M:
                    B[idx] = T.rng_rand_float(dist="normal")
    return main

def grid2d(seed):
    @T.prim_func
    def main(Out: T.Tensor((3, 2, 2, 4), "uint32")):
        with T.Kernel(2, 3, threads=(4, 2)) as (bx, by):
            tx = T.get_thread_binding(0)
            ty = T.get_thread_binding(1)
            T.rng_init(seed)
            Out[by, bx, ty, tx] = T.rng_rand()
    return main

def guarded(M, seed):
    @T.prim_func
    def main(A: T.Tensor((M,), "uint32"), n: T.int32):
        with T.Kernel(M, threads=32) as bx:
            tx = T.get_thread_binding()
            s = T.alloc_shared((32,), "int32")
            if bx < n:
                T.rng_init(seed, 0, bx)
                s[tx] = tx
                T.sync_threads()
                if tx == 0:
                    A[bx] = T.rng_rand() + T.cast(s[31] - 31, "uint32")
    return main

def no_init():
    @T.prim_func
    def main(Out: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=8):
            tx = T.get_thread_binding()
            Out[tx] = T.rng_rand_float()
    return main

def xorwow():
    @T.prim_func
    def main(Out: T.Tensor((8,), "uint32")):
        with T.Kernel(1, threads=8):
            tx = T.get_thread_binding()
            T.rng_init(1, generator="curandStateXORWOW_t")
            Out[tx] = T.rng_rand()
    return main

def in_parallel():
    @T.prim_func
    def main(Out: T.Tensor((64,), "uint32")):
        with T.Kernel(1, threads=32):
            T.rng_init(1)
            for i in T.Parallel(64):
                Out[i] = T.rng_rand()
    return main

def bad_bits():
    @T.prim_func
    def main(Out: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=8):
            tx = T.get_thread_binding()
            T.rng_init(1)
            Out[tx] = T.rng_rand_float(bit=16)
    return main
)";

TEST(ConformanceRandom, DrawsFollowCurandsPhiloxStream) {
  // A 64-bit seed (both key words), an offset inside a block, a ragged last
  // block of threads; every thread's seq is its index in the launch.
  const int64_t m = 75;
  const uint64_t key = 0x1234'5678'9abcULL, off = 6;
  ir::Program p =
      Compile(kSource, "draws", {{"M", "75"}, {"seed", std::to_string(key)}, {"off", "6"}});
  const uint64_t seed = Seed(601);
  Tensors args = {Zeros(DType::kUInt32, {m}), Zeros(DType::kFloat32, {m}),
                  Zeros(DType::kFloat64, {m}), Zeros(DType::kFloat32, {m}),
                  Zeros(DType::kFloat64, {m})};
  Interpret(p, args);
  std::vector<int64_t> a;
  std::vector<double> b, c, d, e;
  for (int64_t t = 0; t < m; ++t) {
    Stream s(key, static_cast<uint64_t>(t), off);
    a.push_back(s.Next());
    b.push_back(s.Uniform());
    c.push_back(s.Uniform64());
    d.push_back(s.Normal());
    e.push_back(s.Normal64());
  }
  ExpectEqualInts(args[0], a);
  ExpectClose(args[1], b, {.atol = 0, .rtol = 0});
  ExpectClose(args[2], c, {.atol = 0, .rtol = 0});
  // Normals: the interpreter's float math against this file's.
  ExpectClose(args[3], d, {.atol = 1e-6, .rtol = 1e-6});
  ExpectClose(args[4], e, {.atol = 1e-12, .rtol = 1e-12});
  ExpectTargetsMatch(p, {.seed = seed}, kBothArchs);
}

TEST(ConformanceRandom, SerialDrawsCarryTheCounterAcrossItsWords) {
  // Offsets just below 2^34 make the counter's low word wrap during the
  // thread's draws (its second word takes the carry).
  const int64_t m = 90, per = 12;
  const uint64_t key = 42, base = 4 * ((uint64_t{1} << 32) - 2) + 1;
  ir::Program p =
      Compile(kSource, "serial",
              {{"M", "90"}, {"per", "12"}, {"seed", "42"}, {"base", std::to_string(base)}});
  const uint64_t seed = Seed(602);
  Tensors args = {Zeros(DType::kUInt32, {m}), Zeros(DType::kFloat32, {m})};
  Interpret(p, args);
  std::vector<int64_t> a(m);
  std::vector<double> d(m);
  for (int64_t t = 0; t * per < m; ++t) {
    Stream s(key, 7, base + static_cast<uint64_t>(t * per));
    for (int64_t j = 0; j < per && t * per + j < m; ++j) {
      a[t * per + j] = s.Next();
      d[t * per + j] = s.Normal();
    }
  }
  ExpectEqualInts(args[0], a);
  ExpectClose(args[1], d, {.atol = 1e-6, .rtol = 1e-6});
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceRandom, TheOneThreadOfAKernelDrawsInsideTParallelInOrder) {
  // A one-thread kernel runs its T.Parallel iterations in order: block bx
  // draws its words, then its normals, from offset bx * 16.
  const int64_t m = 70, per = 16;
  ir::Program p = Compile(kSource, "one_thread", {{"M", "70"}, {"seed", "5"}});
  const uint64_t seed = Seed(605);
  Tensors args = {Zeros(DType::kUInt32, {m}), Zeros(DType::kFloat32, {m})};
  Interpret(p, args);
  std::vector<int64_t> a(m);
  std::vector<double> d(m);
  for (int64_t bx = 0; bx * per < m; ++bx) {
    Stream s(5, 0, static_cast<uint64_t>(bx * per));
    const int64_t n = std::min(per, m - bx * per);
    for (int64_t j = 0; j < n; ++j) a[bx * per + j] = s.Next();
    for (int64_t j = 0; j < n; ++j) d[bx * per + j] = s.Normal();
  }
  ExpectEqualInts(args[0], a);
  ExpectClose(args[1], d, {.atol = 1e-6, .rtol = 1e-6});
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceRandom, DefaultSeqNumbersEveryThreadOfTheLaunch) {
  // threadIdx (x fastest) + threads per block * blockIdx (x fastest), over
  // a 2-D block and a 2-D grid.
  ir::Program p = Compile(kSource, "grid2d", {{"seed", "1234"}});
  Tensors args = {Zeros(DType::kUInt32, {3, 2, 2, 4})};
  Interpret(p, args);
  std::vector<int64_t> expected;
  for (int64_t by = 0; by < 3; ++by) {
    for (int64_t bx = 0; bx < 2; ++bx) {
      for (int64_t ty = 0; ty < 2; ++ty) {
        for (int64_t tx = 0; tx < 4; ++tx) {
          const uint64_t seq = static_cast<uint64_t>(tx + 4 * ty + 8 * (bx + 2 * by));
          expected.push_back(Stream(1234, seq, 0).Next());
        }
      }
    }
  }
  ExpectEqualInts(args[0], expected);
  ExpectAllTargetsMatch(p, Seed(603));
}

TEST(ConformanceRandom, InitInsideABranchSeedsTheKernelsState) {
  const int64_t m = 40, n = 29;
  ir::Program p = Compile(kSource, "guarded", {{"M", "40"}, {"seed", "99"}});
  const uint64_t seed = Seed(604);
  Tensors args = {Random(DType::kUInt32, {m}, seed), Zeros(DType::kInt32, {})};
  args[1].SetInt(0, n);
  const interp::Tensor before = args[0];
  Interpret(p, args);
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < m; ++i) {
    expected.push_back(i < n ? Stream(99, 0, static_cast<uint64_t>(i)).Next() : before.GetInt(i));
  }
  ExpectEqualInts(args[0], expected);
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceRandom, Refusals) {
  ExpectRefused(kSource, "no_init", {}, "requires a preceding `T.rng_init(...)`");
  ExpectRefused(kSource, "xorwow", {}, "Philox4_32_10 generator only");
  ExpectRefused(kSource, "in_parallel", {}, "T.rng_rand() inside T.Parallel");
  ExpectRefused(kSource, "bad_bits", {}, "bit is 32 or 64");
}

TEST(ConformanceRandom, AmdTargetsRefuseFloat64Normals) {
  ir::Program p = Compile(kSource, "draws", {{"M", "64"}, {"seed", "1"}, {"off", "0"}});
  absl::StatusOr<cuda::CudaTarget> amd = cuda::CudaTarget::FromName("gfx942");
  ASSERT_TRUE(amd.ok());
  absl::StatusOr<cuda::CudaSource> src = ::tilec::testing::EmitFor(p, *amd);
  ASSERT_FALSE(src.ok());
  EXPECT_NE(src.status().message().find("float64 log not lowered for gfx942"), std::string::npos)
      << src.status();
  EXPECT_NE(src.status().message().find("draw float32 normals (bit=32)"), std::string::npos)
      << src.status();
}

}  // namespace
}  // namespace tilec::conformance
