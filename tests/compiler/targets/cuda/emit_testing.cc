#include "tests/compiler/targets/cuda/emit_testing.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/interp/compare.h"
#include "compiler/interp/interp.h"
#include "compiler/ir/verifier.h"
#include "compiler/targets/host/emulate.h"

namespace tilec::testing {

uint64_t TestSeed(uint64_t default_seed) {
  const char* env = std::getenv("TILEC_TEST_SEED");
  return env ? std::strtoull(env, nullptr, 10) : default_seed;
}

absl::StatusOr<ir::Program> CompileWithBindings(const std::string& path, const std::string& text,
                                                const std::string& function,
                                                const frontend::Bindings& bindings) {
  absl::StatusOr<ir::Program> p =
      frontend::CompileTileLang(frontend::SourceFile{path, text}, function, bindings);
  if (!p.ok()) return p.status();
  if (absl::Status st = ir::Verify(*p); !st.ok()) return st;
  return p;
}

absl::StatusOr<ir::Program> CompileSource(const std::string& path, const std::string& text,
                                          const std::string& function,
                                          const BindingList& bindings) {
  frontend::Bindings b;
  for (const auto& [k, v] : bindings) b.Set(k, v);
  return CompileWithBindings(path, text, function, b);
}

absl::StatusOr<ir::Program> CompileExample(const std::string& file, const std::string& function,
                                           const BindingList& bindings) {
  absl::StatusOr<std::string> text = ReadFile(ExamplesDir() + "/" + file);
  if (!text.ok()) return text.status();
  return CompileSource("examples/" + file, *text, function, bindings);
}

absl::StatusOr<ExampleCase> FindExampleCase(const std::string& name) {
  absl::StatusOr<std::vector<ExampleCase>> cases = LoadExampleCases();
  if (!cases.ok()) return cases.status();
  for (const ExampleCase& c : *cases) {
    if (c.name == name) return c;
  }
  return absl::NotFoundError(absl::StrCat("examples/cases.txt has no case ", name));
}

absl::StatusOr<ir::Program> CompileExampleCase(const ExampleCase& c) {
  return CompileExample(c.file, c.function, c.bindings);
}

absl::StatusOr<ir::Program> CompileExampleCase(const std::string& name) {
  absl::StatusOr<ExampleCase> c = FindExampleCase(name);
  if (!c.ok()) return c.status();
  return CompileExampleCase(*c);
}

std::vector<ExampleCase> ExampleCasesOrDie() {
  absl::StatusOr<std::vector<ExampleCase>> cases = LoadExampleCases();
  if (!cases.ok()) {
    std::fprintf(stderr, "cannot load examples/cases.txt: %s\n",
                 std::string(cases.status().message()).c_str());
    std::abort();
  }
  return *cases;
}

std::string CaseName(const ::testing::TestParamInfo<ExampleCase>& info) { return info.param.name; }

absl::StatusOr<cuda::CudaSource> EmitFor(const ir::Program& program, cuda::CudaArch arch) {
  return EmitFor(program, cuda::CudaTarget::ForArch(arch));
}

absl::StatusOr<cuda::CudaSource> EmitFor(const ir::Program& program,
                                        const cuda::CudaTarget& target) {
  absl::StatusOr<inference::LayoutPlan> plan = inference::InferLayouts(program, target.info);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<cuda::CudaSource> src = cuda::EmitCuda(program, *plan, target);
  if (src.ok() && std::getenv("TILEC_DUMP_CUDA")) std::printf("%s\n", src->code.c_str());
  return src;
}

namespace {

// The index of the tensor parameter `name`, or -1.
int TensorIndex(const ir::Program& program, const std::string& name) {
  for (size_t i = 0; i < program.params.size(); ++i) {
    if (program.params[i].tensor && program.params[i].tensor->name == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace

void ExpectEmulatorMatchesInterpreter(const ir::Program& program, const cuda::CudaSource& source,
                                      const EmulatorCheck& check) {
  std::string dims_text;
  for (const auto& [k, v] : check.dims) absl::StrAppend(&dims_text, " ", k, "=", v);
  std::printf("%s%s, seed %llu (TILEC_TEST_SEED)\n", program.name.c_str(), dims_text.c_str(),
              static_cast<unsigned long long>(check.seed));
  absl::StatusOr<std::vector<interp::Tensor>> inputs =
      interp::MakeInputs(program, {check.dims.begin(), check.dims.end()}, check.seed);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  for (const std::string& name : check.zero) {
    const int i = TensorIndex(program, name);
    ASSERT_GE(i, 0) << "no tensor parameter " << name << " to zero";
    (*inputs)[i] = interp::Tensor((*inputs)[i].dtype(), (*inputs)[i].shape());
  }
  std::vector<interp::Tensor> expected = *inputs, actual = *inputs;
  absl::Status ran = interp::RunProgram(program, expected);
  ASSERT_TRUE(ran.ok()) << ran;
  absl::Status emulated = host::EmulateProgram(program, source, actual, check.dims, check.launch);
  ASSERT_TRUE(emulated.ok()) << emulated;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!program.params[i].tensor) continue;
    const std::string& name = program.params[i].tensor->name;
    absl::StatusOr<interp::CompareResult> cmp =
        interp::CompareTensors(actual[i], expected[i], interp::DefaultTolerance(actual[i].dtype()));
    ASSERT_TRUE(cmp.ok()) << cmp.status();
    std::printf("  %s %s: %s\n", name.c_str(), actual[i].TypeString().c_str(),
                cmp->Summary().c_str());
    EXPECT_TRUE(cmp->ok) << name << dims_text << ": " << cmp->Summary() << " (seed " << check.seed
                         << ")";
    if (check.exact) {
      EXPECT_EQ(actual[i], expected[i]) << name << dims_text << " (seed " << check.seed << ")";
    }
  }
  for (const std::string& name : check.written) {
    const int i = TensorIndex(program, name);
    ASSERT_GE(i, 0) << "no tensor parameter " << name << " to check";
    EXPECT_NE(actual[i], (*inputs)[i]) << "the kernel did not write " << name;
  }
}

}  // namespace tilec::testing
