#include "tests/difftest/program.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tilec::difftest {

bool IsFloat(const DType& t) { return t.rfind("float", 0) == 0 || t == "bfloat16"; }
bool IsFloat8(const DType& t) { return t.rfind("float8", 0) == 0; }

int Looseness(const DType& t) {
  static const char* kOrder[] = {"int32",       "float32",         "float16",
                                 "bfloat16",    "float8_e4m3",     "float8_e4m3fnuz",
                                 "float8_e5m2", "float8_e5m2fnuz"};
  for (int i = 0; i < static_cast<int>(std::size(kOrder)); ++i) {
    if (t == kOrder[i]) return i;
  }
  return 1;
}

ExprPtr Const(const std::string& literal, const DType& t) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kConst;
  e->text = literal;
  e->dtype = t;
  return e;
}

ExprPtr Load(const std::string& text, const DType& t, const std::string& tile_buffer) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kLoad;
  e->text = text;
  e->dtype = t;
  if (!tile_buffer.empty()) e->reads.insert(tile_buffer);
  return e;
}

ExprPtr Unary(const std::string& fn, ExprPtr a) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kUnary;
  e->text = fn;
  e->dtype = a->dtype;
  e->args = {std::move(a)};
  return e;
}

ExprPtr Binary(const std::string& op, ExprPtr a, ExprPtr b, const DType& t) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kBinary;
  e->text = op;
  e->dtype = t;
  e->args = {std::move(a), std::move(b)};
  return e;
}

ExprPtr Cast(ExprPtr a, const DType& t) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kCast;
  e->dtype = t;
  e->args = {std::move(a)};
  return e;
}

ExprPtr Select(const std::string& cond, ExprPtr a, ExprPtr b) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kSelect;
  e->cond = cond;
  e->dtype = a->dtype;
  e->args = {std::move(a), std::move(b)};
  return e;
}

namespace {

std::string CastText(const std::string& text, const DType& t) {
  return absl::StrCat("T.cast(", text, ", \"", t, "\")");
}

// A constant standing alone takes the literal's Python type (int32 or
// float32); anything else is cast.
std::string RenderStandalone(const Expr& e) {
  if (e.kind == Expr::Kind::kConst && e.dtype != "float32" && e.dtype != "int32")
    return CastText(e.text, e.dtype);
  return Render(e);
}

// `a` as an operand of an expression of dtype `t`.
std::string Operand(const Expr& a, const DType& t, bool sibling_typed) {
  if (a.kind == Expr::Kind::kConst && (a.dtype == t) && sibling_typed) return a.text;
  if (a.dtype != t) return CastText(Render(a), t);
  return RenderStandalone(a);
}

void Indent(std::string& out, int depth) { out.append(static_cast<size_t>(depth) * 4, ' '); }

void RenderStmt(const Stmt& s, int depth, std::string& out) {
  switch (s.kind) {
    case Stmt::Kind::kLine:
      Indent(out, depth);
      absl::StrAppend(&out, s.text, "\n");
      return;
    case Stmt::Kind::kParallel: {
      int d = depth;
      if (!s.vars.empty()) {
        Indent(out, depth);
        absl::StrAppend(&out, "for ", absl::StrJoin(s.vars, ", "), " in T.Parallel(",
                        absl::StrJoin(s.extents, ", "), "):\n");
        ++d;
      }
      if (!s.guard.empty()) {
        Indent(out, d);
        absl::StrAppend(&out, "if ", s.guard, ":\n");
        ++d;
      }
      Indent(out, d);
      std::string value = Operand(*s.value, s.dtype, /*sibling_typed=*/false);
      if (s.atomic) {
        absl::StrAppend(&out, "T.atomic_add(", s.target, ", ", value, ")\n");
      } else {
        absl::StrAppend(&out, s.target, " = ", value, "\n");
      }
      return;
    }
    case Stmt::Kind::kPipelined:
    case Stmt::Kind::kSerial: {
      if (s.kind == Stmt::Kind::kSerial && s.as_while) {
        const std::string w = s.vars[0] + "_w";
        Indent(out, depth);
        absl::StrAppend(&out, w, " = T.alloc_var(\"int32\")\n");
        Indent(out, depth);
        absl::StrAppend(&out, w, " = 0\n");
        Indent(out, depth);
        absl::StrAppend(&out, "while ", w, " < ", s.extents[0], ":\n");
        Indent(out, depth + 1);
        absl::StrAppend(&out, s.vars[0], " = ", w, "\n");
        for (const StmtPtr& b : s.body) RenderStmt(*b, depth + 1, out);
        Indent(out, depth + 1);
        absl::StrAppend(&out, w, " = ", w, " + 1\n");
        return;
      }
      Indent(out, depth);
      if (s.kind == Stmt::Kind::kPipelined) {
        absl::StrAppend(&out, "for ", s.vars[0], " in T.Pipelined(", s.extents[0],
                        ", num_stages=", s.stages, "):\n");
      } else {
        absl::StrAppend(&out, "for ", s.vars[0], " in T.serial(", s.extents[0], "):\n");
      }
      if (s.body.empty()) {
        Indent(out, depth + 1);
        out += "pass\n";
      }
      for (const StmtPtr& b : s.body) RenderStmt(*b, depth + 1, out);
      return;
    }
  }
}

void CollectMentions(const Stmt& s, std::set<std::string>& names) {
  names.insert(s.reads.begin(), s.reads.end());
  names.insert(s.defines.begin(), s.defines.end());
  if (s.value) {
    std::set<std::string> r = ReadsOf(*s.value);
    names.insert(r.begin(), r.end());
  }
  for (const StmtPtr& b : s.body) CollectMentions(*b, names);
}

bool CheckDefs(const std::vector<StmtPtr>& body, std::set<std::string>& defined) {
  for (const StmtPtr& s : body) {
    std::set<std::string> reads = s->reads;
    if (s->value) {
      std::set<std::string> r = ReadsOf(*s->value);
      reads.insert(r.begin(), r.end());
    }
    for (const std::string& r : reads) {
      if (!defined.contains(r)) return false;
    }
    if (!CheckDefs(s->body, defined)) return false;
    defined.insert(s->defines.begin(), s->defines.end());
  }
  return true;
}

ExprPtr CloneExpr(const ExprPtr& e) {
  if (!e) return nullptr;
  auto c = std::make_shared<Expr>(*e);
  for (ExprPtr& a : c->args) a = CloneExpr(a);
  return c;
}

StmtPtr CloneStmt(const StmtPtr& s) {
  auto c = std::make_shared<Stmt>(*s);
  c->value = CloneExpr(s->value);
  for (StmtPtr& b : c->body) b = CloneStmt(b);
  return c;
}

}  // namespace

