// `tilec compile ... --local`: the built CLI run as a user runs it.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/example_cases.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr
};

Result RunTilec(const std::string& args) {
  const std::string cmd = absl::StrCat(TILEC_BINARY, " ", args, " 2>&1");
  Result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CompileCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            absl::StrCat("tilec_compile_command_test_", ::getpid()))
               .string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(CompileCommand, WritesCubinSourceAndMetadataAndPrintsEachKernel) {
  const std::string file = ::tilec::testing::ExamplesDir() + "/gqa_decode.py";
  Result r = RunTilec(absl::StrCat(
      "compile ", file,
      " --fn gqa_decode -D batch=1 -D heads=8 -D groups=2 -D seqlen_kv=128 -D dim=32",
      " -D num_split=2 -D block_N=32 -D block_H=16 -D num_stages=2 --target sm_90a --local -o ",
      dir_, " --explain"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("gqa_decode for sm_90a (NVRTC " + NvrtcVersion()));
  // The split pass: 128 threads and a producer warpgroup.
  EXPECT_THAT(r.out, HasSubstr("  gqa_decode_k0  grid (1, 2, 2)  block 256  smem "));
  EXPECT_THAT(r.out, HasSubstr("\n    warp-specialised: a producer warpgroup loads the 2 stages "
                               "of the T.Pipelined loop over k (TMA: K_shared, V_shared) and, "
                               "before it, Q_shared (TMA)\n"));
  EXPECT_THAT(r.out, HasSubstr("\n    not warp-specialised: the kernel has 0 T.Pipelined loops "
                               "(one is needed)\n"));
  EXPECT_THAT(r.out, HasSubstr("  gqa_decode_k1  grid (8, 1, 1)  block 128  smem 0 B"));
  EXPECT_THAT(r.out, HasSubstr("spills 0/0 B"));
  const std::string cubin = ReadAll(dir_ + "/gqa_decode.cubin");
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_THAT(ReadAll(dir_ + "/gqa_decode.cu"),
              HasSubstr("extern \"C\" __global__ void __launch_bounds__(128) gqa_decode_k1("));
  EXPECT_THAT(ReadAll(dir_ + "/gqa_decode.json"),
              HasSubstr("\"program\": \"gqa_decode\", \"target\": \"sm_90a\""));

  Result json = RunTilec(absl::StrCat(
      "compile ", file,
      " --fn gqa_decode -D batch=1 -D heads=8 -D groups=2 -D seqlen_kv=128 -D dim=32",
      " -D num_split=2 -D block_N=32 -D block_H=16 --target sm_80 --local -o ", dir_, " --json"));
  ASSERT_EQ(json.code, 0) << json.out;
  EXPECT_THAT(json.out, HasSubstr("{\"schema\": \"tilec.cuda.artifact.v1\""));
  EXPECT_EQ(json.out, ReadAll(dir_ + "/gqa_decode.json"));
}

TEST_F(CompileCommand, ExitCodesForUsageAndProgramErrors) {
  const std::string file = ::tilec::testing::ExamplesDir() + "/elementwise_add.py";
  const std::string fn = " --fn elementwise_add -D M=64 -D N=64 -D block_M=32 -D block_N=32";
  // An unknown architecture is a usage error.
  Result bad_target =
      RunTilec(absl::StrCat("compile ", file, fn, " --target sm_70 --local -o ", dir_));
  EXPECT_EQ(bad_target.code, 2) << bad_target.out;
  EXPECT_THAT(bad_target.out, HasSubstr("sm_70"));
  // So is a missing output folder.
  Result no_out = RunTilec(absl::StrCat("compile ", file, fn, " --target sm_80 --local"));
  EXPECT_EQ(no_out.code, 2) << no_out.out;
  // A program error (an unknown function) has its own code.
  Result bad_fn =
      RunTilec(absl::StrCat("compile ", file, " --fn nope --target sm_80 --local -o ", dir_));
  EXPECT_EQ(bad_fn.code, 1) << bad_fn.out;
}

}  // namespace
}  // namespace tilec::cuda
