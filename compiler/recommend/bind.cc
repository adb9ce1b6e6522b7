#include "compiler/recommend/bind.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/inference/index_expr.h"
#include "compiler/ir/visitor.h"

namespace tilec::recommend {
namespace {

bool Foldable(ir::BinaryOp op) {
  switch (op) {
    case ir::BinaryOp::kAdd:
    case ir::BinaryOp::kSub:
    case ir::BinaryOp::kMul:
    case ir::BinaryOp::kDiv:
    case ir::BinaryOp::kMod:
    case ir::BinaryOp::kFloorDiv:
    case ir::BinaryOp::kFloorMod:
    case ir::BinaryOp::kMin:
    case ir::BinaryOp::kMax: return true;
    default: return false;
  }
}

class Binder : public ir::IRMutator {
 public:
  explicit Binder(std::map<const ir::VarNode*, int64_t> values) : values_(std::move(values)) {}

  ir::Expr Mutate(const ir::Expr& e) override {
    if (!e) return e;
    if (const auto* v = e->as<ir::VarNode>()) {
      auto it = values_.find(v);
      if (it == values_.end()) return e;
      return ir::IntImm(it->second, v->dtype);
    }
    ir::Expr out = IRMutator::Mutate(e);
    if (out == e || !ir::IsInt(out->dtype)) return out;
    // Fold the integer arithmetic that became constant.
    bool fold = false;
    if (const auto* b = out->as<ir::BinaryNode>()) {
      fold = Foldable(b->op) && b->a->as<ir::IntImmNode>() && b->b->as<ir::IntImmNode>();
    } else if (const auto* c = out->as<ir::CallNode>()) {
      fold = c->fn == ir::CallFn::kCeilDiv && c->args[0]->as<ir::IntImmNode>() &&
             c->args[1]->as<ir::IntImmNode>();
    }
    if (!fold) return out;
    std::optional<int64_t> v = inference::EvalInt(out);
    return v ? ir::IntImm(*v, out->dtype) : out;
  }
  using IRMutator::Mutate;

  ir::Buffer MutateBuffer(const ir::Buffer& b) override {
    if (!b) return b;
    auto it = buffers_.find(b.get());
    if (it != buffers_.end()) return it->second;
    bool changed = false;
    std::vector<ir::Expr> shape = MutateAll(b->shape, &changed);
    ir::Buffer out = b;
    if (changed) out = ir::MakeBuffer(b->name, b->dtype, std::move(shape), b->scope);
    buffers_[b.get()] = out;
    return out;
  }

 private:
  std::map<const ir::VarNode*, int64_t> values_;
  std::map<const ir::BufferNode*, ir::Buffer> buffers_;
};

}  // namespace

absl::StatusOr<ir::Program> BindTileParams(const ir::Program& program,
                                           const std::map<std::string, int64_t>& values) {
  std::map<const ir::VarNode*, int64_t> by_var;
  ir::Program out = program;
  std::set<std::string> used;
  for (ir::TileParam& tp : out.tile_params) {
    if (tp.value || !tp.var) continue;
    auto it = values.find(tp.var->name);
    if (it == values.end()) continue;
    if (it->second < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("tile parameter ", tp.var->name, " must be >= 1, got ", it->second));
    }
    by_var[tp.var.get()] = it->second;
    tp.value = it->second;
    used.insert(it->first);
  }
  for (const auto& [name, value] : values) {
    if (!used.count(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", name, "' is not an unbound tile parameter of ", program.name));
    }
  }
  if (by_var.empty()) return out;
  Binder binder(std::move(by_var));
  for (ir::Param& p : out.params) {
    if (p.tensor) p.tensor = binder.MutateBuffer(p.tensor);
  }
  out.body = binder.Mutate(program.body);
  return out;
}

}  // namespace tilec::recommend
