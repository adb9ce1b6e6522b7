// The CUDA device library (compiler/device/cuda/tl + common/tl) through real
// NVRTC compiles for sm_80 and sm_90a, with checks on ptxas's report and on
// the SASS: every primitive compiles and maps to its instruction, the gemm
// templates use ldmatrix + mma.sync without spills or local memory, and the
// static_asserts reject bad shapes with their messages.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/targets/cuda/sass.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;

constexpr CudaArch kArchs[] = {CudaArch::kSm80, CudaArch::kSm90a};

// Replaces each $KEY of `text` (longest keys first).
std::string Fill(std::string text, const std::map<std::string, std::string>& values) {
  std::vector<std::pair<std::string, std::string>> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [key, value] : sorted) {
    const std::string k = "$" + key;
    for (size_t at = text.find(k); at != std::string::npos; at = text.find(k, at + value.size())) {
      text.replace(at, k.size(), value);
    }
  }
  return text;
}

struct Compiled {
  NvrtcResult result;
  std::string sass;
};

// Compiles and disassembles; fails the test on errors.
Compiled CompileAndDisassemble(const std::string& source, CudaArch arch) {
  Compiled c;
  absl::StatusOr<NvrtcResult> r = CompileCuda(source, "kernel.cu", arch);
  EXPECT_TRUE(r.ok()) << r.status() << "\n" << source;
  if (!r.ok()) return c;
  c.result = *std::move(r);
  absl::StatusOr<std::string> sass = DisassembleCubin(c.result.cubin);
  EXPECT_TRUE(sass.ok()) << sass.status();
  if (sass.ok()) c.sass = *std::move(sass);
  return c;
}

// ------------------------------------------------------------- primitives

constexpr char kEveryPrimitive[] = R"(#include "tl/tl.h"

