// libFuzzer target: names a client chooses, through to generated source.
//
// Input: one byte choosing where the name goes (the program, a buffer or a
// variable of the wire-form program, by index), one byte of length n, n
// bytes of name, then a serialized tilec.v1.Program. The program with that
// name is converted, verified and, when it verifies, run through layout
// inference and the CUDA/HIP emitter for one of sm_80, sm_90a and gfx942
// (chosen by the name's first byte). It aborts, as a crash would, when
// - a program with a name that is not an identifier verifies, or emits;
// - generated source holds a byte outside printable ASCII, tab and newline;
// - anything answers INTERNAL (a compiler bug).
// Seeds: every example program in wire form with the name "k"
// (benchmarks/fuzz.sh; fuzz_corpus writes them).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/ir/names.h"
#include "compiler/ir/proto_convert.h"
#include "compiler/ir/verifier.h"
#include "compiler/ir/visitor.h"
#include "compiler/ir/wire.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/target.h"
#include "proto/tilec/v1/ir.pb.h"

namespace {

[[noreturn]] void Fail(const char* what, absl::string_view detail) {
  std::fprintf(stderr, "fuzz_names: %s: %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

bool HasPrelude(const tilec::ir::Program& p) {
  struct Finder : tilec::ir::IRVisitor {
    using tilec::ir::IRVisitor::Visit;
    void Visit(const tilec::ir::Stmt& s) override {
      if (s && s->kind == tilec::ir::StmtKind::kKernel &&
          !s->as<tilec::ir::KernelNode>()->prelude.empty()) {
        found = true;
      }
      tilec::ir::IRVisitor::Visit(s);
    }
    bool found = false;
  } finder;
  if (p.body) finder.Visit(p.body);
  return finder.found;
}

void NoInternal(const absl::Status& s, const char* step) {
  if (s.code() == absl::StatusCode::kInternal) Fail(step, s.message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size < 2u + data[1]) return 0;
  const uint8_t slot = data[0];
  const std::string name(reinterpret_cast<const char*>(data + 2), data[1]);
  const std::string_view wire(reinterpret_cast<const char*>(data + 2 + data[1]),
                              size - 2 - data[1]);
  tilec::v1::Program proto;
  if (!tilec::ir::ParseWire(wire, &proto)) return 0;
  // Slot 0: the program; odd: a buffer; even: a variable.
  if (slot == 0) {
    proto.set_name(name);
  } else if (slot % 2 == 1 && proto.buffers_size() > 0) {
    proto.mutable_buffers(slot / 2 % proto.buffers_size())->set_name(name);
  } else if (proto.vars_size() > 0) {
    proto.mutable_vars(slot / 2 % proto.vars_size())->set_name(name);
  }
  absl::StatusOr<tilec::ir::Program> program = tilec::ir::FromProto(proto);
  if (!program.ok()) {
    NoInternal(program.status(), "FromProto");
    return 0;
  }
  absl::Status verified = tilec::ir::Verify(*program);
  NoInternal(verified, "Verify");
  if (!verified.ok()) return 0;
  // What the verifier accepted has identifier names only (the name as
  // MakeVar and MakeBuffer spell it: non-ASCII bytes become _xHH).
  if (absl::Status names = tilec::ir::CheckNames(*program); !names.ok()) {
    Fail("a program whose names are not identifiers verified", names.message());
  }
  static const char* const kTargets[] = {"sm_80", "sm_90a", "gfx942"};
  const char* target_name = kTargets[(name.empty() ? 0 : static_cast<uint8_t>(name[0])) % 3];
  absl::StatusOr<tilec::cuda::CudaTarget> target = tilec::cuda::CudaTarget::FromName(target_name);
  if (!target.ok()) Fail("no target", target_name);
  absl::StatusOr<tilec::inference::LayoutPlan> plan =
      tilec::inference::InferLayouts(*program, target->info);
  if (!plan.ok()) {
    NoInternal(plan.status(), "InferLayouts");
    return 0;
  }
  absl::StatusOr<tilec::cuda::CudaSource> source = tilec::cuda::EmitCuda(*program, *plan, *target);
  if (!source.ok()) {
    NoInternal(source.status(), "EmitCuda");
    return 0;
  }
  // Inline device source (a kernel's prelude) is the user's text by design
  // (checked by compiler/ir/inline_source.h); everything else is tilec's.
  if (HasPrelude(*program)) return 0;
  for (unsigned char c : source->code) {
    if ((c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f) {
      Fail("generated source holds a byte outside printable ASCII", tilec::ir::QuoteName(name));
    }
  }
  return 0;
}
