#include "compiler/frontend/ast.h"

#include <charconv>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::frontend {

std::string_view BinOpSymbol(BinOpKind op) {
  switch (op) {
    case BinOpKind::kAdd: return "+";
    case BinOpKind::kSub: return "-";
    case BinOpKind::kMul: return "*";
    case BinOpKind::kMatMul: return "@";
    case BinOpKind::kDiv: return "/";
    case BinOpKind::kFloorDiv: return "//";
    case BinOpKind::kMod: return "%";
    case BinOpKind::kPow: return "**";
    case BinOpKind::kLShift: return "<<";
    case BinOpKind::kRShift: return ">>";
    case BinOpKind::kBitOr: return "|";
    case BinOpKind::kBitXor: return "^";
    case BinOpKind::kBitAnd: return "&";
  }
  return "?";
}

std::string_view UnaryOpSymbol(UnaryOpKind op) {
  switch (op) {
    case UnaryOpKind::kNeg: return "-";
    case UnaryOpKind::kPos: return "+";
    case UnaryOpKind::kNot: return "not";
    case UnaryOpKind::kInvert: return "~";
  }
  return "?";
}

std::string_view CmpOpSymbol(CmpOpKind op) {
  switch (op) {
    case CmpOpKind::kEq: return "==";
    case CmpOpKind::kNotEq: return "!=";
    case CmpOpKind::kLt: return "<";
    case CmpOpKind::kLtE: return "<=";
    case CmpOpKind::kGt: return ">";
    case CmpOpKind::kGtE: return ">=";
    case CmpOpKind::kIs: return "is";
    case CmpOpKind::kIsNot: return "is not";
    case CmpOpKind::kIn: return "in";
    case CmpOpKind::kNotIn: return "not in";
  }
  return "?";
}

std::string_view ComprehensionKindName(ComprehensionKind k) {
  switch (k) {
    case ComprehensionKind::kList: return "list comprehension";
    case ComprehensionKind::kSet: return "set comprehension";
    case ComprehensionKind::kDict: return "dict comprehension";
    case ComprehensionKind::kGenerator: return "generator expression";
  }
  return "?";
}

const FunctionDefStmt* Module::FindFunction(std::string_view name) const {
  const FunctionDefStmt* found = nullptr;
  for (const StmtPtr& s : body) {
    if (const auto* f = s->as<FunctionDefStmt>(); f != nullptr && f->name == name) found = f;
  }
  return found;
}

std::vector<const FunctionDefStmt*> Module::Functions() const {
  std::vector<const FunctionDefStmt*> result;
  for (const StmtPtr& s : body) {
    if (const auto* f = s->as<FunctionDefStmt>()) result.push_back(f);
  }
  return result;
}

namespace {

std::string FormatDouble(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // "n": inf, nan
  return s;
}

// Python-like quoting; bytes literals also escape bytes >= 0x80.
std::string QuoteString(std::string_view s, bool bytes) {
  std::string out = "'";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (u < 0x20 || u == 0x7f || (bytes && u >= 0x80)) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\x";
          out += kHex[u >> 4];
          out += kHex[u & 15];
        } else {
          out += c;
        }
    }
  }
  return out + "'";
}