extern "C" __global__ void __launch_bounds__(128) primitives_k0(
    float* __restrict__ F, double* __restrict__ D, int32_t* __restrict__ I,
    tl::half_t* __restrict__ H, tl::bfloat16_t* __restrict__ BF, tl::fp8_e4m3_t* __restrict__ E4,
    tl::fp8_e5m2_t* __restrict__ E5, int8_t* __restrict__ I8, uint8_t* __restrict__ U8,
    int16_t* __restrict__ I16, int64_t* __restrict__ I64, bool* __restrict__ B, int n) {
  uint8_t* smem = tl::dynamic_smem();
  const int tx = threadIdx.x;
  const int bx = blockIdx.x;
  tl::half_t* H_shared = reinterpret_cast<tl::half_t*>(smem + 0);
  float* F_shared = reinterpret_cast<float*>(smem + 8192);
  tl::cp_async_16(H_shared + tx * 8, H + bx * 1024 + tx * 8, tx * 8 < n);
  tl::cp_async_8(F_shared + tx * 2, F + tx * 2, true);
  tl::cp_async_commit();
  tl::cp_async_4(F_shared + 256 + tx, F + 256 + tx, tx % 2 == 0);
  tl::cp_async_commit();
  tl::cp_async_wait<1>();
  tl::cp_async_wait<0>();
  tl::syncthreads();

  using L = tl::Swizzled<16, 64, 2>;
  const int lane = tx % 32;
  const tl::half_t* row = H_shared + L::offset(lane % 16, (lane / 16) * 8);
  uint32_t r1[1], r2[2], r4[4], t1[1], t2[2], t4[4];
  tl::ldmatrix_x1(r1, row);
  tl::ldmatrix_x2(r2, row);
  tl::ldmatrix_x4(r4, row);
  tl::ldmatrix_x1_trans(t1, row);
  tl::ldmatrix_x2_trans(t2, row);
  tl::ldmatrix_x4_trans(t4, row);
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  tl::mma_m16n8k16_f16f32(acc, r4, r2, acc);
  tl::mma_m16n8k16_bf16f32(acc, t4, t2, acc);

  float v = acc[0] + acc[1] * acc[2] - acc[3] + float(r1[0] ^ t1[0]);
  v = tl::shfl_xor(v, 1) + tl::shfl_sync(v, 31);
  int iv = tl::shfl_xor(static_cast<int>(r4[0]), 2) + tl::shfl_sync(tx, 0);
  v = tl::warp_allreduce<tl::SumOp, 32>(v) + tl::warp_allreduce<tl::MaxOp, 4>(v) +
      tl::warp_allreduce<tl::MinOp, 8>(v);
  iv = tl::warp_allreduce<tl::SumOp, 16>(iv) + tl::warp_allreduce<tl::MaxOp, 2>(iv);

  const float m = tl::exp(v) + tl::exp2(v) + tl::log(v) + tl::log2(v) + tl::sqrt(v) +
                  tl::rsqrt(v) + tl::tanh(v) + tl::sigmoid(v) + tl::sin(v) + tl::cos(v) +
                  tl::erf(v) + tl::floor(v) + tl::ceil(v) + tl::round(v) + tl::pow(v, 2.5f) +
                  tl::fabs(v) + tl::fmax(v, 0.0f) + tl::fmin(v, 1.0f);
  const double d = D[tx];
  const double dm = tl::exp(d) + tl::exp2(d) + tl::log(d) + tl::log2(d) + tl::sqrt(d) +
                    tl::rsqrt(d) + tl::tanh(d) + tl::sigmoid(d) + tl::sin(d) + tl::cos(d) +
                    tl::erf(d) + tl::floor(d) + tl::ceil(d) + tl::round(d) + tl::pow(d, 0.5) +
                    tl::fabs(d) + tl::fmax(d, 0.0) + tl::fmin(d, 1.0);

  const tl::half_t h = tl::half_t(m);
  const tl::bfloat16_t bf = tl::bfloat16_t(float(h) * 2.0f);
  const tl::fp8_e4m3_t e4 = tl::fp8_e4m3_t(float(bf) + float(E4[tx]));
  const tl::fp8_e5m2_t e5 = tl::fp8_e5m2_t(float(e4) - float(E5[tx]));
  BF[tx] = bf;
  E4[tx] = e4;
  E5[tx] = e5;
  I8[tx] = static_cast<int8_t>(iv);
  U8[tx] = static_cast<uint8_t>(iv);
  I16[tx] = static_cast<int16_t>(iv);
  I64[tx] = static_cast<int64_t>(iv) * 3;
  B[tx] = float(e5) > 0.0f;
  F[512 + tx] = tl::infinity<float>() + float(tl::infinity<tl::half_t>()) +
                float(tl::infinity<tl::bfloat16_t>()) + float(tl::infinity<tl::fp8_e4m3_t>()) +
                float(tl::infinity<tl::fp8_e5m2_t>());
  D[512 + tx] = tl::infinity<double>();

  const float old_f = tl::atomic_add(F + 1024, m);
  const double old_d = tl::atomic_add(D + 1024, dm);
  const int32_t old_i = tl::atomic_add(I + 1024, iv);
  const tl::half_t old_h = tl::atomic_add(H + 1024, h);
  tl::atomic_add(F_shared + 3, 1.0f);
  tl::syncthreads();
  F[tx] = old_f + float(old_d) + float(old_i) + float(old_h) + F_shared[tx];
}
)";