std::string Render(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kConst:
    case Expr::Kind::kLoad: return e.text;
    case Expr::Kind::kUnary:
      return absl::StrCat("T.", e.text, "(", Operand(*e.args[0], e.dtype, false), ")");
    case Expr::Kind::kBinary: {
      const Expr& a = *e.args[0];
      const Expr& b = *e.args[1];
      // A literal operand is typed by the other operand when that one already
      // has the expression's dtype.
      bool a_typed = a.dtype == e.dtype && a.kind != Expr::Kind::kConst;
      bool b_typed = b.dtype == e.dtype && b.kind != Expr::Kind::kConst;
      std::string x = Operand(a, e.dtype, b_typed);
      std::string y = Operand(b, e.dtype, a_typed);
      if (e.text == "max" || e.text == "min")
        return absl::StrCat("T.", e.text, "(", x, ", ", y, ")");
      return absl::StrCat("(", x, " ", e.text, " ", y, ")");
    }
    case Expr::Kind::kCast: return CastText(Render(*e.args[0]), e.dtype);
    case Expr::Kind::kSelect:
      return absl::StrCat("T.if_then_else(", e.cond, ", ", Operand(*e.args[0], e.dtype, false),
                          ", ", Operand(*e.args[1], e.dtype, false), ")");
  }
  return "";
}

std::set<std::string> ReadsOf(const Expr& e) {
  std::set<std::string> out = e.reads;
  for (const ExprPtr& a : e.args) {
    std::set<std::string> r = ReadsOf(*a);
    out.insert(r.begin(), r.end());
  }
  return out;
}

StmtPtr Line(const std::string& text, std::set<std::string> reads, std::set<std::string> defines) {
  auto s = std::make_shared<Stmt>();
  s->kind = Stmt::Kind::kLine;
  s->text = text;
  s->reads = std::move(reads);
  s->defines = std::move(defines);
  return s;
}

std::string Program::Render() const {
  std::string out = "import tilelang.language as T\n\n\n";
  std::vector<std::string> sig;
  for (const Param& p : params) {
    if (p.dynamic) sig.push_back(p.name);
  }
  for (const Param& p : params) {
    if (!p.dynamic) sig.push_back(absl::StrCat(p.name, "=", p.value));
  }
  absl::StrAppend(&out, "def ", kFunctionName, "(", absl::StrJoin(sig, ", "), "):\n");
  out += "    @T.prim_func\n";
  std::vector<std::string> args;
  for (const Tensor& t : tensors) {
    std::string shape = t.shape.size() == 1 ? absl::StrCat("(", t.shape[0], ",)")
                                            : absl::StrCat("(", absl::StrJoin(t.shape, ", "), ")");
    args.push_back(absl::StrCat(t.name, ": T.Tensor(", shape, ", \"", t.dtype, "\")"));
  }
  absl::StrAppend(&out, "    def main(", absl::StrJoin(args, ", "), "):\n");
  std::string vars = block_vars.size() == 1
                         ? block_vars[0]
                         : absl::StrCat("(", absl::StrJoin(block_vars, ", "), ")");
  absl::StrAppend(&out, "        with T.Kernel(", absl::StrJoin(grid, ", "), ", threads=", threads,
                  ") as ", vars, ":\n");
  for (const Buffer& b : buffers) {
    std::string shape = b.shape.size() == 1 ? absl::StrCat("(", b.shape[0], ",)")
                                            : absl::StrCat("(", absl::StrJoin(b.shape, ", "), ")");
    absl::StrAppend(&out, "            ", b.name, " = T.alloc_", b.scope, "(", shape, ", \"",
                    b.dtype, "\")\n");
  }
  for (const StmtPtr& s : body) RenderStmt(*s, 3, out);
  if (body.empty()) out += "            pass\n";
  out += "\n    return main\n";
  return out;
}

std::map<std::string, int64_t> Program::DynamicDims() const {
  std::map<std::string, int64_t> dims;
  for (const Param& p : params) {
    if (p.dynamic) dims[p.name] = p.value;
  }
  return dims;
}

const Param* Program::FindParam(const std::string& name) const {
  for (const Param& p : params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool Program::DefinedBeforeUse() const {
  std::set<std::string> defined;
  return CheckDefs(body, defined);
}

void Program::PruneBuffers() {
  std::set<std::string> used;
  for (const StmtPtr& s : body) CollectMentions(*s, used);
  std::vector<Buffer> kept;
  for (const Buffer& b : buffers) {
    if (used.contains(b.name)) kept.push_back(b);
  }
  buffers = std::move(kept);
}

Program Program::Clone() const {
  Program p = *this;
  for (StmtPtr& s : p.body) s = CloneStmt(s);
  return p;
}

}  // namespace tilec::difftest
