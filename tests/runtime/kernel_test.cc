// The runtime on its emulator backend: real artifacts (NVRTC builds them; the
// emulator runs their generated source) launched through runtime::Kernel and
// compared with the reference interpreter, and every argument check with its
// message.
#include "runtime/kernel.h"

#include <cstdio>
#include <cstring>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "compiler/interp/compare.h"
#include "compiler/interp/interp.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"
#include "tests/runtime/runtime_testing.h"

namespace tilec::runtime {
namespace {

using ::testing::HasSubstr;
using ::tilec::testing::ArgsFor;
using ::tilec::testing::BuildForRuntime;
using ::tilec::testing::BuiltArtifact;
using ::tilec::testing::CompileExampleCase;
using ::tilec::testing::CompileSource;
using ::tilec::testing::kScaleKernel;
using ::tilec::testing::TestSeed;

uint64_t Seed() {
  const uint64_t seed = TestSeed(std::random_device{}());
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

// Runs `built` through the runtime on the emulator and the interpreter on the
// same random inputs; every tensor must agree within its dtype's tolerance.
void ExpectRuntimeMatchesInterpreter(const BuiltArtifact& built, Backend* backend,
                                     const absl::flat_hash_map<std::string, int64_t>& dims,
                                     uint64_t seed, int launches = 1) {
  absl::StatusOr<std::vector<interp::Tensor>> inputs =
      interp::MakeInputs(built.program, dims, seed);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  std::vector<interp::Tensor> expected = *inputs;
  ASSERT_TRUE(interp::RunProgram(built.program, expected).ok());
  absl::StatusOr<std::unique_ptr<Kernel>> kernel = Kernel::Load(built.artifact, backend);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  for (int l = 0; l < launches; ++l) {
    std::vector<interp::Tensor> got = *inputs;
    std::vector<Arg> args = ArgsFor(built.program, got);
    absl::Status st = (*kernel)->Launch(args);
    ASSERT_TRUE(st.ok()) << st;
    for (size_t i = 0; i < got.size(); ++i) {
      if (!built.program.params[i].tensor) continue;
      auto cmp =
          interp::CompareTensors(got[i], expected[i], interp::DefaultTolerance(got[i].dtype()));
      ASSERT_TRUE(cmp.ok()) << cmp.status();
      EXPECT_TRUE(cmp->ok) << built.program.params[i].tensor->name << " (launch " << l + 1
                           << "): " << cmp->Summary();
    }
  }
}

class RuntimeExamples : public ::testing::TestWithParam<std::string> {};

TEST_P(RuntimeExamples, EmulatorLaunchMatchesTheInterpreter) {
  absl::StatusOr<ir::Program> program = CompileExampleCase(GetParam());
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<BuiltArtifact> built = BuildForRuntime(*program);
  ASSERT_TRUE(built.ok()) << built.status();
  std::unique_ptr<Backend> emulator = OpenEmulatorBackend();
  // Twice through one kernel: the second launch must see fresh zeroed
  // workspaces, not the first one's.
  ExpectRuntimeMatchesInterpreter(*built, emulator.get(), {}, Seed(), /*launches=*/2);
}

// On sm_90a the runtime makes the TMA tensor maps of a warp-specialised
// GEMM and of FlashAttention (4-d boxes) at launch, from the arguments.
TEST(RuntimeTma, TensorMapsAreMadeAtLaunch) {
  for (const char* name : {"gemm_f16_nn_ragged", "flash_attention_causal_small"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<ir::Program> program = CompileExampleCase(name);
    ASSERT_TRUE(program.ok()) << program.status();
    absl::StatusOr<BuiltArtifact> built = BuildForRuntime(*program, cuda::CudaArch::kSm90a);
    ASSERT_TRUE(built.ok()) << built.status();
    bool maps = false;
    for (const KernelSpec& k : built->artifact.kernels) maps = maps || !k.tensor_maps.empty();
    EXPECT_TRUE(maps) << "no TMA in " << name;
    std::unique_ptr<Backend> emulator = OpenEmulatorBackend();
    ExpectRuntimeMatchesInterpreter(*built, emulator.get(), {}, Seed(), /*launches=*/2);
  }
}

// An AMD artifact (the code object, its metadata and source) runs through
// the runtime on the emulator with 64-lane wavefronts: MFMA GEMM,
// FlashAttention and a reduction.
TEST(RuntimeAmd, Gfx942ArtifactsRunOnTheEmulator) {
  absl::StatusOr<cuda::CudaTarget> target = cuda::CudaTarget::FromName("gfx942");
  ASSERT_TRUE(target.ok());
  for (const char* name : {"gemm_f16_nn_ragged", "flash_attention_causal_small", "softmax_ragged"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<ir::Program> program = CompileExampleCase(name);
    ASSERT_TRUE(program.ok()) << program.status();
    absl::StatusOr<BuiltArtifact> built = BuildForRuntime(*program, *target);
    ASSERT_TRUE(built.ok()) << built.status();
    EXPECT_EQ(built->artifact.vendor(), "hip");
    std::unique_ptr<Backend> emulator = OpenEmulatorBackend();
    ExpectRuntimeMatchesInterpreter(*built, emulator.get(), {}, Seed());
  }
}

// Shapes that do not divide the tiles; several kernels with workspaces
// (gqa_decode); a pipelined gemm.
INSTANTIATE_TEST_SUITE_P(Cases, RuntimeExamples,
                         ::testing::Values("elementwise_add_ragged", "gemm_f16_nn_ragged",
                                           "softmax_ragged", "gqa_decode_small",
                                           "dequant_gemm_ragged"));

class ScaleKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<ir::Program> program = CompileSource("scale.py", kScaleKernel, "scale", {});
    ASSERT_TRUE(program.ok()) << program.status();
    absl::StatusOr<BuiltArtifact> built = BuildForRuntime(*program);
    ASSERT_TRUE(built.ok()) << built.status();
    built_ = *std::move(built);
    emulator_ = OpenEmulatorBackend();
    absl::StatusOr<std::unique_ptr<Kernel>> kernel = Kernel::Load(built_.artifact, emulator_.get());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    kernel_ = *std::move(kernel);
  }

  // X random, Y filled with a sentinel.
  void Fill(int64_t n) {
    x_.assign(n, 0);
    y_.assign(n, -12345.0f);
    std::mt19937 rng(static_cast<uint32_t>(seed_));
    std::uniform_real_distribution<float> u(-4, 4);
    for (float& v : x_) v = u(rng);
  }
  Arg X() { return Arg::Tensor(x_.data(), "float32", {static_cast<int64_t>(x_.size())}); }
  Arg Y() { return Arg::Tensor(y_.data(), "float32", {static_cast<int64_t>(y_.size())}); }
  // The launch failed before anything ran.
  void ExpectUntouched() {
    for (float v : y_) ASSERT_EQ(v, -12345.0f);
  }

  uint64_t seed_ = Seed();
  BuiltArtifact built_;
  std::unique_ptr<Backend> emulator_;
  std::unique_ptr<Kernel> kernel_;
  std::vector<float> x_, y_;
};

TEST_F(ScaleKernel, OneArtifactRunsEveryDynamicSize) {
  for (int64_t n : {1, 127, 300, 1000}) {
    Fill(n);
    absl::Status st = kernel_->Launch({X(), Y()});
    ASSERT_TRUE(st.ok()) << st;
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y_[i], 2 * x_[i]) << "N=" << n << " i=" << i;
    absl::StatusOr<std::map<std::string, int64_t>> dims = kernel_->Check({X(), Y()});
    ASSERT_TRUE(dims.ok());
    EXPECT_EQ(dims->at("N"), n);
  }
}

TEST_F(ScaleKernel, RefusesMismatchedArgumentsNamingTheParameter) {
  Fill(300);
  std::vector<float> short_y(200), x2d(600);
  alignas(16) char raw[1300];
  struct Case {
    std::vector<Arg> args;
    std::string message;
  };
  Arg strided = X();
  strided.strides = {2};
  Arg misaligned = Arg::Tensor(raw + 4, "float32", {300});
  Arg on_gpu = Y();
  on_gpu.device_type = DeviceType::kCuda;
  Case cases[] = {
      {{X()}, "scale takes 2 arguments (X, Y); got 1"},
      {{X(), Y(), Arg::Int(1)}, "takes 2 arguments"},
      {{X(), Arg::Float(2.0)},
       "parameter Y (argument 2) is a float32 tensor of shape [N]; got a scalar"},
      {{Arg::Tensor(x_.data(), "float16", {300}), Y()},
       "parameter X (argument 1) must be float32; got float16"},
      {{Arg::Tensor(x2d.data(), "float32", {2, 300}), Y()},
       "parameter X (argument 1) must have rank 1 [N]; got shape [2, 300]"},
      {{X(), Arg::Tensor(short_y.data(), "float32", {200})},
       "dynamic dim N is 300 by X's dimension 0 but 200 by Y's dimension 0"},
      {{strided, Y()}, "parameter X (argument 1) must be contiguous (row-major); got strides [2]"},
      {{misaligned, Y()}, "parameter X (argument 1) must be 16-byte aligned"},
      {{X(), on_gpu}, "parameter Y (argument 2) is in cuda:0, but the kernel runs on emulator"},
      {{Arg::Tensor(nullptr, "float32", {300}), Y()}, "parameter X (argument 1) is a null pointer"},
  };
  for (const Case& c : cases) {
    absl::Status st = kernel_->Launch(c.args);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(st.message(), HasSubstr(c.message));
    ExpectUntouched();
  }
}

TEST_F(ScaleKernel, TimesEveryIteration) {
  Fill(1000);
  absl::StatusOr<std::vector<double>> ms =
      kernel_->Time({X(), Y()}, {.warmup = 1, .iterations = 4});
  ASSERT_TRUE(ms.ok()) << ms.status();
  ASSERT_EQ(ms->size(), 4u);
  for (double t : *ms) EXPECT_GT(t, 0);
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(y_[i], 2 * x_[i]);
  EXPECT_FALSE(kernel_->Time({X(), Y()}, {.warmup = 0, .iterations = 0}).ok());
}

// Asserts on dynamic sizes travel in the artifact ("requires") and are
// checked at launch, before anything runs.
constexpr char kRequiresKernel[] = R"(
import tilelang.language as T

@T.prim_func
def pairs(A: T.Tensor((T.dynamic("N"),), "float32"), B: T.Tensor((T.dynamic("M"),), "float32")):
    assert T.dynamic("N") % 4 == 0, "N must be a multiple of 4"
    assert A.shape == [B.shape[0] * 2], "A holds two elements per element of B"
    with T.Kernel(T.ceildiv(T.dynamic("M"), 32), threads=32) as bx:
        for i in T.Parallel(32):
            if bx * 32 + i < T.dynamic("M"):
                B[bx * 32 + i] = A[2 * (bx * 32 + i)] + A[2 * (bx * 32 + i) + 1]
)";

TEST(RuntimeRequirements, AssertsOnDynamicSizesAreCheckedAtLaunch) {
  absl::StatusOr<ir::Program> program = CompileSource("pairs.py", kRequiresKernel, "pairs", {});
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->requirements.size(), 2u);
  for (const char* arch : {"sm_90a", "gfx942"}) {
    SCOPED_TRACE(arch);
    absl::StatusOr<cuda::CudaTarget> target = cuda::CudaTarget::FromName(arch);
    ASSERT_TRUE(target.ok());
    absl::StatusOr<BuiltArtifact> built = BuildForRuntime(*program, *target);
    ASSERT_TRUE(built.ok()) << built.status();
    ASSERT_EQ(built->artifact.requirements.size(), 2u);
    EXPECT_THAT(cuda::CudaArtifactMetadataJson(built->cuda), HasSubstr("\"requires\": [{\"cond\": \"N % 4 == 0\""));
    std::unique_ptr<Backend> emulator = OpenEmulatorBackend();
    ExpectRuntimeMatchesInterpreter(*built, emulator.get(), {{"N", 200}, {"M", 100}}, Seed());
    absl::StatusOr<std::unique_ptr<Kernel>> kernel = Kernel::Load(built->artifact, emulator.get());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    struct Case {
      int64_t n, m;
      std::string message;  // the runtime's
      std::string why;      // in the interpreter's too
    } cases[] = {
        {202, 101, "pairs requires N % 4 == 0 (N = 202): N must be a multiple of 4",
         "N must be a multiple of 4"},
        {200, 99, "(M = 99, N = 200): A holds two elements per element of B",
         "A holds two elements per element of B"},
    };
    for (const Case& c : cases) {
      std::vector<float> a(c.n, 1.0f), b(c.m, -5.0f);
      absl::Status st = (*kernel)->Launch({Arg::Tensor(a.data(), "float32", {c.n}),
                                           Arg::Tensor(b.data(), "float32", {c.m})});
      EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
      EXPECT_THAT(st.message(), HasSubstr(c.message));
      for (float v : b) ASSERT_EQ(v, -5.0f);  // nothing ran
      std::vector<interp::Tensor> args = {interp::Tensor(ir::DType::kFloat32, {c.n}),
                                          interp::Tensor(ir::DType::kFloat32, {c.m})};
      absl::Status ref = interp::RunProgram(built->program, args);
      EXPECT_EQ(ref.code(), absl::StatusCode::kInvalidArgument) << ref;
      EXPECT_THAT(ref.message(), HasSubstr("pairs requires"));
      EXPECT_THAT(ref.message(), HasSubstr(c.why));
    }
  }
}