TEST(CudaTlTest, EveryPrimitiveCompilesToItsInstruction) {
  for (CudaArch arch : kArchs) {
    SCOPED_TRACE(CudaArchName(arch));
    const Compiled c = CompileAndDisassemble(kEveryPrimitive, arch);
    ASSERT_EQ(c.result.kernels.size(), 1u);
    EXPECT_EQ(c.result.kernels[0].name, "primitives_k0");
    EXPECT_EQ(c.result.kernels[0].spill_store_bytes, 0);
    EXPECT_EQ(CountOpcode(c.sass, "HMMA.16816.F32"), 2) << "f16 and bf16 mma";
    EXPECT_EQ(CountOpcode(c.sass, "HMMA.16816.F32.BF16"), 1) << "bf16 mma";
    EXPECT_EQ(CountOpcode(c.sass, "LDSM.16.M88"), 3) << "ldmatrix x1/x2/x4";
    EXPECT_EQ(CountOpcode(c.sass, "LDSM.16.MT88"), 3) << "ldmatrix .trans";
    EXPECT_EQ(CountOpcode(c.sass, "LDGSTS"), 3) << "cp.async 16/8/4";
    EXPECT_GE(CountOpcode(c.sass, "LDGDEPBAR"), 2) << "cp.async.commit_group";
    EXPECT_GE(CountOpcode(c.sass, "DEPBAR"), 1) << "cp.async.wait_group";
    EXPECT_GE(CountOpcode(c.sass, "SHFL.BFLY"), 5 + 2 + 3 + 4 + 1 + 2);
    EXPECT_GE(CountOpcode(c.sass, "SHFL.IDX"), 2);
    EXPECT_GE(CountOpcode(c.sass, "BAR"), 2);
    EXPECT_GE(CountOpcode(c.sass, "ATOM") + CountOpcode(c.sass, "ATOMG") +
                  CountOpcode(c.sass, "ATOMS") + CountOpcode(c.sass, "RED"),
              5);
  }
}

// --------------------------------------------------------------------- gemm

// A block that loads A and B tiles with cp.async into dynamic shared memory
// (through their layouts) and runs one gemm_ss into a register accumulator,
// in the style of generated code.
constexpr char kGemmSsKernel[] = R"(#include "tl/tl.h"

extern "C" __global__ void __launch_bounds__($THREADS) gemm_k0(
    $T* __restrict__ A, $T* __restrict__ B, float* __restrict__ C) {
  uint8_t* smem = tl::dynamic_smem();
  const int tx = threadIdx.x;
  const int bx = blockIdx.x, by = blockIdx.y;
  $T* A_shared = reinterpret_cast<$T*>(smem + 0);
  $T* B_shared = reinterpret_cast<$T*>(smem + $B_OFFSET);
  using LayoutA = $LA;
  using LayoutB = $LB;
  float C_local[$LOCAL];
#pragma unroll
  for (int i = 0; i < $LOCAL; ++i) C_local[i] = 0.0f;
  for (int v = tx; v < $AR * $AC / 8; v += $THREADS) {
    const int r = v / ($AC / 8), c = v % ($AC / 8) * 8;
    tl::cp_async_16(A_shared + LayoutA::offset(r, c), A + (by * $AR + r) * $AC + c, true);
  }
  for (int v = tx; v < $BR * $BC / 8; v += $THREADS) {
    const int r = v / ($BC / 8), c = v % ($BC / 8) * 8;
    tl::cp_async_16(B_shared + LayoutB::offset(r, c), B + (bx * $BR + r) * $BC + c, true);
  }
  tl::cp_async_commit();
  tl::cp_async_wait<0>();
  tl::syncthreads();
  tl::gemm_ss<$M, $N, $K, $WM, $WN, $TA, $TB, LayoutA, LayoutB>(A_shared, B_shared, C_local);
  const int warp = tx / 32, lane = tx % 32;
#pragma unroll
  for (int l = 0; l < $LOCAL; ++l) {
    const int e = l % 2, h = l / 2 % 2, ni = l / 4 % ($N / $WN / 8), mi = l / 4 / ($N / $WN / 8);
    const int row = warp % $WM * ($M / $WM) + mi * 16 + h * 8 + lane / 4;
    const int col = warp / $WM * ($N / $WN) + ni * 8 + 2 * (lane % 4) + e;
    C[(by * $M + row) * ($N * gridDim.x) + bx * $N + col] = C_local[l];
  }
}
)";

struct GemmShape {
  const char* type;  // "tl::half_t" / "tl::bfloat16_t"
  int m, n, k, warps_m, warps_n;
  bool trans_a, trans_b;
  bool swizzle;
};