class Dumper {
 public:
  std::string Expr(const frontend::Expr* e) {
    if (e == nullptr) return "_";
    switch (e->kind) {
      case ExprKind::kName: return e->as<NameExpr>()->id;
      case ExprKind::kConstant: return Constant(*e->as<ConstantExpr>());
      case ExprKind::kAttribute: {
        const auto* a = e->as<AttributeExpr>();
        return "(. " + Expr(a->value.get()) + " " + a->attr + ")";
      }
      case ExprKind::kSubscript: {
        const auto* s = e->as<SubscriptExpr>();
        std::string out = "(sub " + Expr(s->value.get());
        for (const SubscriptItem& item : s->items) {
          out += " ";
          if (item.is_slice) {
            out += "(slice " + Expr(item.lower.get()) + " " + Expr(item.upper.get()) + " " +
                   Expr(item.step.get()) + ")";
          } else {
            out += Expr(item.index.get());
          }
        }
        if (s->trailing_comma) out += " ,";
        return out + ")";
      }
      case ExprKind::kCall: {
        const auto* c = e->as<CallExpr>();
        std::string out = "(call " + Expr(c->func.get());
        for (const ExprPtr& a : c->args) out += " " + Expr(a.get());
        for (const Keyword& k : c->keywords) out += " " + KeywordText(k);
        return out + ")";
      }
      case ExprKind::kBinOp: {
        const auto* b = e->as<BinOpExpr>();
        return "(" + std::string(BinOpSymbol(b->op)) + " " + Expr(b->lhs.get()) + " " +
               Expr(b->rhs.get()) + ")";
      }
      case ExprKind::kUnaryOp: {
        const auto* u = e->as<UnaryOpExpr>();
        return "(" + std::string(UnaryOpSymbol(u->op)) + " " + Expr(u->operand.get()) + ")";
      }
      case ExprKind::kBoolOp: {
        const auto* b = e->as<BoolOpExpr>();
        return List(b->op == BoolOpKind::kAnd ? "and" : "or", b->values);
      }
      case ExprKind::kCompare: {
        const auto* c = e->as<CompareExpr>();
        std::string out = "(cmp " + Expr(c->left.get());
        for (size_t i = 0; i < c->ops.size() && i < c->comparators.size(); ++i) {
          out += " " + std::string(CmpOpSymbol(c->ops[i])) + " " + Expr(c->comparators[i].get());
        }
        return out + ")";
      }
      case ExprKind::kIfExp: {
        const auto* i = e->as<IfExpExpr>();
        return "(if " + Expr(i->test.get()) + " " + Expr(i->body.get()) + " " +
               Expr(i->orelse.get()) + ")";
      }
      case ExprKind::kTuple: return List("tuple", e->as<TupleExpr>()->elts);
      case ExprKind::kList: return List("list", e->as<ListExpr>()->elts);
      case ExprKind::kSet: return List("set", e->as<SetExpr>()->elts);
      case ExprKind::kDict: {
        const auto* d = e->as<DictExpr>();
        std::string out = "(dict";
        for (size_t i = 0; i < d->keys.size() && i < d->values.size(); ++i) {
          if (d->keys[i] == nullptr) {
            out += " (** " + Expr(d->values[i].get()) + ")";
          } else {
            out += " (" + Expr(d->keys[i].get()) + " " + Expr(d->values[i].get()) + ")";
          }
        }
        return out + ")";
      }
      case ExprKind::kLambda: {
        const auto* l = e->as<LambdaExpr>();
        return "(lambda (" + Params(l->params) + ") " + Expr(l->body.get()) + ")";
      }
      case ExprKind::kComprehension: return Comprehension(*e->as<ComprehensionExpr>());
      case ExprKind::kStarred: return "(* " + Expr(e->as<StarredExpr>()->value.get()) + ")";
      case ExprKind::kNamedExpr: {
        const auto* n = e->as<NamedExprExpr>();
        return "(:= " + Expr(n->target.get()) + " " + Expr(n->value.get()) + ")";
      }
      case ExprKind::kYield: {
        const auto* y = e->as<YieldExpr>();
        return std::string(y->is_from ? "(yield-from " : "(yield ") + Expr(y->value.get()) + ")";
      }
      case ExprKind::kAwait: return "(await " + Expr(e->as<AwaitExpr>()->value.get()) + ")";
    }
    return "?";
  }

  void Stmts(const StmtList& stmts, int depth) {
    for (const StmtPtr& s : stmts) Stmt(*s, depth);
  }

  std::string Take() { return std::move(out_); }

 private:
  std::string Constant(const ConstantExpr& c) {
    switch (c.value_kind) {
      case ConstantKind::kNone: return "None";
      case ConstantKind::kBool: return c.bool_value ? "True" : "False";
      case ConstantKind::kInt: return c.int_overflows ? c.str_value : std::to_string(c.int_value);
      case ConstantKind::kFloat: return FormatDouble(c.float_value);
      case ConstantKind::kImaginary: return FormatDouble(c.float_value) + "j";
      case ConstantKind::kString:
        return (c.is_fstring ? "f" : "") + QuoteString(c.str_value, false);
      case ConstantKind::kBytes: return "b" + QuoteString(c.str_value, true);
      case ConstantKind::kEllipsis: return "...";
    }
    return "?";
  }

  std::string List(std::string_view head, const std::vector<ExprPtr>& elts) {
    std::string out = "(" + std::string(head);
    for (const ExprPtr& e : elts) out += " " + Expr(e.get());
    return out + ")";
  }