TEST(RuntimeShapes, StaticShapesAreCheckedDimensionByDimension) {
  absl::StatusOr<ir::Program> program = CompileExampleCase("gemm_f16_nn_ragged");
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<BuiltArtifact> built = BuildForRuntime(*program);
  ASSERT_TRUE(built.ok()) << built.status();
  std::unique_ptr<Backend> emulator = OpenEmulatorBackend();
  absl::StatusOr<std::unique_ptr<Kernel>> kernel = Kernel::Load(built->artifact, emulator.get());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  // A is 100x56, B 56x72, C 100x72: B given as 64x72.
  std::vector<uint16_t> a(100 * 56), b(64 * 72), c(100 * 72);
  absl::Status st = (*kernel)->Launch({Arg::Tensor(a.data(), "float16", {100, 56}),
                                       Arg::Tensor(b.data(), "float16", {64, 72}),
                                       Arg::Tensor(c.data(), "float16", {100, 72})});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("parameter B (argument 2) must have shape [56, 72]; "
                                      "dimension 0 is 64, expected 56"));
}

constexpr char kScalarKernel[] = R"(
import tilelang.language as T

def axpb(N, block=64):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32"), a: T.float32, b: T.int32):
        with T.Kernel(T.ceildiv(N, block), threads=64) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    Y[bx * block + i] = X[bx * block + i] * a + b
    return main
)";