std::string GemmSsSource(const GemmShape& s) {
  const int ar = s.trans_a ? s.k : s.m;
  const int ac = s.trans_a ? s.m : s.k;
  const int br = s.trans_b ? s.n : s.k;
  const int bc = s.trans_b ? s.k : s.n;
  auto layout = [&](int r, int c) {
    return s.swizzle ? "tl::Swizzled<" + std::to_string(r) + ", " + std::to_string(c) + ", 2>"
                     : "tl::RowMajor<" + std::to_string(r) + ", " + std::to_string(c) + ">";
  };
  const int threads = 32 * s.warps_m * s.warps_n;
  return Fill(kGemmSsKernel, {{"T", s.type},
                              {"THREADS", std::to_string(threads)},
                              {"B_OFFSET", std::to_string((ar * ac * 2 + 127) / 128 * 128)},
                              {"LA", layout(ar, ac)},
                              {"LB", layout(br, bc)},
                              {"LOCAL", std::to_string(s.m * s.n / threads)},
                              {"AR", std::to_string(ar)},
                              {"AC", std::to_string(ac)},
                              {"BR", std::to_string(br)},
                              {"BC", std::to_string(bc)},
                              {"M", std::to_string(s.m)},
                              {"N", std::to_string(s.n)},
                              {"K", std::to_string(s.k)},
                              {"WM", std::to_string(s.warps_m)},
                              {"WN", std::to_string(s.warps_n)},
                              {"TA", s.trans_a ? "true" : "false"},
                              {"TB", s.trans_b ? "true" : "false"}});
}

// The instruction counts gemm_ss must produce: per 16-wide k-step, one
// ldmatrix x4 per 16-row A tile, one per pair of 8-column B tiles (x2 for an
// odd last one), and MI * NI mma.
void CheckGemmSs(const GemmShape& s, CudaArch arch) {
  SCOPED_TRACE(testing::Message() << CudaArchName(arch) << " " << s.type << " " << s.m << "x" << s.n
                                  << "x" << s.k << " warps " << s.warps_m << "x" << s.warps_n
                                  << " transA=" << s.trans_a << " transB=" << s.trans_b);
  const Compiled c = CompileAndDisassemble(GemmSsSource(s), arch);
  ASSERT_EQ(c.result.kernels.size(), 1u);
  const PtxasKernelInfo& k = c.result.kernels[0];
  EXPECT_EQ(k.spill_store_bytes, 0) << c.result.log;
  EXPECT_EQ(k.spill_load_bytes, 0) << c.result.log;
  EXPECT_EQ(k.stack_frame_bytes, 0) << c.result.log;
  EXPECT_LE(k.registers, 255);
  const LocalMemoryTraffic local = CountLocalMemoryTraffic(c.sass);
  EXPECT_EQ(local.loads, 0);
  EXPECT_EQ(local.stores, 0);

  const int steps = s.k / 16;
  const int mi = s.m / s.warps_m / 16;
  const int ni = s.n / s.warps_n / 8;
  EXPECT_EQ(CountOpcode(c.sass, "HMMA.16816"), steps * mi * ni);
  const int a_loads = steps * mi;
  const int b_loads = steps * ((ni + 1) / 2);
  // A uses the transposing load when stored [K, M]; B when stored [K, N].
  const int trans_loads = (s.trans_a ? a_loads : 0) + (s.trans_b ? 0 : b_loads);
  EXPECT_EQ(CountOpcode(c.sass, "LDSM"), a_loads + b_loads);
  EXPECT_EQ(CountOpcode(c.sass, "LDSM.16.MT88"), trans_loads);
}

TEST(CudaTlTest, GemmSsFp16UsesLdmatrixAndMmaWithoutSpills) {
  // 128x128x32 on 4 warps (2x2), swizzled operands, every transpose.
  for (CudaArch arch : kArchs) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        CheckGemmSs({"tl::half_t", 128, 128, 32, 2, 2, ta, tb, true}, arch);
      }
    }
  }
}

TEST(CudaTlTest, GemmSsBf16UsesLdmatrixAndMmaWithoutSpills) {
  for (CudaArch arch : kArchs) {
    CheckGemmSs({"tl::bfloat16_t", 128, 128, 32, 2, 2, false, false, true}, arch);
    CheckGemmSs({"tl::bfloat16_t", 64, 128, 64, 1, 4, false, true, true}, arch);
  }
}