  std::string KeywordText(const Keyword& k) {
    if (k.name.empty()) return "(** " + Expr(k.value.get()) + ")";
    return k.name + "=" + Expr(k.value.get());
  }

  std::string Params(const std::vector<Param>& params) {
    std::string out;
    bool star_seen = false;
    for (size_t i = 0; i < params.size(); ++i) {
      const Param& p = params[i];
      if (!out.empty()) out += ", ";
      if (p.kind == ParamKind::kKeywordOnly && !star_seen) {
        out += "*, ";
        star_seen = true;
      }
      if (p.kind == ParamKind::kVarArgs) {
        out += "*";
        star_seen = true;
      }
      if (p.kind == ParamKind::kVarKeywords) out += "**";
      out += p.name;
      if (p.annotation) out += ": " + Expr(p.annotation.get());
      if (p.default_value) out += "=" + Expr(p.default_value.get());
      if (p.kind == ParamKind::kPositionalOnly &&
          (i + 1 == params.size() || params[i + 1].kind != ParamKind::kPositionalOnly)) {
        out += ", /";
      }
    }
    return out;
  }

  std::string Comprehension(const ComprehensionExpr& c) {
    static constexpr std::string_view kHeads[] = {"listcomp", "setcomp", "dictcomp", "genexp"};
    std::string out =
        "(" + std::string(kHeads[static_cast<int>(c.comp_kind)]) + " " + Expr(c.element.get());
    if (c.comp_kind == ComprehensionKind::kDict) out += " " + Expr(c.value.get());
    for (const ComprehensionFor& g : c.generators) {
      out += std::string(g.is_async ? " (async-for " : " (for ") + Expr(g.target.get()) + " " +
             Expr(g.iter.get());
      for (const ExprPtr& cond : g.ifs) out += " (if " + Expr(cond.get()) + ")";
      out += ")";
    }
    return out + ")";
  }

  void Line(int depth, const std::string& text) {
    out_.append(2 * depth, ' ');
    out_ += text;
    out_ += '\n';
  }

  std::string Joined(const std::vector<ExprPtr>& es, std::string_view sep) {
    std::string out;
    for (const ExprPtr& e : es) {
      if (!out.empty()) out += sep;
      out += Expr(e.get());
    }
    return out;
  }

  void Block(const std::string& header, const StmtList& body, int depth) {
    Line(depth, header + ":");
    Stmts(body, depth + 1);
  }

  void Else(const StmtList& orelse, int depth) {
    if (!orelse.empty()) Block("else", orelse, depth);
  }