TEST(RuntimeScalars, ScalarsAreConvertedToTheirParameterTypes) {
  absl::StatusOr<ir::Program> program = CompileSource("axpb.py", kScalarKernel, "axpb", {});
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<BuiltArtifact> built = BuildForRuntime(*program);
  ASSERT_TRUE(built.ok()) << built.status();
  std::unique_ptr<Backend> emulator = OpenEmulatorBackend();
  ExpectRuntimeMatchesInterpreter(*built, emulator.get(), {{"N", 200}}, Seed());
  absl::StatusOr<std::unique_ptr<Kernel>> kernel = Kernel::Load(built->artifact, emulator.get());
  ASSERT_TRUE(kernel.ok());
  std::vector<float> x(200, 1.5f), y(200);
  Arg X = Arg::Tensor(x.data(), "float32", {200}), Y = Arg::Tensor(y.data(), "float32", {200});
  ASSERT_TRUE((*kernel)->Launch({X, Y, Arg::Int(3), Arg::Int(-2)}).ok());  // an int for a float
  EXPECT_EQ(y[7], 1.5f * 3 - 2);
  absl::Status st = (*kernel)->Launch({X, Y, Arg::Float(1), Arg::Float(0.5)});
  EXPECT_THAT(st.message(), HasSubstr("parameter b is a int32 scalar; got the float 0.5"));
  st = (*kernel)->Launch({X, Y, Arg::Float(1), Arg::Int(int64_t{1} << 40)});
  EXPECT_THAT(st.message(), HasSubstr("out of its range"));
  st = (*kernel)->Launch({X, Y, X, Arg::Int(1)});
  EXPECT_THAT(st.message(),
              HasSubstr("parameter a (argument 3) is a float32 scalar; got a tensor"));
}