TEST(CudaTlTest, GemmSsOtherPartitionsAndLayouts) {
  // FullRow (4x1) with row-major buffers; an odd number of 8-column tiles.
  CheckGemmSs({"tl::half_t", 128, 64, 32, 4, 1, false, true, false}, CudaArch::kSm80);
  CheckGemmSs({"tl::half_t", 64, 48, 32, 2, 2, false, false, false}, CudaArch::kSm80);
  // 32- and 64-byte swizzled rows (K = 16 and 32 halves).
  CheckGemmSs({"tl::half_t", 64, 64, 16, 2, 2, false, true, true}, CudaArch::kSm80);
}

// FlashAttention's inner step: S = Q K^T (gemm_ss, WarpsN = 1), P = half(S)
// in place (the accumulator layout is gemm_rs's A layout), O += P V (gemm_rs).
constexpr char kGemmRsKernel[] = R"(#include "tl/tl.h"

extern "C" __global__ void __launch_bounds__(128) attention_k0(
    tl::half_t* __restrict__ Q, tl::half_t* __restrict__ K, tl::half_t* __restrict__ V,
    float* __restrict__ O) {
  uint8_t* smem = tl::dynamic_smem();
  const int tx = threadIdx.x;
  const int bx = blockIdx.x;
  tl::half_t* Q_shared = reinterpret_cast<tl::half_t*>(smem + 0);
  tl::half_t* K_shared = reinterpret_cast<tl::half_t*>(smem + 8192);
  tl::half_t* V_shared = reinterpret_cast<tl::half_t*>(smem + 16384);
  using L = tl::Swizzled<64, 64, 2>;
  for (int v = tx; v < 64 * 8; v += 128) {
    const int r = v / 8, c = v % 8 * 8;
    tl::cp_async_16(Q_shared + L::offset(r, c), Q + (bx * 64 + r) * 64 + c, true);
    tl::cp_async_16(K_shared + L::offset(r, c), K + r * 64 + c, true);
    tl::cp_async_16(V_shared + L::offset(r, c), V + r * 64 + c, true);
  }
  tl::cp_async_commit();
  tl::cp_async_wait<0>();
  tl::syncthreads();
  float acc_s[32];
  float acc_o[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) acc_s[i] = 0.0f, acc_o[i] = 0.0f;
  tl::gemm_ss<64, 64, 64, 4, 1, false, true, L, L>(Q_shared, K_shared, acc_s);
  tl::half_t acc_s_cast[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) acc_s_cast[i] = tl::half_t(tl::exp2(acc_s[i]));
  tl::gemm_rs<64, 64, 64, 4, 1, false, false, L, L>(acc_s_cast, V_shared, acc_o);
#pragma unroll
  for (int i = 0; i < 32; ++i) O[(bx * 128 + tx) * 32 + i] = acc_o[i];
}
)";

TEST(CudaTlTest, GemmRsTakesAFromTheAccumulatorLayout) {
  for (CudaArch arch : kArchs) {
    SCOPED_TRACE(CudaArchName(arch));
    const Compiled c = CompileAndDisassemble(kGemmRsKernel, arch);
    ASSERT_EQ(c.result.kernels.size(), 1u);
    EXPECT_EQ(c.result.kernels[0].spill_store_bytes, 0) << c.result.log;
    EXPECT_FALSE(CountLocalMemoryTraffic(c.sass).any());
    // Two gemms of 4 k-steps x 1 x 8 tiles.
    EXPECT_EQ(CountOpcode(c.sass, "HMMA.16816"), 64);
    // Q: 4 x4 loads; K (stored [N, K]): 4 steps x 4 pairs; V (stored [K, N]):
    // 4 x 4 transposing; A of the second gemm comes from registers.
    EXPECT_EQ(CountOpcode(c.sass, "LDSM.16.M88"), 4 + 16);
    EXPECT_EQ(CountOpcode(c.sass, "LDSM.16.MT88"), 16);
  }
}

