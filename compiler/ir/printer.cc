#include "compiler/ir/printer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/sv.h"
#include "compiler/ir/visitor.h"

namespace tilec::ir {
namespace {

// Python operator precedence, loosest first. Calls, names, subscripts and
// wrapped literals are atoms.
constexpr int kPrecOr = 1;
constexpr int kPrecAnd = 2;
constexpr int kPrecNot = 3;
constexpr int kPrecCmp = 4;
constexpr int kPrecBitOr = 5;
constexpr int kPrecBitXor = 6;
constexpr int kPrecBitAnd = 7;
constexpr int kPrecShift = 8;
constexpr int kPrecAdd = 9;
constexpr int kPrecMul = 10;
constexpr int kPrecUnary = 11;
constexpr int kPrecAtom = 13;

int BinaryPrec(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr: return kPrecOr;
    case BinaryOp::kAnd: return kPrecAnd;
    case BinaryOp::kEq:
    case BinaryOp::kNe:
    case BinaryOp::kLt:
    case BinaryOp::kLe:
    case BinaryOp::kGt:
    case BinaryOp::kGe: return kPrecCmp;
    case BinaryOp::kBitOr: return kPrecBitOr;
    case BinaryOp::kBitXor: return kPrecBitXor;
    case BinaryOp::kBitAnd: return kPrecBitAnd;
    case BinaryOp::kShl:
    case BinaryOp::kShr: return kPrecShift;
    case BinaryOp::kAdd:
    case BinaryOp::kSub: return kPrecAdd;
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kFloorDiv:
    case BinaryOp::kFloorMod: return kPrecMul;
    case BinaryOp::kMod:
    case BinaryOp::kMin:
    case BinaryOp::kMax: return kPrecAtom;
  }
  return kPrecAtom;
}

// Shortest decimal text that reads back as the same double, as a Python float
// literal (always with a '.' or an exponent).
std::string FloatText(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// Structural equality, enough to recognise a region spanning a whole buffer.
bool SameExpr(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype) return false;
  switch (a->kind) {
    case ExprKind::kIntImm: return a->as<IntImmNode>()->value == b->as<IntImmNode>()->value;
    case ExprKind::kFloatImm: {
      double x = a->as<FloatImmNode>()->value, y = b->as<FloatImmNode>()->value;
      return x == y || (std::isnan(x) && std::isnan(y));
    }
    case ExprKind::kVar: return false;  // distinct nodes are distinct variables
    case ExprKind::kBinary: {
      const auto *x = a->as<BinaryNode>(), *y = b->as<BinaryNode>();
      return x->op == y->op && SameExpr(x->a, y->a) && SameExpr(x->b, y->b);
    }
    case ExprKind::kUnary: {
      const auto *x = a->as<UnaryNode>(), *y = b->as<UnaryNode>();
      return x->op == y->op && SameExpr(x->a, y->a);
    }
    case ExprKind::kSelect: {
      const auto *x = a->as<SelectNode>(), *y = b->as<SelectNode>();
      return SameExpr(x->cond, y->cond) && SameExpr(x->t, y->t) && SameExpr(x->f, y->f);
    }
    case ExprKind::kCast: return SameExpr(a->as<CastNode>()->value, b->as<CastNode>()->value);
    case ExprKind::kCall: {
      const auto *x = a->as<CallNode>(), *y = b->as<CallNode>();
      if (x->fn != y->fn || x->args.size() != y->args.size()) return false;
      for (size_t i = 0; i < x->args.size(); ++i) {
        if (!SameExpr(x->args[i], y->args[i])) return false;
      }
      return true;
    }
    case ExprKind::kLoad: {
      const auto *x = a->as<LoadNode>(), *y = b->as<LoadNode>();
      if (x->buffer != y->buffer || x->indices.size() != y->indices.size()) return false;
      for (size_t i = 0; i < x->indices.size(); ++i) {
        if (!SameExpr(x->indices[i], y->indices[i])) return false;
      }
      return true;
    }
  }
  return false;
}

bool IsFullRegion(const Region& r) {
  const Buffer& b = r.buffer;
  if (!b || r.mins.size() != b->shape.size() || r.extents.size() != b->shape.size()) return false;
  for (size_t i = 0; i < r.mins.size(); ++i) {
    if (AsConstInt(r.mins[i]) != 0 || !SameExpr(r.extents[i], b->shape[i])) return false;
  }
  return true;
}

// Variables and buffers in order of first appearance.
class NameCollector : public IRVisitor {
 public:
  using IRVisitor::Visit;
  void Visit(const Expr& e) override {
    if (const auto* v = e ? e->as<VarNode>() : nullptr) Add(v, v->name, "v");
    IRVisitor::Visit(e);
  }
  void VisitBuffer(const Buffer& b) override {
    if (b) Add(b.get(), b->name, "buf");
    IRVisitor::VisitBuffer(b);
  }