// A grid sized by an integer scalar parameter (`T.Kernel(T.ceildiv(len,
// 64))`): the runtime evaluates it from the scalar's value at each launch.
constexpr char kScalarGrid[] = R"(
import tilelang.language as T

def head(cap):
    @T.prim_func
    def main(X: T.Tensor((cap,), "float32"), Y: T.Tensor((cap,), "float32"), n: T.int32):
        with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < n:
                    Y[bx * 64 + i] = X[bx * 64 + i] + 1.0
    return main
)";

TEST(RuntimeScalars, AnIntegerScalarSizesTheGrid) {
  absl::StatusOr<ir::Program> program =
      CompileSource("head.py", kScalarGrid, "head", {{"cap", "300"}});
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<BuiltArtifact> built = BuildForRuntime(*program);
  ASSERT_TRUE(built.ok()) << built.status();
  std::unique_ptr<Backend> emulator = OpenEmulatorBackend();
  ExpectRuntimeMatchesInterpreter(*built, emulator.get(), {}, Seed());
  absl::StatusOr<std::unique_ptr<Kernel>> kernel = Kernel::Load(built->artifact, emulator.get());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  for (int64_t n : {1, 64, 65, 300}) {
    std::vector<float> x(300, 2.0f), y(300, -1.0f);
    Arg X = Arg::Tensor(x.data(), "float32", {300}), Y = Arg::Tensor(y.data(), "float32", {300});
    ASSERT_TRUE((*kernel)->Launch({X, Y, Arg::Int(n)}).ok()) << n;
    for (int64_t i = 0; i < 300; ++i) EXPECT_EQ(y[i], i < n ? 3.0f : -1.0f) << n << " " << i;
  }
  std::vector<float> x(300), y(300);
  absl::Status st = (*kernel)->Launch({Arg::Tensor(x.data(), "float32", {300}),
                                       Arg::Tensor(y.data(), "float32", {300}), Arg::Int(0)});
  EXPECT_THAT(st.message(), HasSubstr("grid extent 0"));
}

