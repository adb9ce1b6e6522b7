// Generated code is clean C++: the source emitted for every example case, for
// both targets, compiles on the host path (clang-19, the emulator's build)
// with -Wall -Wextra -Wshadow -Wunused -Werror. The device headers are
// included as system headers (--system-header-prefix=tl/), so only the
// generated kernel is judged.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/target.h"
#include "compiler/targets/host/toolchain.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"
#include "tests/testing/example_cases.h"

namespace tilec::cuda {
namespace {

using ::tilec::testing::ExampleCase;

host::HostOptions StrictOptions(const std::string& name) {
  host::HostOptions options;
  options.opt_level = "-O0";  // warnings only: no need to optimise
  options.debug_info = false;
  options.extra_flags = {"-Wall",    "-Wextra", "-Wshadow",
                         "-Wunused", "-Werror", "--system-header-prefix=tl/"};
  options.source_name = name;
  return options;
}

class GeneratedCode : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(GeneratedCode, CompilesWithoutWarnings) {
  const ExampleCase& c = GetParam();
  absl::StatusOr<ir::Program> program = ::tilec::testing::CompileExampleCase(c);
  ASSERT_TRUE(program.ok()) << program.status();
  // sm_90a's source differs from sm_80's only where a lowering is specific to
  // it; compile each distinct text once.
  std::set<std::string> seen;
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    const CudaTarget target = CudaTarget::ForArch(arch);
    SCOPED_TRACE(std::string(target.name()));
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*program, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    const std::string text =
        absl::StrReplaceAll(src->code, {{std::string(target.name()), "<target>"}});
    if (!seen.insert(text).second) continue;
    absl::StatusOr<host::HostModule> module =
        host::CompileHost(src->code, StrictOptions(absl::StrCat(c.name, ".cu")));
    EXPECT_TRUE(module.ok()) << module.status() << "\n" << src->code;
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, GeneratedCode,
                         ::testing::ValuesIn(::tilec::testing::ExampleCasesOrDie()),
                         ::tilec::testing::CaseName);

// The flags do catch a warning in a kernel (and not in the headers).
TEST(StrictFlags, RejectAShadowedName) {
  const std::string source = R"(#include "tl/tl.h"
extern "C" __global__ void __launch_bounds__(32) shadow_k0(tl::gptr<float> A) {
  const int tx = threadIdx.x;
  for (int k = 0; k < 2; ++k) {
    for (int k = 0; k < 2; ++k) A[tx] = float(k);
  }
}
)";
  absl::StatusOr<host::HostModule> strict = host::CompileHost(source, StrictOptions("shadow.cu"));
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("-Wshadow"), absl::string_view::npos) << strict.status();
  host::HostOptions plain;
  plain.opt_level = "-O0";
  plain.debug_info = false;
  EXPECT_TRUE(host::CompileHost(source, plain).ok());
}

}  // namespace
}  // namespace tilec::cuda