// ------------------------------------------------------- static_assert text

struct BadUse {
  const char* what;
  const char* body;     // statements inside the kernel
  const char* message;  // expected in the log
};

TEST(CudaTlTest, BadShapesAndTypesFailWithTheirMessages) {
  const BadUse cases[] = {
      {"M not a multiple of 16 * WarpsM",
       "tl::gemm_ss<100, 128, 32, 2, 2, false, false, tl::RowMajor<100, 32>, "
       "tl::RowMajor<32, 128>>(H, H, acc);",
       "M must be a multiple of 16 * WarpsM"},
      {"N not a multiple of 8 * WarpsN",
       "tl::gemm_ss<64, 40, 32, 2, 2, false, false, tl::RowMajor<64, 32>, "
       "tl::RowMajor<32, 40>>(H, H, acc);",
       "N must be a multiple of 8 * WarpsN"},
      {"K not a multiple of 16",
       "tl::gemm_ss<64, 64, 24, 2, 2, false, false, tl::RowMajor<64, 24>, "
       "tl::RowMajor<24, 64>>(H, H, acc);",
       "K must be a multiple of 16"},
      {"layout of the wrong width",
       "tl::gemm_ss<64, 64, 32, 2, 2, false, false, tl::RowMajor<64, 64>, "
       "tl::RowMajor<32, 64>>(H, H, acc);",
       "LayoutA's column count must be A's stored column count"},
      {"float operands",
       "tl::gemm_ss<64, 64, 32, 2, 2, false, false, tl::RowMajor<64, 32>, "
       "tl::RowMajor<32, 64>>(acc, acc, acc);",
       "operands must be tl::half_t or tl::bfloat16_t"},
      {"transposed register A",
       "tl::gemm_rs<64, 64, 32, 2, 2, true, false, tl::RowMajor<32, 64>, "
       "tl::RowMajor<32, 64>>(H, H, acc);",
       "transpose_A is not supported with A in registers"},
      {"swizzle of 80-byte rows", "X[0] = float(tl::Swizzled<64, 40, 2>::offset(1, 2));",
       "rows must be 32, 64 or a multiple of 128 bytes"},
      {"ldmatrix into too few registers", "uint32_t r[2]; tl::ldmatrix_x4(r, H);",
       "tl::ldmatrix_x4 loads four 8x8 matrices: pass uint32_t[4]"},
      {"reduction over 6 lanes", "X[0] = tl::warp_allreduce<tl::SumOp, 6>(X[0]);",
       "Lanes must be a power of two from 1 to the warp size"},
      {"shuffle of a half", "H[0] = tl::shfl_xor(H[1], 1);",
       "tl::shfl_xor takes float, int, double or a 64-bit integer"},
      {"math on a half", "X[0] = tl::exp(H[0]);", "tl::exp takes float or double"},
      {"infinity of an integer", "X[0] = float(tl::infinity<int>());",
       "tl::infinity<T>: T must be float, double"},
      {"atomic add of a mismatched type", "tl::atomic_add(X, 1.0);",
       "tl::atomic_add supports float, double, 32- and 64-bit integers, tl::half_t and "
       "tl::bfloat16_t"},
  };
  for (const BadUse& bad : cases) {
    SCOPED_TRACE(bad.what);
    const std::string source = Fill(R"(#include "tl/tl.h"

extern "C" __global__ void __launch_bounds__(128) bad_k0(float* __restrict__ X,
                                                         tl::half_t* __restrict__ H) {
  float acc[64];
  $BODY
  X[threadIdx.x] = acc[threadIdx.x % 64];
}
)",
                                    {{"BODY", bad.body}});
    absl::StatusOr<NvrtcResult> r = CompileCuda(source, "bad.cu", CudaArch::kSm80);
    ASSERT_FALSE(r.ok()) << "compiled: " << bad.body;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(bad.message));
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("(errors in bad_k0)"));
  }
}

}  // namespace
}  // namespace tilec::cuda