  struct Entry {
    const void* key;
    std::string name;
  };
  std::vector<Entry> entries;

 private:
  void Add(const void* key, const std::string& name, std::string_view fallback) {
    if (!seen_.insert(key).second) return;
    entries.push_back({key, name.empty() ? std::string(fallback) : name});
  }
  std::unordered_set<const void*> seen_;
};

// Assigns each variable and buffer its printed name.
class Namer {
 public:
  explicit Namer(const std::vector<NameCollector::Entry>& entries) {
    std::unordered_set<std::string> taken;
    for (const auto& e : entries) taken.insert(e.name);
    std::unordered_set<std::string> first_seen;
    for (const auto& e : entries) {
      std::string name = e.name;
      if (!first_seen.insert(e.name).second) {
        for (int k = 1;; ++k) {
          name = absl::StrCat(e.name, "_", k);
          if (taken.insert(name).second) break;
        }
      }
      names_.emplace(e.key, std::move(name));
    }
  }

  std::string Get(const void* key, const std::string& name) const {
    auto it = names_.find(key);
    return it != names_.end() ? it->second : name;
  }

 private:
  std::unordered_map<const void*, std::string> names_;
};

class Printer {
 public:
  explicit Printer(const NameCollector& names) : namer_(names.entries) {}

  std::string E(const Expr& e) { return Emit(e).first; }
  void S(const Stmt& s, int indent);
  void Program(const ir::Program& p);

  std::string out;

 private:
  // Text and precedence of an expression.
  std::pair<std::string, int> Emit(const Expr& e);
  // `e` in a context that binds with `min_prec`: parenthesised when looser.
  std::string Operand(const Expr& e, int min_prec) {
    auto [text, prec] = Emit(e);
    return prec < min_prec ? absl::StrCat("(", text, ")") : text;
  }
  std::string Name(const Var& v) { return v ? namer_.Get(v.get(), v->name) : "<null>"; }
  std::string Name(const Buffer& b) { return b ? namer_.Get(b.get(), b->name) : "<null>"; }
  std::string Args(const std::vector<Expr>& es) {
    std::vector<std::string> parts;
    for (const Expr& e : es) parts.push_back(E(e));
    return absl::StrJoin(parts, ", ");
  }
  std::string Tuple(const std::vector<Expr>& es) {
    return es.size() == 1 ? absl::StrCat("(", E(es[0]), ",)") : absl::StrCat("(", Args(es), ")");
  }
  // `min + extent`, folded when both are constants.
  std::string End(const Expr& min, const Expr& extent);
  std::string RegionText(const Region& r);
  std::string Literal(const Expr& e, std::string text);
  void Line(int indent, absl::string_view text) {
    out.append(4 * indent, ' ');
    absl::StrAppend(&out, text, "\n");
  }
  void Body(const Stmt& s, int indent);
  void ForLoop(const ForNode* f, int indent);

