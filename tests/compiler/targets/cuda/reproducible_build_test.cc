// Builds are reproducible: the same program compiled in two processes gives
// byte-identical cubin, source and metadata, also when one of them received
// the program through the wire form (as a tilecd worker does) and the other
// straight from the frontend (as the embedded CLI does). The artifact cache
// is keyed by the program, so a fleet must not depend on which machine
// compiled an entry.
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/proto_convert.h"
#include "compiler/ir/verifier.h"
#include "compiler/targets/cuda/artifact.h"
#include "compiler/targets/cuda/target.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"
#include "tests/testing/example_cases.h"
#include "tests/testing/temp_dir.h"

namespace tilec::cuda {
namespace {

using ::tilec::testing::ExampleCase;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// In this (child) process: the case's program, optionally through the wire
// form, built for `target` and written to <dir>/out.{cubin,cu,json}.
absl::Status BuildInChild(const ExampleCase& c, const std::string& target_name, bool via_wire,
                          const std::string& dir) {
  absl::StatusOr<ir::Program> program = ::tilec::testing::CompileExampleCase(c);
  if (!program.ok()) return program.status();
  if (via_wire) {
    std::string bytes;
    if (!ir::ToProto(*program).SerializeToString(&bytes)) return absl::InternalError("serialize");
    tilec::v1::Program wire;
    if (!wire.ParseFromString(bytes)) return absl::InternalError("parse");
    program = ir::FromProto(wire);
    if (!program.ok()) return program.status();
    if (absl::Status st = ir::Verify(*program); !st.ok()) return st;
  }
  absl::StatusOr<CudaTarget> target = CudaTarget::FromName(target_name);
  if (!target.ok()) return target.status();
  absl::StatusOr<CudaArtifact> artifact = BuildCudaArtifact(*program, *target);
  if (!artifact.ok()) return artifact.status();
  return WriteCudaArtifact(*artifact, dir, "out");
}

// Runs BuildInChild in a fresh process; "" on success, else the error.
std::string BuildInProcess(const ExampleCase& c, const std::string& target, bool via_wire,
                           const std::string& dir) {
  const std::string err_path = dir + "/error";
  pid_t pid = ::fork();
  if (pid == 0) {
    absl::Status st = BuildInChild(c, target, via_wire, dir);
    if (!st.ok()) std::ofstream(err_path) << st;
    ::_exit(st.ok() ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  std::string err = Slurp(err_path);
  return err.empty() ? "the child process died" : err;
}

// The first line where two texts differ, for the failure message.
std::string FirstDifference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool ea = !std::getline(sa, la), eb = !std::getline(sb, lb);
    if (ea && eb) return "no line differs";
    if (ea != eb || la != lb) {
      return "line " + std::to_string(line) + ":\n  " + la + "\n  " + lb;
    }
  }
}

class ReproducibleBuildTest : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(ReproducibleBuildTest, TwoProcessesOneThroughTheWireGiveIdenticalBytes) {
  const ExampleCase& c = GetParam();
  for (const char* target : {"sm_90a", "sm_80"}) {
    SCOPED_TRACE(target);
    std::string direct = ::tilec::testing::MakeTempDir("repro_direct");
    std::string wire = ::tilec::testing::MakeTempDir("repro_wire");
    ASSERT_EQ(BuildInProcess(c, target, /*via_wire=*/false, direct), "");
    ASSERT_EQ(BuildInProcess(c, target, /*via_wire=*/true, wire), "");
    for (const char* ext : {".cubin", ".cu", ".json"}) {
      std::string a = Slurp(direct + "/out" + ext), b = Slurp(wire + "/out" + ext);
      EXPECT_FALSE(a.empty()) << ext;
      EXPECT_TRUE(a == b) << ext << " differs (" << a.size() << " vs " << b.size() << " bytes), "
                          << (std::string(ext) == ".cubin" ? "" : FirstDifference(a, b));
    }
  }
}

// The first case of every example file.
std::vector<ExampleCase> OnePerExample() {
  absl::StatusOr<std::vector<ExampleCase>> cases = ::tilec::testing::LoadExampleCases();
  if (!cases.ok()) return {};
  std::vector<ExampleCase> out;
  for (const ExampleCase& c : *cases) {
    bool seen = false;
    for (const ExampleCase& o : out) seen |= o.file == c.file;
    if (!seen) out.push_back(c);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Examples, ReproducibleBuildTest, ::testing::ValuesIn(OnePerExample()),
                         ::tilec::testing::CaseName);

TEST(ReproducibleBuildTest, EveryExampleFileHasACase) { EXPECT_GE(OnePerExample().size(), 15u); }

}  // namespace
}  // namespace tilec::cuda