  void Aliases(std::string* out, const std::vector<ImportAlias>& names) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0) *out += ", ";
      *out += names[i].name;
      if (!names[i].asname.empty()) *out += " as " + names[i].asname;
    }
  }

  void Stmt(const frontend::Stmt& s, int depth) {
    switch (s.kind) {
      case StmtKind::kFunctionDef: {
        const auto* f = s.as<FunctionDefStmt>();
        for (const ExprPtr& d : f->decorators) Line(depth, "@" + Expr(d.get()));
        std::string header = std::string(f->is_async ? "async def " : "def ") + f->name + "(" +
                             Params(f->params) + ")";
        if (f->returns) header += " -> " + Expr(f->returns.get());
        Block(header, f->body, depth);
        return;
      }
      case StmtKind::kClassDef: {
        const auto* c = s.as<ClassDefStmt>();
        for (const ExprPtr& d : c->decorators) Line(depth, "@" + Expr(d.get()));
        std::string args = Joined(c->bases, ", ");
        for (const Keyword& k : c->keywords) args += (args.empty() ? "" : ", ") + KeywordText(k);
        Block("class " + c->name + "(" + args + ")", c->body, depth);
        return;
      }
      case StmtKind::kReturn: {
        const auto* r = s.as<ReturnStmt>();
        Line(depth, r->value ? "return " + Expr(r->value.get()) : "return");
        return;
      }
      case StmtKind::kDelete:
        Line(depth, "del " + Joined(s.as<DeleteStmt>()->targets, ", "));
        return;
      case StmtKind::kAssign: {
        const auto* a = s.as<AssignStmt>();
        Line(depth, Joined(a->targets, " = ") + " = " + Expr(a->value.get()));
        return;
      }
      case StmtKind::kAugAssign: {
        const auto* a = s.as<AugAssignStmt>();
        Line(depth, Expr(a->target.get()) + " " + std::string(BinOpSymbol(a->op)) + "= " +
                        Expr(a->value.get()));
        return;
      }
      case StmtKind::kAnnAssign: {
        const auto* a = s.as<AnnAssignStmt>();
        std::string text = Expr(a->target.get()) + ": " + Expr(a->annotation.get());
        if (a->value) text += " = " + Expr(a->value.get());
        Line(depth, text);
        return;
      }
      case StmtKind::kFor: {
        const auto* f = s.as<ForStmt>();
        Block(std::string(f->is_async ? "async for " : "for ") + Expr(f->target.get()) + " in " +
                  Expr(f->iter.get()),
              f->body, depth);
        Else(f->orelse, depth);
        return;
      }
      case StmtKind::kWhile: {
        const auto* w = s.as<WhileStmt>();
        Block("while " + Expr(w->test.get()), w->body, depth);
        Else(w->orelse, depth);
        return;
      }
      case StmtKind::kIf: {
        const auto* i = s.as<IfStmt>();
        Block(std::string(i->is_elif ? "elif " : "if ") + Expr(i->test.get()), i->body, depth);
        if (i->orelse.size() == 1 && i->orelse[0]->kind == StmtKind::kIf &&
            i->orelse[0]->as<IfStmt>()->is_elif) {
          Stmt(*i->orelse[0], depth);
        } else {
          Else(i->orelse, depth);
        }
        return;
      }
      case StmtKind::kWith: {
        const auto* w = s.as<WithStmt>();
        std::string header = w->is_async ? "async with " : "with ";
        for (size_t k = 0; k < w->items.size(); ++k) {
          if (k > 0) header += ", ";
          header += Expr(w->items[k].context.get());
          if (w->items[k].target) header += " as " + Expr(w->items[k].target.get());
        }
        Block(header, w->body, depth);
        return;
      }
      case StmtKind::kRaise: {
        const auto* r = s.as<RaiseStmt>();
        std::string text = "raise";
        if (r->exc) text += " " + Expr(r->exc.get());
        if (r->cause) text += " from " + Expr(r->cause.get());
        Line(depth, text);
        return;
      }
      case StmtKind::kTry: {
        const auto* t = s.as<TryStmt>();
        Block("try", t->body, depth);
        for (const ExceptHandler& h : t->handlers) {
          std::string header = h.is_star ? "except*" : "except";
          if (h.type) header += " " + Expr(h.type.get());
          if (!h.name.empty()) header += " as " + h.name;
          Block(header, h.body, depth);
        }
        Else(t->orelse, depth);
        if (!t->finalbody.empty()) Block("finally", t->finalbody, depth);
        return;
      }
      case StmtKind::kAssert: {
        const auto* a = s.as<AssertStmt>();
        std::string text = "assert " + Expr(a->test.get());
        if (a->msg) text += ", " + Expr(a->msg.get());
        Line(depth, text);
        return;
      }
      case StmtKind::kImport: {
        std::string text = "import ";
        Aliases(&text, s.as<ImportStmt>()->names);
        Line(depth, text);
        return;
      }
      case StmtKind::kImportFrom: {
        const auto* i = s.as<ImportFromStmt>();
        std::string text = "from " + std::string(i->level, '.') + i->module + " import ";
        Aliases(&text, i->names);
        Line(depth, text);
        return;
      }
      case StmtKind::kGlobal:
      case StmtKind::kNonlocal: {
        const auto& names =
            s.kind == StmtKind::kGlobal ? s.as<GlobalStmt>()->names : s.as<NonlocalStmt>()->names;
        std::string text = s.kind == StmtKind::kGlobal ? "global " : "nonlocal ";
        for (size_t k = 0; k < names.size(); ++k) text += (k > 0 ? ", " : "") + names[k];
        Line(depth, text);
        return;
      }
      case StmtKind::kExpr: Line(depth, Expr(s.as<ExprStmt>()->value.get())); return;
      case StmtKind::kPass: Line(depth, "pass"); return;
      case StmtKind::kBreak: Line(depth, "break"); return;
      case StmtKind::kContinue: Line(depth, "continue"); return;
    }
  }

  std::string out_;
};

}  // namespace

std::string DumpAst(const Module& module) {
  Dumper d;
  d.Stmts(module.body, 0);
  return d.Take();
}

std::string DumpExpr(const Expr& expr) { return Dumper().Expr(&expr); }

}  // namespace tilec::frontend
