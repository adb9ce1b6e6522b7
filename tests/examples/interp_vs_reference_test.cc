// Every example kernel, bound as in examples/cases.txt, parsed by the frontend
// and run by the reference interpreter, agrees with the float64 reference
// written from the math (tests/reference) on random inputs, ragged shapes
// included, and gives the same answer when its blocks run in shuffled order.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/interp/compare.h"
#include "compiler/interp/interp.h"
#include "compiler/ir/verifier.h"
#include "tests/reference/reference.h"
#include "tests/testing/example_cases.h"

namespace tilec {
namespace {

using interp::Tensor;
using testing::ExampleCase;
namespace ref = reference;

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = t.GetDouble(i);
  return v;
}

// What the reference says one output parameter must hold after the run.
struct Expected {
  int param;
  std::vector<double> values;
  // The narrowest dtype the kernel computes this output in, when narrower
  // than the output itself (float16 sums stored as float32): the tolerance
  // is that dtype's.
  std::optional<ir::DType> computed_in = std::nullopt;
};

ir::DType DTypeOf(const ExampleCase& c, const std::string& name) {
  auto t = ir::ParseDType(c.Get(name));
  if (!t) ADD_FAILURE() << c.name << ": " << name << " is not a dtype";
  return t.value_or(ir::DType::kFloat64);
}

// Adjusts the random inputs where the kernel's contract needs more than
// uniform values, before the run.
void PrepareInputs(const ExampleCase& c, std::vector<Tensor>& args, uint64_t seed) {
  if (c.file == "dequant_gemm.py") {
    // Packed int4 weights: every byte value, so both nibbles take negative and
    // positive values.
    std::mt19937_64 rng(seed ^ 0x5eed);
    Tensor& b = args[1];
    for (int64_t i = 0; i < b.num_elements(); ++i) b.SetInt(i, static_cast<int64_t>(rng() & 0xff));
  }
}

// The reference outputs, computed from the inputs as they were before the run.
std::vector<Expected> Reference(const ExampleCase& c, const std::vector<Tensor>& in) {
  auto v = [&](int i) { return Values(in[i]); };
  auto I = [&](const char* name) { return static_cast<int>(c.Int(name)); };
  const std::string& f = c.file;
  if (f == "gemm.py") {
    return {{2, ref::GemmRef(v(0), v(1), I("M"), I("N"), I("K"), c.Bool("transpose_A"),
                             c.Bool("transpose_B"))}};
  }
  if (f == "gemm_fp8.py") {
    return {{2, ref::GemmRef(v(0), v(1), I("M"), I("N"), I("K"), false, c.Bool("transpose_B"))}};
  }
  if (f == "gemm_eager.py") return {{2, ref::GemmRef(v(0), v(1), I("M"), I("N"), I("K"), false, false)}};
  if (f == "batched_gemm.py") {
    return {{2, ref::BatchedGemmRef(v(0), v(1), I("batch"), I("M"), I("N"), I("K"))}};
  }
  if (f == "gemm_splitk.py") {
    // C accumulates: its random initial contents are part of the input.
    return {{2, ref::GemmSplitKRef(v(0), v(1), v(2), I("M"), I("N"), I("K"))}};
  }
  if (f == "elementwise_add.py") {
    // A + B is computed in in_dtype, then cast.
    return {{2, ref::ElementwiseAddRef(v(0), v(1), I("M"), I("N")), DTypeOf(c, "in_dtype")}};
  }
  if (f == "softmax.py") return {{1, ref::SoftmaxRef(v(0), I("M"), I("N"))}};
  if (f == "rmsnorm.py") return {{2, ref::RmsNormRef(v(0), v(1), I("M"), I("N"), c.Float("eps"))}};
  if (f == "layernorm.py") {
    return {{3, ref::LayerNormRef(v(0), v(1), v(2), I("M"), I("N"), c.Float("eps"))}};
  }
  if (f == "reduce_sum.py") return {{1, ref::RowSumRef(v(0), I("M"), I("N"))}};
  if (f == "cumsum.py") return {{1, ref::CumsumRef(v(0), I("M"), I("N"), c.Bool("reverse"))}};
  if (f == "flash_attention.py") {
    return {{3, ref::AttentionRef(v(0), v(1), v(2), I("batch"), I("heads"), I("seq_q"), I("seq_kv"),
                                  I("dim"), c.Bool("is_causal"), 1.0 / std::sqrt(c.Float("dim")))}};
  }
  if (f == "gqa_decode.py") {
    return {{3, ref::GqaDecodeRef(v(0), v(1), v(2), I("batch"), I("heads"), I("groups"),
                                  I("seqlen_kv"), I("dim"), 1.0 / std::sqrt(c.Float("dim")))}};
  }
  if (f == "mla_decode.py") {
    double scale = 1.0 / std::sqrt(c.Float("dim") + c.Float("pe_dim"));
    return {{4, ref::MlaDecodeRef(v(0), v(1), v(2), v(3), I("batch"), I("heads"), I("seqlen_kv"),
                                  I("dim"), I("pe_dim"), scale)}};
  }
  if (f == "dequant_gemm.py") {
    // The dequantised weights are rounded to in_dtype before the product.
    return {{3, ref::DequantGemmRef(v(0), v(1), v(2), I("M"), I("N"), I("K"), I("group_size")),
             DTypeOf(c, "in_dtype")}};
  }
  if (f == "conv2d_im2col.py") {
    return {{2, ref::Conv2dRef(v(0), v(1), I("N"), I("H"), I("W"), I("C"), I("F"), I("KH"), I("KW"),
                               I("S"), I("P"))}};
  }
  if (f == "atomics.py" && c.function == "atomic_fold") {
    // Adds of an unsigned dtype wrap; the others stay exact in double (small
    // integers, float max/min, one float add per element of B).
    const ir::DType t = DTypeOf(c, "dtype");
    const double modulus = ir::IsInt(t) && !ir::IsSigned(t) ? std::ldexp(1.0, ir::DTypeBits(t)) : 0;
    std::string op = c.Get("op");
    op.erase(std::remove(op.begin(), op.end(), '"'), op.end());
    ref::AtomicFold r =
        ref::AtomicFoldRef(v(0), v(1), v(2), I("M"), I("N"), op, c.Bool("fold"), modulus);
    return {{1, r.b}, {2, r.o}};
  }
  if (f == "atomics.py" && c.function == "claim_slots") {
    ref::ClaimSlots r = ref::ClaimSlotsRef(v(0), v(1), v(2), I("N"), I("slots"));
    return {{1, r.count}, {2, r.slots}};
  }
  ADD_FAILURE() << "no reference mapping for example " << f << " (case " << c.name
                << "): add one to this test";
  return {};
}

uint64_t TestSeed() {
  const char* env = std::getenv("TILEC_TEST_SEED");
  return env ? std::strtoull(env, nullptr, 10) : 20261121;
}

class InterpVsReference : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(InterpVsReference, MatchesFloat64Reference) {
  const ExampleCase& c = GetParam();
  const uint64_t seed = TestSeed();
  std::printf("case %s (examples/cases.txt:%d), seed %llu (set TILEC_TEST_SEED to change)\n",
              c.name.c_str(), c.line, static_cast<unsigned long long>(seed));

