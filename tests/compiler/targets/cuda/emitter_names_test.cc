// Names never carry user text into generated source: a kernel written with
// non-ASCII identifiers is emitted for every target with only ASCII bytes,
// and a program whose names are not identifiers (built directly, past the
// verifier) is refused by the emitter itself on every target, with no
// source produced. The emitted kernels still compute what the interpreter
// does.
#include <string>
#include <vector>

#include "compiler/ir/names.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::testing {
namespace {

// Greek and accented identifiers for the function, a parameter, a shared
// buffer, a loop variable and a local.
constexpr char kNonAscii[] = R"(
import tilelang.language as T

def débit(N, bloc=64):
    @T.prim_func
    def ké(α: T.Tensor((N,), "float32"), β: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, bloc), threads=64) as bx:
            tuileé = T.alloc_shared((bloc,), "float32")
            for ι in T.Parallel(bloc):
                if bx * bloc + ι < N:
                    tuileé[ι] = α[bx * bloc + ι]
            for ι in T.Parallel(bloc):
                if bx * bloc + ι < N:
                    β[bx * bloc + ι] = tuileé[ι] * 3.0
    return ké
)";

const std::vector<std::string> kTargets = {"sm_80", "sm_90a", "gfx942", "gfx90a"};

bool AllAscii(const std::string& s) {
  for (unsigned char c : s) {
    if (c >= 0x80) return false;
  }
  return true;
}

TEST(EmitterNames, NonAsciiIdentifiersAreSpelledInAsciiOnEveryTarget) {
  absl::StatusOr<ir::Program> p = CompileSource("names.py", kNonAscii,
                                                "d\xc3\xa9"
                                                "bit",
                                                {{"N", "100"}});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "d_xc3_xa9bit");
  for (const std::string& t : kTargets) {
    absl::StatusOr<cuda::CudaTarget> target = cuda::CudaTarget::FromName(t);
    ASSERT_TRUE(target.ok()) << t;
    absl::StatusOr<cuda::CudaSource> src = EmitFor(*p, *target);
    ASSERT_TRUE(src.ok()) << t << ": " << src.status();
    EXPECT_TRUE(AllAscii(src->code)) << t;
    EXPECT_NE(src->code.find("tuile_xc3_xa9"), std::string::npos) << t;
  }
  // And the spelled kernel computes what the interpreter does (seed printed
  // by the helper; N = 100 does not divide the 64-element blocks).
  absl::StatusOr<cuda::CudaSource> src = EmitFor(*p, cuda::CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = TestSeed(49)});
}

TEST(EmitterNames, TheEmitterRefusesNamesThatAreNotIdentifiersOnEveryTarget) {
  absl::StatusOr<ir::Program> base = CompileSource("scale.py", kScaleKernel, "scale", {});
  ASSERT_TRUE(base.ok()) << base.status();
  const std::string marker = "__device__ int marker = 42;";
  for (const std::string& name :
       {"k\n" + marker + "\n//", std::string("k\\"), std::string("k\"x"), std::string("a*/b"),
        std::string("#define x"), std::string("k\0x", 3)}) {
    ir::Program p = *base;
    p.name = name;
    for (const std::string& t : kTargets) {
      absl::StatusOr<cuda::CudaTarget> target = cuda::CudaTarget::FromName(t);
      ASSERT_TRUE(target.ok()) << t;
      absl::StatusOr<cuda::CudaSource> src = EmitFor(p, *target);
      ASSERT_FALSE(src.ok()) << t << ": emitted\n" << src->code;
      EXPECT_TRUE(absl::IsInvalidArgument(src.status())) << t << ": " << src.status();
      EXPECT_NE(src.status().message().find("is not an identifier"), absl::string_view::npos)
          << src.status();
      // The name is quoted escaped: the message is one line.
      EXPECT_EQ(src.status().message().find('\n'), absl::string_view::npos) << src.status();
    }
  }
}

}  // namespace
}  // namespace tilec::testing