// A strided tensor (T.StridedTensor) with a runtime row stride: launches bind
// NN from the argument's strides and read the tensor inside its storage.
constexpr char kStridedKernel[] = R"(
import tilelang.language as T

def rows():
    M = T.dynamic("M")
    NN = T.dynamic("NN")
    @T.prim_func
    def main(A: T.StridedTensor((M, 8), (NN, 1), "float32"), B: T.Tensor((M, 8), "float32")):
        with T.Kernel(M, threads=32) as bx:
            for j in T.Parallel(8):
                B[bx, j] = A[bx, j] + 1.0
    return main
)";

TEST(RuntimeShapes, StridedTensorsBindAndCheckTheirStrides) {
  absl::StatusOr<ir::Program> program = CompileSource("rows.py", kStridedKernel, "rows", {});
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<BuiltArtifact> built = BuildForRuntime(*program);
  ASSERT_TRUE(built.ok()) << built.status();
  ASSERT_EQ(built->artifact.params[0].strides.size(), 2u);
  std::unique_ptr<Backend> emulator = OpenEmulatorBackend();
  absl::StatusOr<std::unique_ptr<Kernel>> kernel = Kernel::Load(built->artifact, emulator.get());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const int64_t m = 5, nn = 12;
  // Exactly the storage the tensor spans: the last row has no padding.
  std::vector<float> a((m - 1) * nn + 8), b(m * 8, -7.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
  Arg A = Arg::Tensor(a.data(), "float32", {m, 8});
  A.strides = {nn, 1};
  Arg B = Arg::Tensor(b.data(), "float32", {m, 8});
  absl::Status st = (*kernel)->Launch({A, B});
  ASSERT_TRUE(st.ok()) << st;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < 8; ++j) EXPECT_EQ(b[i * 8 + j], a[i * nn + j] + 1) << i << " " << j;
  }
  // A contiguous tensor is a strided one with NN = 8.
  std::vector<float> c(m * 8, 2.0f);
  ASSERT_TRUE((*kernel)->Launch({Arg::Tensor(c.data(), "float32", {m, 8}), B}).ok());
  EXPECT_EQ(b[m * 8 - 1], 3.0f);
  Arg columns = A;
  columns.strides = {nn, 2};
  st = (*kernel)->Launch({columns, B});
  EXPECT_THAT(st.message(), HasSubstr("parameter A (argument 1) must have strides [12, 1] (NN, 1); "
                                      "stride 1 is 2"));
  Arg overlapping = A;
  overlapping.strides = {6, 1};
  st = (*kernel)->Launch({overlapping, B});
  EXPECT_THAT(st.message(), HasSubstr("place elements on top of each other"));
}