  Namer namer_;
};

std::string Printer::Literal(const Expr& e, std::string text) {
  if (e->dtype == DType::kInt32 || e->dtype == DType::kFloat32) return text;
  return absl::StrCat("T.", Sv(DTypeName(e->dtype)), "(", text, ")");
}

std::pair<std::string, int> Printer::Emit(const Expr& e) {
  if (!e) return {"<null>", kPrecAtom};
  switch (e->kind) {
    case ExprKind::kIntImm: {
      int64_t v = e->as<IntImmNode>()->value;
      if (e->dtype == DType::kBool && (v == 0 || v == 1)) return {v ? "True" : "False", kPrecAtom};
      if (e->dtype == DType::kInt32) return {absl::StrCat(v), v < 0 ? kPrecUnary : kPrecAtom};
      return {Literal(e, absl::StrCat(v)), kPrecAtom};
    }
    case ExprKind::kFloatImm: {
      double v = e->as<FloatImmNode>()->value;
      if (std::isnan(v))
        return {absl::StrCat("T.", Sv(DTypeName(e->dtype)), "(\"nan\")"), kPrecAtom};
      if (std::isinf(v)) {
        std::string inf = absl::StrCat("T.infinity(\"", Sv(DTypeName(e->dtype)), "\")");
        return v < 0 ? std::pair{absl::StrCat("-", inf), kPrecUnary} : std::pair{inf, kPrecAtom};
      }
      if (e->dtype == DType::kFloat32) {
        return {FloatText(v), std::signbit(v) ? kPrecUnary : kPrecAtom};
      }
      return {Literal(e, FloatText(v)), kPrecAtom};
    }
    case ExprKind::kVar: return {Name(std::static_pointer_cast<const VarNode>(e)), kPrecAtom};
    case ExprKind::kBinary: {
      const auto* n = e->as<BinaryNode>();
      std::string_view sym = BinaryOpSymbol(n->op);
      if (sym.empty()) {
        std::string_view fn = n->op == BinaryOp::kMin   ? "min"
                              : n->op == BinaryOp::kMax ? "max"
                                                        : "truncmod";
        return {absl::StrCat("T.", Sv(fn), "(", E(n->a), ", ", E(n->b), ")"), kPrecAtom};
      }
      int prec = BinaryPrec(n->op);
      // Left-associative; comparisons chain in Python, so neither side of one
      // may be a bare comparison.
      int left = prec == kPrecCmp ? prec + 1 : prec;
      return {absl::StrCat(Operand(n->a, left), " ", Sv(sym), " ", Operand(n->b, prec + 1)), prec};
    }
    case ExprKind::kUnary: {
      const auto* n = e->as<UnaryNode>();
      switch (n->op) {
        case UnaryOp::kNeg: return {absl::StrCat("-", Operand(n->a, kPrecUnary + 1)), kPrecUnary};
        case UnaryOp::kBitNot:
          return {absl::StrCat("~", Operand(n->a, kPrecUnary + 1)), kPrecUnary};
        case UnaryOp::kNot: return {absl::StrCat("not ", Operand(n->a, kPrecNot + 1)), kPrecNot};
      }
      return {"<?>", kPrecAtom};
    }
    case ExprKind::kSelect: {
      const auto* n = e->as<SelectNode>();
      return {absl::StrCat("T.if_then_else(", E(n->cond), ", ", E(n->t), ", ", E(n->f), ")"),
              kPrecAtom};
    }
    case ExprKind::kCast:
      return {absl::StrCat("T.cast(", E(e->as<CastNode>()->value), ", \"", Sv(DTypeName(e->dtype)),
                           "\")"),
              kPrecAtom};
    case ExprKind::kCall: {
      const auto* n = e->as<CallNode>();
      if (n->fn == CallFn::kReinterpret) {
        return {
            absl::StrCat("T.reinterpret(", Args(n->args), ", \"", Sv(DTypeName(n->dtype)), "\")"),
            kPrecAtom};
      }
      return {absl::StrCat("T.", Sv(CallFnName(n->fn)), "(", Args(n->args), ")"), kPrecAtom};
    }
    case ExprKind::kLoad: {
      const auto* n = e->as<LoadNode>();
      std::string idx = n->indices.empty() ? "()" : Args(n->indices);
      return {absl::StrCat(Name(n->buffer), "[", idx, "]"), kPrecAtom};
    }
  }
  return {"<?>", kPrecAtom};
}

std::string Printer::End(const Expr& min, const Expr& extent) {
  std::optional<int64_t> lo = AsConstInt(min), n = AsConstInt(extent);
  if (lo == 0) return E(extent);
  if (lo && n && min->dtype == extent->dtype) return absl::StrCat(*lo + *n);
  return absl::StrCat(Operand(min, kPrecAdd), " + ", Operand(extent, kPrecAdd + 1));
}

std::string Printer::RegionText(const Region& r) {
  if (IsFullRegion(r)) return Name(r.buffer);
  std::vector<std::string> dims;
  size_t rank = std::max(r.mins.size(), r.extents.size());
  for (size_t i = 0; i < rank; ++i) {
    Expr lo = i < r.mins.size() ? r.mins[i] : nullptr;
    Expr ext = i < r.extents.size() ? r.extents[i] : nullptr;
    dims.push_back(absl::StrCat(E(lo), ":", lo && ext ? End(lo, ext) : E(ext)));
  }
  return absl::StrCat(Name(r.buffer), "[", absl::StrJoin(dims, ", "), "]");
}

void Printer::Body(const Stmt& s, int indent) {
  if (const auto* seq = s ? s->as<SeqNode>() : nullptr; seq && seq->stmts.empty()) {
    Line(indent, "pass");
    return;
  }
  S(s, indent);
}

void Printer::ForLoop(const ForNode* f, int indent) {
  // Fold directly nested Parallel loops into one multi-dimensional loop.
  if (f->kind == ForKind::kParallel && AsConstInt(f->min) == 0) {
    std::vector<std::string> vars, extents;
    const ForNode* cur = f;
    while (true) {
      vars.push_back(Name(cur->var));
      extents.push_back(E(cur->extent));
      const Stmt* body = &cur->body;
      if (const auto* seq = *body ? (*body)->as<SeqNode>() : nullptr;
          seq && seq->stmts.size() == 1) {
        body = &seq->stmts[0];
      }
      const ForNode* inner = *body ? (*body)->as<ForNode>() : nullptr;
      if (!inner || inner->kind != ForKind::kParallel || AsConstInt(inner->min) != 0 ||
          inner->num_stages || !inner->order.empty() || !inner->stage.empty()) {
        Line(indent, absl::StrCat("for ", absl::StrJoin(vars, ", "), " in T.Parallel(",
                                  absl::StrJoin(extents, ", "), "):"));
        Body(cur->body, indent + 1);
        return;
      }
      cur = inner;
    }
  }
  std::string_view fn = f->kind == ForKind::kSerial ? "serial" : ForKindName(f->kind);
  std::string args = AsConstInt(f->min) == 0 || !f->min || !f->extent
                         ? E(f->extent)
                         : absl::StrCat(E(f->min), ", ", End(f->min, f->extent));
  if (f->num_stages) absl::StrAppend(&args, ", num_stages=", E(f->num_stages));
  if (!f->order.empty()) absl::StrAppend(&args, ", order=[", absl::StrJoin(f->order, ", "), "]");
  if (!f->stage.empty()) absl::StrAppend(&args, ", stage=[", absl::StrJoin(f->stage, ", "), "]");
  Line(indent, absl::StrCat("for ", Name(f->var), " in T.", Sv(fn), "(", args, "):"));
  Body(f->body, indent + 1);
}

std::string QuotedString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

std::string BoolText(bool b) { return b ? "True" : "False"; }

void Printer::S(const Stmt& s, int indent) {
  if (!s) {
    Line(indent, "<null>");
    return;
  }
  switch (s->kind) {
    case StmtKind::kSeq:
      for (const Stmt& c : s->as<SeqNode>()->stmts) S(c, indent);
      return;
    case StmtKind::kKernel: {
      const auto* n = s->as<KernelNode>();
      std::string head = absl::StrCat("with T.Kernel(", Args(n->grid));
      if (n->threads) absl::StrAppend(&head, ", threads=", E(n->threads));
      if (!n->prelude.empty()) absl::StrAppend(&head, ", prelude=", QuotedString(n->prelude));
      absl::StrAppend(&head, ")");
      std::vector<std::string> vars;
      for (const Var& v : n->block_vars) vars.push_back(Name(v));
      if (vars.size() == 1) absl::StrAppend(&head, " as ", vars[0]);
      if (vars.size() > 1) absl::StrAppend(&head, " as (", absl::StrJoin(vars, ", "), ")");
      Line(indent, absl::StrCat(head, ":"));
      Body(n->body, indent + 1);
      return;
    }
    case StmtKind::kAllocate: {
      const auto* n = s->as<AllocateNode>();
      if (!n->buffer) {
        Line(indent, "<null> = T.alloc(<null>)");
        return;
      }
      const Buffer& b = n->buffer;
      std::string dtype = absl::StrCat("\"", Sv(DTypeName(b->dtype)), "\"");
      std::string args =
          b->scope == Scope::kVar ? dtype : absl::StrCat(Tuple(b->shape), ", ", dtype);
      if (n->init) absl::StrAppend(&args, ", init=", E(n->init));
      Line(indent, absl::StrCat(Name(b), " = T.alloc_", Sv(ScopeName(b->scope)), "(", args, ")"));
      return;
    }
    case StmtKind::kFor: ForLoop(s->as<ForNode>(), indent); return;
    case StmtKind::kIf: {
      const auto* n = s->as<IfNode>();
      Line(indent, absl::StrCat("if ", E(n->cond), ":"));
      Body(n->then_case, indent + 1);
      if (n->else_case) {
        Line(indent, "else:");
        Body(n->else_case, indent + 1);
      }
      return;
    }
    case StmtKind::kWhile: {
      const auto* n = s->as<WhileNode>();
      Line(indent, absl::StrCat("while ", E(n->cond), ":"));
      Body(n->body, indent + 1);
      return;
    }
    case StmtKind::kStore: {
      const auto* n = s->as<StoreNode>();
      std::string idx = n->indices.empty() ? "()" : Args(n->indices);
      Line(indent, absl::StrCat(Name(n->buffer), "[", idx, "] = ", E(n->value)));
      return;
    }
    case StmtKind::kLet: {
      const auto* n = s->as<LetNode>();
      Line(indent, absl::StrCat(Name(n->var), " = ", E(n->value)));
      return;
    }
    case StmtKind::kCopy: {
      const auto* n = s->as<CopyNode>();
      Line(indent, absl::StrCat("T.copy(", RegionText(n->src), ", ", RegionText(n->dst),
                                n->disable_tma ? ", disable_tma=True" : "", ")"));
      return;
    }
    case StmtKind::kGemm: {
      const auto* n = s->as<GemmNode>();
      std::string text =
          absl::StrCat("T.gemm(", RegionText(n->a), ", ", RegionText(n->b), ", ", RegionText(n->c));
      if (n->transpose_a) absl::StrAppend(&text, ", transpose_A=True");
      if (n->transpose_b) absl::StrAppend(&text, ", transpose_B=True");
      if (n->policy != GemmPolicy::kSquare) {
        absl::StrAppend(&text, ", policy=T.GemmWarpPolicy.", Sv(GemmPolicyName(n->policy)));
      }
      if (n->clear_accum) absl::StrAppend(&text, ", clear_accum=True");
      Line(indent, absl::StrCat(text, ")"));
      return;
    }
    case StmtKind::kFill: {
      const auto* n = s->as<FillNode>();
      const Expr& v = n->value;
      bool zero = v && ((v->as<IntImmNode>() && v->as<IntImmNode>()->value == 0) ||
                        (v->as<FloatImmNode>() && v->as<FloatImmNode>()->value == 0 &&
                         !std::signbit(v->as<FloatImmNode>()->value)));
      if (zero && IsFullRegion(n->dst)) {
        Line(indent, absl::StrCat("T.clear(", Name(n->dst.buffer), ")"));
      } else {
        Line(indent, absl::StrCat("T.fill(", RegionText(n->dst), ", ", E(v), ")"));
      }
      return;
    }
    case StmtKind::kReduce: {
      const auto* n = s->as<ReduceNode>();
      Line(indent,
           absl::StrCat("T.reduce_", Sv(ReduceKindName(n->reduce_kind)), "(", Name(n->src), ", ",
                        Name(n->dst), ", dim=", n->dim, ", clear=", BoolText(n->clear), ")"));
      return;
    }
    case StmtKind::kCumsum: {
      const auto* n = s->as<CumsumNode>();
      Line(indent, absl::StrCat("T.cumsum(", Name(n->src), ", ", Name(n->dst), ", dim=", n->dim,
                                n->reverse ? ", reverse=True" : "", ")"));
      return;
    }
    case StmtKind::kAtomicAdd: {
      const auto* n = s->as<AtomicAddNode>();
      std::string dst = RegionText(n->dst);
      bool element = !n->src && !n->dst.extents.empty();
      for (const Expr& x : n->dst.extents) element = element && AsConstInt(x) == 1;
      if (element && n->dst.mins.size() == n->dst.extents.size()) {
        dst = absl::StrCat(Name(n->dst.buffer), "[", Args(n->dst.mins), "]");
      }
      std::string src = n->src ? RegionText(*n->src) : E(n->value);
      std::string call = absl::StrCat("T.atomic_", std::string(AtomicOpName(n->op)), "(", dst, ", ",
                                      src, n->result ? ", return_prev=True)" : ")");
      if (n->result) call = absl::StrCat(Name(n->result), "[0] = ", call);
      Line(indent, call);
      return;
    }
    case StmtKind::kAnnotateLayout: {
      const auto* n = s->as<AnnotateLayoutNode>();
      std::string layout;
      if (n->layout.kind == Layout::Kind::kSwizzled) {
        layout = absl::StrCat("tilelang.layout.make_swizzled_layout(", Name(n->buffer), ")");
      } else {
        std::vector<std::string> vars;
        for (const Var& v : n->layout.vars) vars.push_back(Name(v));
        layout =
            absl::StrCat("T.Layout(", n->buffer ? Tuple(n->buffer->shape) : "<null>", ", lambda ",
                         absl::StrJoin(vars, ", "), ": [", Args(n->layout.indices), "])");
      }
      Line(indent, absl::StrCat("T.annotate_layout({", Name(n->buffer), ": ", layout, "})"));
      return;
    }
    case StmtKind::kUseSwizzle: {
      const auto* n = s->as<UseSwizzleNode>();
      Line(indent, absl::StrCat("T.use_swizzle(", E(n->panel_size),
                                n->column_major ? ", order=\"column\"" : "",
                                n->enable ? "" : ", enable=False", ")"));
      return;
    }
  }
  Line(indent, "<?>");
}

void Printer::Program(const ir::Program& p) {
  if (!p.dyn_dims.empty()) {
    std::vector<std::string> dims;
    for (const Var& v : p.dyn_dims) dims.push_back(Name(v));
    Line(0, absl::StrCat("# dyn dims: ", absl::StrJoin(dims, ", ")));
  }
  for (const Requirement& r : p.requirements) {
    Line(0, absl::StrCat("# requires: ", E(r.cond), "  (", r.message, ")"));
  }
  if (!p.tile_params.empty()) {
    std::vector<std::string> params;
    for (const TileParam& tp : p.tile_params) {
      std::string text = Name(tp.var);
      std::string candidates = absl::StrJoin(tp.candidates, ",");
      if (tp.value) {
        absl::StrAppend(&text, "=", *tp.value);
        if (!tp.candidates.empty()) absl::StrAppend(&text, " (candidates ", candidates, ")");
      } else {
        absl::StrAppend(&text, " (unbound",
                        tp.candidates.empty() ? "" : absl::StrCat(", candidates ", candidates),
                        ")");
      }
      params.push_back(std::move(text));
    }
    Line(0, absl::StrCat("# tile params: ", absl::StrJoin(params, ", ")));
  }
  for (const Param& param : p.params) {
    // The parameter is the strided tensor's storage; the body indexes that.
    if (!param.tensor || !param.view) continue;
    Line(0, absl::StrCat("# ", Name(param.tensor), " is T.StridedTensor(", Tuple(param.view->shape),
                         ", ", Tuple(ViewStrides(param.tensor, *param.view)), ") in its storage"));
  }
  for (const std::string& q : p.device_queries) Line(0, absl::StrCat("# device query: ", q));
  if (p.fast_math) Line(0, "# fast math (pass_configs TL_ENABLE_FAST_MATH)");
  if (p.disable_warp_specialized) {
    Line(0, "# no warp specialisation (pass_configs TL_DISABLE_WARP_SPECIALIZED)");
  }
  Line(0, "@T.prim_func");
  std::vector<std::string> params;
  for (const Param& param : p.params) {
    if (param.tensor) {
      params.push_back(absl::StrCat(Name(param.tensor), ": T.Tensor(", Tuple(param.tensor->shape),
                                    ", \"", Sv(DTypeName(param.tensor->dtype)), "\")"));
    } else if (param.scalar) {
      params.push_back(
          absl::StrCat(Name(param.scalar), ": T.", Sv(DTypeName(param.scalar->dtype))));
    } else {
      params.push_back("<null>");
    }
  }
  Line(0, absl::StrCat("def ", p.name, "(", absl::StrJoin(params, ", "), "):"));
  Body(p.body, 1);
}

}  // namespace

std::string Print(const Program& program) {
  NameCollector names;
  // Dynamic dims and tile parameters are defined before the tensors whose
  // shapes use them.
  for (const Var& v : program.dyn_dims) names.Visit(Expr(v));
  for (const TileParam& tp : program.tile_params) names.Visit(Expr(tp.var));
  names.VisitProgram(program);
  Printer printer(names);
  printer.Program(program);
  return std::move(printer.out);
}

std::string PrintStmt(const Stmt& stmt) {
  NameCollector names;
  names.Visit(stmt);
  Printer printer(names);
  printer.S(stmt, 0);
  return std::move(printer.out);
}

std::string PrintExpr(const Expr& expr) {
  NameCollector names;
  names.Visit(expr);
  Printer printer(names);
  return printer.E(expr);
}

}  // namespace tilec::ir
