#include "tests/conformance/conformance_testing.h"

#include <cmath>
#include <cstdio>

#include "gtest/gtest.h"

namespace tilec::conformance {

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

uint64_t Seed(uint64_t default_seed) {
  uint64_t seed = ::tilec::testing::TestSeed(default_seed);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

ir::Program Compile(const char* source, const std::string& function, const BindingList& bindings) {
  absl::StatusOr<ir::Program> p =
      ::tilec::testing::CompileSource("conformance.py", source, function, bindings);
  EXPECT_TRUE(p.ok()) << function << ": " << p.status();
  return p.ok() ? *std::move(p) : ir::Program{};
}

absl::Status CompileStatus(const char* source, const std::string& function,
                           const BindingList& bindings) {
  return ::tilec::testing::CompileSource("conformance.py", source, function, bindings).status();
}

void ExpectRefused(const char* source, const std::string& function, const BindingList& bindings,
                   const std::string& message, bool located) {
  absl::Status s = CompileStatus(source, function, bindings);
  ASSERT_FALSE(s.ok()) << function << " compiled, but tilec documents a refusal: " << message;
  EXPECT_NE(s.message().find(message), std::string::npos)
      << "message: " << s.message() << "\nexpected to contain: " << message;
  if (!located) return;
  EXPECT_NE(s.message().find("conformance.py:"), std::string::npos)
      << "a refusal is located: " << s.message();
}

interp::Tensor Random(ir::DType dtype, std::vector<int64_t> shape, uint64_t seed) {
  return interp::RandomTensor(dtype, std::move(shape), seed);
}

interp::Tensor Zeros(ir::DType dtype, std::vector<int64_t> shape) {
  return interp::Tensor(dtype, std::move(shape));
}

void Interpret(const ir::Program& program, Tensors& args) {
  absl::Status s = interp::RunProgram(program, args);
  ASSERT_TRUE(s.ok()) << s;
}

void ExpectClose(const interp::Tensor& actual, const std::vector<double>& expected,
                 interp::Tolerance tol, const std::string& what) {
  ASSERT_EQ(actual.num_elements(), static_cast<int64_t>(expected.size())) << what;
  int reported = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < actual.num_elements(); ++i) {
    double a = actual.GetDouble(i);
    double e = expected[i];
    bool ok = (std::isnan(a) && std::isnan(e)) || a == e ||
              std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e);
    if (!ok) {
      ++bad;
      if (reported++ < 8) {
        ADD_FAILURE() << what << " element " << i << ": got " << a << ", expected " << e;
      }
    }
  }
  EXPECT_EQ(bad, 0) << what << ": mismatching elements of " << actual.num_elements();
}

void ExpectEqualInts(const interp::Tensor& actual, const std::vector<int64_t>& expected,
                     const std::string& what) {
  ASSERT_EQ(actual.num_elements(), static_cast<int64_t>(expected.size())) << what;
  int reported = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < actual.num_elements(); ++i) {
    if (actual.GetInt(i) != expected[i]) {
      ++bad;
      if (reported++ < 8) {
        ADD_FAILURE() << what << " element " << i << ": got " << actual.GetInt(i) << ", expected "
                      << expected[i];
      }
    }
  }
  EXPECT_EQ(bad, 0) << what << ": mismatching elements of " << actual.num_elements();
}

std::vector<double> GemmReference(const Tensors& args, int64_t m, int64_t n, int64_t k, bool ta,
                                  bool tb) {
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l) {
        double a = args[0].GetDouble(ta ? l * m + i : i * k + l);
        double b = args[1].GetDouble(tb ? j * k + l : l * n + j);
        s += a * b;
      }
      c[i * n + j] = s;
    }
  }
  return c;
}

std::vector<double> Table(int64_t n, const std::function<double(int64_t)>& f) {
  std::vector<double> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = f(i);
  return out;
}

void ExpectTargetsMatch(const ir::Program& program, const EmulatorCheck& check,
                        std::vector<cuda::CudaArch> archs) {
  for (cuda::CudaArch arch : archs) {
    SCOPED_TRACE(arch == cuda::CudaArch::kSm80 ? "sm_80" : "sm_90a");
    absl::StatusOr<cuda::CudaSource> src = ::tilec::testing::EmitFor(program, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(program, *src, check);
  }
}

void ExpectAllTargetsMatch(const ir::Program& program, uint64_t seed) {
  EmulatorCheck check{.seed = seed};
  check.launch.check_uninit = true;
  ExpectTargetsMatch(program, check, kBothArchs);
  absl::StatusOr<cuda::CudaTarget> amd = cuda::CudaTarget::FromName("gfx942");
  ASSERT_TRUE(amd.ok());
  absl::StatusOr<cuda::CudaSource> src = ::tilec::testing::EmitFor(program, *amd);
  ASSERT_TRUE(src.ok()) << src.status();
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(program, *src, check);
}

}  // namespace tilec::conformance