TEST(RuntimeBackends, EmulatorNeedsTheGeneratedSource) {
  absl::StatusOr<ir::Program> program = CompileSource("scale.py", kScaleKernel, "scale", {});
  ASSERT_TRUE(program.ok());
  absl::StatusOr<BuiltArtifact> built = BuildForRuntime(*program);
  ASSERT_TRUE(built.ok());
  built->artifact.source.clear();
  std::unique_ptr<Backend> emulator = OpenEmulatorBackend();
  absl::StatusOr<std::unique_ptr<Kernel>> kernel = Kernel::Load(built->artifact, emulator.get());
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(kernel.status().message(), HasSubstr("carries no generated source"));
}

TEST(RuntimeBackends, GpuBackendsWithoutTheirDriverSaySo) {
  // This machine may have a GPU; where it does not, the error names the
  // library that is missing rather than crashing.
  absl::StatusOr<std::unique_ptr<Backend>> cuda = OpenBackend(*DeviceSpec::Parse("cuda:0"));
  if (!cuda.ok()) {
    EXPECT_EQ(cuda.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(cuda.status().message(),
                ::testing::AnyOf(HasSubstr("libcuda.so.1"), HasSubstr("no usable NVIDIA GPU"),
                                 HasSubstr("does not exist")));
  } else {
    absl::StatusOr<DeviceInfo> info = (*cuda)->Info();
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_THAT(info->arch, ::testing::StartsWith("sm_"));
  }
  absl::StatusOr<std::unique_ptr<Backend>> hip = OpenBackend(*DeviceSpec::Parse("hip:0"));
  if (!hip.ok()) {
    EXPECT_EQ(hip.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(hip.status().message(),
                ::testing::AnyOf(HasSubstr("libamdhip64.so"), HasSubstr("no usable AMD GPU"),
                                 HasSubstr("does not exist")));
  }
}

TEST(RuntimeBackends, DeviceNames) {
  EXPECT_EQ(DeviceSpec::Parse("cuda:3")->ToString(), "cuda:3");
  EXPECT_EQ(DeviceSpec::Parse("hip")->ToString(), "hip:0");
  EXPECT_EQ(DeviceSpec::Parse("emulator")->ToString(), "emulator");
  for (const char* bad : {"gpu:0", "cuda:x", "cuda:", "cuda:99999"}) {
    absl::StatusOr<DeviceSpec> d = DeviceSpec::Parse(bad);
    EXPECT_FALSE(d.ok()) << bad;
  }
}

}  // namespace
}  // namespace tilec::runtime