  auto text = testing::ReadFile(testing::ExamplesDir() + "/" + c.file);
  ASSERT_TRUE(text.ok()) << text.status();
  frontend::SourceFile file{"examples/" + c.file, *text};
  frontend::Bindings bindings;
  for (const auto& [k, val] : c.bindings) bindings.values.emplace_back(k, val);
  auto program = frontend::CompileTileLang(file, c.function, bindings);
  ASSERT_TRUE(program.ok()) << program.status().message();
  ASSERT_TRUE(ir::Verify(*program).ok()) << ir::Verify(*program).message();

  absl::flat_hash_map<std::string, int64_t> dims;
  for (const ir::Var& d : program->dyn_dims) dims[d->name] = c.Int(d->name);
  auto inputs = interp::MakeInputs(*program, dims, seed);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  PrepareInputs(c, *inputs, seed);
  std::vector<Expected> expected = Reference(c, *inputs);
  ASSERT_FALSE(expected.empty());

  for (bool shuffle : {false, true}) {
    SCOPED_TRACE(shuffle ? "blocks in shuffled order" : "blocks in order");
    std::vector<Tensor> args = *inputs;
    interp::RunOptions options;
    options.shuffle_blocks = shuffle;
    options.shuffle_seed = seed + 1;
    absl::Status run = interp::RunProgram(*program, args, options);
    ASSERT_TRUE(run.ok()) << run;
    for (const Expected& e : expected) {
      const Tensor& out = args[e.param];
      Tensor want(ir::DType::kFloat64, out.shape());
      ASSERT_EQ(static_cast<int64_t>(e.values.size()), want.num_elements());
      for (int64_t i = 0; i < want.num_elements(); ++i) want.SetDouble(i, e.values[i]);
      interp::Tolerance tol = interp::DefaultTolerance(out.dtype());
      if (e.computed_in) {
        interp::Tolerance narrow = interp::DefaultTolerance(*e.computed_in);
        tol.atol = std::max(tol.atol, narrow.atol);
        tol.rtol = std::max(tol.rtol, narrow.rtol);
      }
      auto cmp = interp::CompareTensors(out, want, tol);
      ASSERT_TRUE(cmp.ok()) << cmp.status();
      std::printf("  param %d %s: %s\n", e.param, out.TypeString().c_str(), cmp->Summary().c_str());
      EXPECT_TRUE(cmp->ok) << "param " << e.param << ": " << cmp->Summary();
    }
  }
}

std::vector<ExampleCase> AllCases() {
  auto cases = testing::LoadExampleCases();
  if (!cases.ok()) {
    std::fprintf(stderr, "%s\n", std::string(cases.status().message()).c_str());
    std::abort();
  }
  return *cases;
}

INSTANTIATE_TEST_SUITE_P(Examples, InterpVsReference, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<ExampleCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tilec
