#include "compiler/frontend/parser.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/frontend/lexer.h"
#include "compiler/frontend/parser_internal.h"

namespace tilec::frontend {
namespace parser_internal {
namespace {

// How an expression that is not a valid target is named in diagnostics.
std::string Describe(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kCall: return "function call";
    case ExprKind::kConstant: {
      const auto* c = e.as<ConstantExpr>();
      if (c->value_kind == ConstantKind::kNone) return "None";
      if (c->value_kind == ConstantKind::kBool) return c->bool_value ? "True" : "False";
      if (c->value_kind == ConstantKind::kEllipsis) return "ellipsis";
      return "literal";
    }
    case ExprKind::kCompare: return "comparison";
    case ExprKind::kIfExp: return "conditional expression";
    case ExprKind::kLambda: return "lambda";
    case ExprKind::kComprehension:
      return std::string(ComprehensionKindName(e.as<ComprehensionExpr>()->comp_kind));
    case ExprKind::kDict: return "dict literal";
    case ExprKind::kSet: return "set display";
    case ExprKind::kNamedExpr: return "named expression";
    case ExprKind::kYield: return "yield expression";
    case ExprKind::kAwait: return "await expression";
    case ExprKind::kTuple: return "tuple";
    case ExprKind::kList: return "list";
    case ExprKind::kStarred: return "starred";
    case ExprKind::kName: return "name";
    case ExprKind::kAttribute: return "attribute";
    case ExprKind::kSubscript: return "subscript";
    default: return "expression";
  }
}

std::optional<BinOpKind> AugAssignOp(const Token& t) {
  if (t.kind != TokenKind::kOp || t.text.size() < 2 || t.text.back() != '=') return std::nullopt;
  std::string_view op(t.text.data(), t.text.size() - 1);
  static constexpr std::pair<std::string_view, BinOpKind> kOps[] = {
      {"+", BinOpKind::kAdd},     {"-", BinOpKind::kSub},   {"*", BinOpKind::kMul},
      {"@", BinOpKind::kMatMul},  {"/", BinOpKind::kDiv},   {"//", BinOpKind::kFloorDiv},
      {"%", BinOpKind::kMod},     {"**", BinOpKind::kPow},  {"<<", BinOpKind::kLShift},
      {">>", BinOpKind::kRShift}, {"|", BinOpKind::kBitOr}, {"^", BinOpKind::kBitXor},
      {"&", BinOpKind::kBitAnd},
  };
  for (const auto& [text, kind] : kOps) {
    if (text == op) return kind;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<StmtList> Parser::ParseFile() {
  StmtList body;
  while (Cur().kind != TokenKind::kEndOfFile) {
    PARSER_RETURN_IF_ERROR(ParseStatement(&body));
  }
  return body;
}

absl::StatusOr<ExprPtr> Parser::ParseSingleExpression() {
  if (Cur().kind == TokenKind::kEndOfFile) return Error(Cur().loc, "expected expression");
  if (Cur().kind == TokenKind::kIndent) return Error(Cur().loc, "unexpected indent");
  PARSER_ASSIGN_OR_RETURN(ExprPtr e, ParseTestListStarExpr());
  if (Cur().kind == TokenKind::kNewline) Advance();
  if (Cur().kind != TokenKind::kEndOfFile) {
    return Error(Cur().loc, "unexpected " + DescribeToken(Cur()) + " after expression");
  }
  return e;
}

absl::Status Parser::ParseStatement(StmtList* out) {
  const Token& t = Cur();
  if (t.kind == TokenKind::kIndent) return Error(t.loc, "unexpected indent");
  if (t.kind == TokenKind::kNewline || t.kind == TokenKind::kDedent) {
    return Error(t.loc, "expected statement");  // the lexer never produces these here
  }
  if (t.IsOp("@")) return ParseDecorated(out);
  if (t.kind == TokenKind::kKeyword) {
    const std::string& kw = t.text;
    if (kw == "def" || kw == "class" || kw == "async") return ParseDecorated(out);
    if (kw == "if") return Push(out, ParseIf());
    if (kw == "while") return Push(out, ParseWhile());
    if (kw == "for") return Push(out, ParseFor(t.loc, false));
    if (kw == "with") return Push(out, ParseWith(t.loc, false));
    if (kw == "try") return Push(out, ParseTry());
    if (kw == "elif") return Error(t.loc, "'elif' does not follow an 'if' block");
    if (kw == "else") {
      return Error(t.loc, "'else' does not follow an 'if', 'for', 'while' or 'try' block");
    }
    if (kw == "except" || kw == "finally") {
      return Error(t.loc, "'" + kw + "' does not follow a 'try' block");
    }
  }
  if (t.kind == TokenKind::kName && t.text == "match" && IsMatchStatement()) {
    return Error(t.loc, "'match' statements are not supported");
  }
  if (t.kind == TokenKind::kName && t.text == "type" && Ahead(1).kind == TokenKind::kName &&
      (Ahead(2).IsOp("=") || Ahead(2).IsOp("["))) {
    return Error(t.loc, "'type' alias statements are not supported");
  }
  return ParseSimpleStatements(out);
}

absl::Status Parser::Push(StmtList* out, absl::StatusOr<StmtPtr> s) {
  if (!s.ok()) return s.status();
  out->push_back(std::move(*s));
  return absl::OkStatus();
}

bool Parser::IsMatchStatement() const {
  size_t i = pos_ + 1;
  while (i < toks_.size() && toks_[i].kind != TokenKind::kNewline &&
         toks_[i].kind != TokenKind::kEndOfFile) {
    ++i;
  }
  return i + 2 < toks_.size() && toks_[i - 1].IsOp(":") &&
         toks_[i + 1].kind == TokenKind::kIndent && toks_[i + 2].Is(TokenKind::kName, "case");
}

absl::Status Parser::ParseSimpleStatements(StmtList* out) {
  while (true) {
    PARSER_RETURN_IF_ERROR(Push(out, ParseSmallStatement()));
    if (AcceptOp(";")) {
      if (AtLineEnd()) break;
      continue;
    }
    break;
  }
  if (Cur().kind == TokenKind::kNewline) {
    Advance();
    return absl::OkStatus();
  }
  if (AtLineEnd()) return absl::OkStatus();
  if (AtOp("=")) {
    return Error(Cur().loc, "invalid syntax: '=' cannot follow this statement");
  }
  return Error(Cur().loc, "unexpected " + DescribeToken(Cur()) + " after statement");
}

absl::StatusOr<StmtList> Parser::ParseBlock(std::string_view what, int header_line) {
  StmtList body;
  if (Cur().kind != TokenKind::kNewline) {
    if (AtLineEnd()) {
      return Error(Cur().loc, "expected an indented block after " + std::string(what) +
                                  " on line " + std::to_string(header_line));
    }
    PARSER_RETURN_IF_ERROR(ParseSimpleStatements(&body));
    return body;
  }
  Advance();
  if (Cur().kind != TokenKind::kIndent) {
    return Error(Cur().loc, "expected an indented block after " + std::string(what) + " on line " +
                                std::to_string(header_line));
  }
  Advance();
  while (Cur().kind != TokenKind::kDedent && Cur().kind != TokenKind::kEndOfFile) {
    PARSER_RETURN_IF_ERROR(ParseStatement(&body));
  }
  Advance();  // the DEDENT
  return body;
}

absl::Status Parser::ParseDecorated(StmtList* out) {
  std::vector<ExprPtr> decorators;
  while (AtOp("@")) {
    Advance();
    PARSER_ASSIGN_OR_RETURN(ExprPtr d, ParseNamedExprTest());
    decorators.push_back(std::move(d));
    if (Cur().kind != TokenKind::kNewline) return Expected("newline after decorator");
    Advance();
  }
  SourceLoc loc = Cur().loc;
  bool is_async = AcceptKw("async");
  if (is_async) {
    if (AtKw("for") && decorators.empty()) return Push(out, ParseFor(loc, true));
    if (AtKw("with") && decorators.empty()) return Push(out, ParseWith(loc, true));
    if (!AtKw("def"))
      return Expected(decorators.empty() ? "'def', 'for' or 'with' after 'async'"
                                         : "'def' after 'async'");
  }
  if (AtKw("def")) return Push(out, ParseFunctionDef(loc, is_async, std::move(decorators)));
  if (AtKw("class")) return Push(out, ParseClassDef(loc, std::move(decorators)));
  return Expected("'def' or 'class' after decorator");
}

absl::StatusOr<StmtPtr> Parser::ParseFunctionDef(SourceLoc loc, bool is_async,
                                                 std::vector<ExprPtr> decorators) {
  Advance();  // def
  auto f = std::make_unique<FunctionDefStmt>(loc);
  f->is_async = is_async;
  f->decorators = std::move(decorators);
  if (Cur().kind != TokenKind::kName) return Expected("function name after 'def'");
  f->name = Cur().text;
  f->name_loc = Cur().loc;
  Advance();
  if (!AcceptOp("(")) return Expected("'(' after function name");
  PARSER_RETURN_IF_ERROR(ParseParams(")", true, &f->params));
  if (!AcceptOp(")")) return Expected("',' or ')' in parameter list");
  if (AcceptOp("->")) {
    PARSER_ASSIGN_OR_RETURN(f->returns, ParseTest());
  }
  PARSER_RETURN_IF_ERROR(ExpectOp(":", "expected ':' after function signature"));
  PARSER_ASSIGN_OR_RETURN(f->body, ParseBlock("function definition", loc.line));
  return StmtPtr(std::move(f));
}

absl::Status Parser::ParseParams(std::string_view end, bool annotations, std::vector<Param>* out) {
  bool star_seen = false, slash_seen = false, default_seen = false, kwargs_seen = false;
  std::set<std::string> names;
  while (!AtOp(end)) {
    SourceLoc loc = Cur().loc;
    if (kwargs_seen) return Error(loc, "parameters cannot follow the '**' parameter");
    Param p;
    p.loc = loc;
    if (AcceptOp("/")) {
      if (slash_seen) return Error(loc, "'/' may appear only once");
      if (star_seen) return Error(loc, "'/' must be ahead of '*'");
      if (out->empty()) return Error(loc, "at least one parameter must precede '/'");
      for (Param& q : *out) q.kind = ParamKind::kPositionalOnly;
      slash_seen = true;
      if (!AcceptOp(",")) break;
      continue;
    }
    if (AcceptOp("*")) {
      if (star_seen) return Error(loc, "'*' parameter may appear only once");
      star_seen = true;
      if (Cur().kind != TokenKind::kName) {
        if (!AtOp(",") || Ahead(1).IsOp(end) || Ahead(1).IsOp("**")) {
          return Error(loc, "named parameters must follow bare '*'");
        }
        Advance();
        continue;
      }
      p.kind = ParamKind::kVarArgs;
    } else if (AcceptOp("**")) {
      kwargs_seen = true;
      p.kind = ParamKind::kVarKeywords;
    } else {
      p.kind = star_seen ? ParamKind::kKeywordOnly : ParamKind::kNormal;
    }
    if (Cur().kind != TokenKind::kName) return Expected("parameter name");
    p.name = Cur().text;
    p.loc = Cur().loc;
    if (!names.insert(p.name).second) {
      return Error(p.loc, "duplicate parameter '" + p.name + "' in function definition");
    }
    Advance();
    if (annotations && AcceptOp(":")) {
      PARSER_ASSIGN_OR_RETURN(p.annotation, AtOp("*") ? ParseStarred() : ParseTest());
    }
    if (AtOp("=")) {
      if (p.kind == ParamKind::kVarArgs || p.kind == ParamKind::kVarKeywords) {
        return Error(Cur().loc,
                     "var-positional and var-keyword parameters cannot have default values");
      }
      Advance();
      PARSER_ASSIGN_OR_RETURN(p.default_value, ParseTest());
      if (p.kind == ParamKind::kNormal) default_seen = true;
    } else if (p.kind == ParamKind::kNormal && default_seen) {
      return Error(p.loc, "parameter without a default follows parameter with a default");
    }
    out->push_back(std::move(p));
    if (!AcceptOp(",")) break;
  }
  return absl::OkStatus();
}

absl::StatusOr<StmtPtr> Parser::ParseClassDef(SourceLoc loc, std::vector<ExprPtr> decorators) {
  Advance();  // class
  auto c = std::make_unique<ClassDefStmt>(loc);
  c->decorators = std::move(decorators);
  if (Cur().kind != TokenKind::kName) return Expected("class name after 'class'");
  c->name = Cur().text;
  c->name_loc = Cur().loc;
  Advance();
  if (AcceptOp("(")) PARSER_RETURN_IF_ERROR(ParseArguments(&c->bases, &c->keywords));
  PARSER_RETURN_IF_ERROR(ExpectOp(":", "expected ':' after 'class' header"));
  PARSER_ASSIGN_OR_RETURN(c->body, ParseBlock("class definition", loc.line));
  return StmtPtr(std::move(c));
}

absl::StatusOr<StmtPtr> Parser::ParseIf() {
  SourceLoc loc = Cur().loc;
  auto root = std::make_unique<IfStmt>(loc);
  IfStmt* node = root.get();
  while (true) {
    bool is_elif = AtKw("elif");
    Advance();  // if / elif
    PARSER_ASSIGN_OR_RETURN(node->test, ParseNamedExprTest());
    PARSER_RETURN_IF_ERROR(ExpectOp(":", is_elif ? "expected ':' after 'elif' condition"
                                                 : "expected ':' after 'if' condition"));
    PARSER_ASSIGN_OR_RETURN(
        node->body, ParseBlock(is_elif ? "'elif' statement" : "'if' statement", node->loc.line));
    if (AtKw("elif")) {
      auto next = std::make_unique<IfStmt>(Cur().loc);
      next->is_elif = true;
      IfStmt* raw = next.get();
      node->orelse.push_back(std::move(next));
      node = raw;
      continue;
    }
    if (AtKw("else")) {
      PARSER_ASSIGN_OR_RETURN(node->orelse, ParseElse());
    }
    break;
  }
  return StmtPtr(std::move(root));
}

absl::StatusOr<StmtList> Parser::ParseElse() {
  int line = Cur().loc.line;
  Advance();  // else
  PARSER_RETURN_IF_ERROR(ExpectOp(":", "expected ':' after 'else'"));
  return ParseBlock("'else' statement", line);
}

absl::StatusOr<StmtPtr> Parser::ParseWhile() {
  auto w = std::make_unique<WhileStmt>(Cur().loc);
  Advance();
  PARSER_ASSIGN_OR_RETURN(w->test, ParseNamedExprTest());
  PARSER_RETURN_IF_ERROR(ExpectOp(":", "expected ':' after 'while' condition"));
  PARSER_ASSIGN_OR_RETURN(w->body, ParseBlock("'while' statement", w->loc.line));
  if (AtKw("else")) {
    PARSER_ASSIGN_OR_RETURN(w->orelse, ParseElse());
  }
  return StmtPtr(std::move(w));
}

absl::StatusOr<StmtPtr> Parser::ParseFor(SourceLoc loc, bool is_async) {
  auto f = std::make_unique<ForStmt>(loc);
  f->is_async = is_async;
  Advance();  // for
  PARSER_ASSIGN_OR_RETURN(f->target, ParseTargetList());
  PARSER_RETURN_IF_ERROR(CheckTarget(*f->target, TargetUse::kFor));
  if (!AcceptKw("in")) return Expected("'in' after 'for' target");
  PARSER_ASSIGN_OR_RETURN(f->iter, ParseTestListStarExpr());
  PARSER_RETURN_IF_ERROR(ExpectOp(":", "expected ':' after 'for' header"));
  PARSER_ASSIGN_OR_RETURN(f->body, ParseBlock("'for' statement", loc.line));
  if (AtKw("else")) {
    PARSER_ASSIGN_OR_RETURN(f->orelse, ParseElse());
  }
  return StmtPtr(std::move(f));
}

absl::StatusOr<StmtPtr> Parser::ParseWith(SourceLoc loc, bool is_async) {
  auto w = std::make_unique<WithStmt>(loc);
  w->is_async = is_async;
  Advance();  // with
  bool parsed = false;
  if (AtOp("(")) {
    // `with (a as b, c as d):` -- if the parenthesized form does not parse,
    // the parenthesis belongs to the first context expression.
    size_t saved = pos_;
    Advance();
    std::vector<WithItem> items;
    absl::Status s = ParseWithItems(&items, true);
    if (s.ok() && AcceptOp(")") && AtOp(":")) {
      w->items = std::move(items);
      parsed = true;
    } else {
      pos_ = saved;
    }
  }
  if (!parsed) PARSER_RETURN_IF_ERROR(ParseWithItems(&w->items, false));
  PARSER_RETURN_IF_ERROR(ExpectOp(":", "expected ':' after 'with' header"));
  PARSER_ASSIGN_OR_RETURN(w->body, ParseBlock("'with' statement", loc.line));
  return StmtPtr(std::move(w));
}

absl::Status Parser::ParseWithItems(std::vector<WithItem>* items, bool parenthesized) {
  while (true) {
    WithItem item;
    item.loc = Cur().loc;
    PARSER_ASSIGN_OR_RETURN(item.context, ParseTest());
    if (AcceptKw("as")) {
      PARSER_ASSIGN_OR_RETURN(item.target, ParseBitOr());
      PARSER_RETURN_IF_ERROR(CheckTarget(*item.target, TargetUse::kWith));
    }
    items->push_back(std::move(item));
    if (!AcceptOp(",")) break;
    if (parenthesized && AtOp(")")) break;
  }
  return absl::OkStatus();
}

absl::StatusOr<StmtPtr> Parser::ParseTry() {
  auto t = std::make_unique<TryStmt>(Cur().loc);
  Advance();
  PARSER_RETURN_IF_ERROR(ExpectOp(":", "expected ':' after 'try'"));
  PARSER_ASSIGN_OR_RETURN(t->body, ParseBlock("'try' statement", t->loc.line));
  while (AtKw("except")) {
    ExceptHandler h;
    h.loc = Cur().loc;
    Advance();
    h.is_star = AcceptOp("*");
    if (!AtOp(":")) {
      PARSER_ASSIGN_OR_RETURN(h.type, ParseTest());
      if (AtOp(",")) return Error(Cur().loc, "multiple exception types must be parenthesized");
      if (AcceptKw("as")) {
        if (Cur().kind != TokenKind::kName) return Expected("name after 'as'");
        h.name = Cur().text;
        Advance();
      }
    } else if (h.is_star) {
      return Error(Cur().loc, "expected exception type after 'except*'");
    }
    PARSER_RETURN_IF_ERROR(ExpectOp(":", "expected ':' after 'except' clause"));
    PARSER_ASSIGN_OR_RETURN(h.body, ParseBlock("'except' statement", h.loc.line));
    t->handlers.push_back(std::move(h));
  }
  if (AtKw("else")) {
    if (t->handlers.empty()) return Error(Cur().loc, "expected 'except' or 'finally' block");
    PARSER_ASSIGN_OR_RETURN(t->orelse, ParseElse());
  }
  if (AtKw("finally")) {
    int line = Cur().loc.line;
    Advance();
    PARSER_RETURN_IF_ERROR(ExpectOp(":", "expected ':' after 'finally'"));
    PARSER_ASSIGN_OR_RETURN(t->finalbody, ParseBlock("'finally' statement", line));
  }
  if (t->handlers.empty() && t->finalbody.empty()) {
    return Error(Cur().loc, "expected 'except' or 'finally' block");
  }
  return StmtPtr(std::move(t));
}

absl::StatusOr<StmtPtr> Parser::ParseSmallStatement() {
  const Token& t = Cur();
  SourceLoc loc = t.loc;
  if (t.kind == TokenKind::kKeyword) {
    if (t.text == "pass") return Simple<PassStmt>(loc);
    if (t.text == "break") return Simple<BreakStmt>(loc);
    if (t.text == "continue") return Simple<ContinueStmt>(loc);
    if (t.text == "return") {
      Advance();
      auto r = std::make_unique<ReturnStmt>(loc);
      if (!AtStmtEnd()) {
        PARSER_ASSIGN_OR_RETURN(r->value, ParseTestListStarExpr());
      }
      return StmtPtr(std::move(r));
    }
    if (t.text == "raise") {
      Advance();
      auto r = std::make_unique<RaiseStmt>(loc);
      if (!AtStmtEnd()) {
        PARSER_ASSIGN_OR_RETURN(r->exc, ParseTest());
        if (AcceptKw("from")) {
          PARSER_ASSIGN_OR_RETURN(r->cause, ParseTest());
        }
      }
      return StmtPtr(std::move(r));
    }
    if (t.text == "global" || t.text == "nonlocal") return ParseGlobal(t.text == "global");
    if (t.text == "del") {
      Advance();
      auto d = std::make_unique<DeleteStmt>(loc);
      while (true) {
        PARSER_ASSIGN_OR_RETURN(ExprPtr e, ParseBitOr());
        PARSER_RETURN_IF_ERROR(CheckTarget(*e, TargetUse::kDelete));
        d->targets.push_back(std::move(e));
        if (!AcceptOp(",") || AtStmtEnd()) break;
      }
      return StmtPtr(std::move(d));
    }
    if (t.text == "assert") {
      Advance();
      auto a = std::make_unique<AssertStmt>(loc);
      PARSER_ASSIGN_OR_RETURN(a->test, ParseTest());
      if (AcceptOp(",")) {
        PARSER_ASSIGN_OR_RETURN(a->msg, ParseTest());
      }
      return StmtPtr(std::move(a));
    }
    if (t.text == "import") return ParseImport();
    if (t.text == "from") return ParseImportFrom();
    if (t.text == "def" || t.text == "class" || t.text == "if" || t.text == "for" ||
        t.text == "while" || t.text == "with" || t.text == "try") {
      return Error(loc, "'" + t.text + "' statement must start on its own line");
    }
  }
  return ParseExprStatement();
}

absl::StatusOr<StmtPtr> Parser::ParseGlobal(bool global) {
  SourceLoc loc = Cur().loc;
  Advance();
  std::vector<std::string> names;
  while (true) {
    if (Cur().kind != TokenKind::kName) return Expected("name");
    names.push_back(Cur().text);
    Advance();
    if (!AcceptOp(",")) break;
  }
  if (global) {
    auto g = std::make_unique<GlobalStmt>(loc);
    g->names = std::move(names);
    return StmtPtr(std::move(g));
  }
  auto n = std::make_unique<NonlocalStmt>(loc);
  n->names = std::move(names);
  return StmtPtr(std::move(n));
}

absl::StatusOr<std::string> Parser::ParseDottedName(std::string_view context) {
  if (Cur().kind != TokenKind::kName)
    return Expected("module name after '" + std::string(context) + "'");
  std::string name = Cur().text;
  Advance();
  while (AtOp(".")) {
    Advance();
    if (Cur().kind != TokenKind::kName) return Expected("name after '.'");
    name += "." + Cur().text;
    Advance();
  }
  return name;
}

absl::StatusOr<StmtPtr> Parser::ParseImport() {
  auto s = std::make_unique<ImportStmt>(Cur().loc);
  Advance();
  while (true) {
    ImportAlias a;
    a.loc = Cur().loc;
    PARSER_ASSIGN_OR_RETURN(a.name, ParseDottedName("import"));
    if (AcceptKw("as")) {
      if (Cur().kind != TokenKind::kName) return Expected("name after 'as'");
      a.asname = Cur().text;
      Advance();
    }
    s->names.push_back(std::move(a));
    if (!AcceptOp(",")) break;
  }
  return StmtPtr(std::move(s));
}

absl::StatusOr<StmtPtr> Parser::ParseImportFrom() {
  auto s = std::make_unique<ImportFromStmt>(Cur().loc);
  Advance();
  while (AtOp(".") || AtOp("...")) {
    s->level += static_cast<int>(Cur().text.size());
    Advance();
  }
  if (s->level == 0 || Cur().kind == TokenKind::kName) {
    PARSER_ASSIGN_OR_RETURN(s->module, ParseDottedName("from"));
  }
  if (!AcceptKw("import")) return Expected("'import' after module name");
  if (AtOp("*")) {
    s->names.push_back(ImportAlias{Cur().loc, "*", ""});
    Advance();
    return StmtPtr(std::move(s));
  }
  bool paren = AcceptOp("(");
  while (true) {
    ImportAlias a;
    a.loc = Cur().loc;
    if (Cur().kind != TokenKind::kName) return Expected("name to import");
    a.name = Cur().text;
    Advance();
    if (AcceptKw("as")) {
      if (Cur().kind != TokenKind::kName) return Expected("name after 'as'");
      a.asname = Cur().text;
      Advance();
    }
    s->names.push_back(std::move(a));
    if (!AcceptOp(",")) break;
    if (paren && AtOp(")")) break;
    if (!paren && AtStmtEnd()) {
      return Error(Prev().loc, "trailing comma not allowed without surrounding parentheses");
    }
  }
  if (paren && !AcceptOp(")")) return Expected("',' or ')' in import list");
  return StmtPtr(std::move(s));
}

absl::StatusOr<StmtPtr> Parser::ParseExprStatement() {
  SourceLoc loc = Cur().loc;
  PARSER_ASSIGN_OR_RETURN(ExprPtr first, ParseYieldOrTestList());
  if (AtOp(":")) {
    Advance();
    const Expr& target = *first;
    if (target.kind == ExprKind::kTuple) {
      return Error(target.loc, "only a single target (not a tuple) can be annotated");
    }
    if (target.kind != ExprKind::kName && target.kind != ExprKind::kAttribute &&
        target.kind != ExprKind::kSubscript) {
      return Error(target.loc, "illegal target for annotation: " + Describe(target));
    }
    auto a = std::make_unique<AnnAssignStmt>(loc);
    a->target = std::move(first);
    PARSER_ASSIGN_OR_RETURN(a->annotation, ParseTest());
    if (AcceptOp("=")) {
      PARSER_ASSIGN_OR_RETURN(a->value, ParseYieldOrTestList());
    }
    return StmtPtr(std::move(a));
  }
  if (std::optional<BinOpKind> op = AugAssignOp(Cur())) {
    const Expr& target = *first;
    if (target.kind != ExprKind::kName && target.kind != ExprKind::kAttribute &&
        target.kind != ExprKind::kSubscript) {
      return Error(target.loc,
                   "'" + Describe(target) + "' is an illegal expression for augmented assignment");
    }
    auto a = std::make_unique<AugAssignStmt>(loc, *op);
    a->op_loc = Cur().loc;
    Advance();
    a->target = std::move(first);
    PARSER_ASSIGN_OR_RETURN(a->value, ParseYieldOrTestList());
    return StmtPtr(std::move(a));
  }
  if (AtOp("=")) {
    auto a = std::make_unique<AssignStmt>(loc);
    ExprPtr last = std::move(first);
    while (AcceptOp("=")) {
      PARSER_RETURN_IF_ERROR(CheckTarget(*last, TargetUse::kAssign));
      a->targets.push_back(std::move(last));
      PARSER_ASSIGN_OR_RETURN(last, ParseYieldOrTestList());
    }
    a->value = std::move(last);
    return StmtPtr(std::move(a));
  }
  if (first->kind == ExprKind::kStarred) {
    return Error(first->loc, "cannot use starred expression here");
  }
  return StmtPtr(std::make_unique<ExprStmt>(loc, std::move(first)));
}

absl::Status Parser::CheckTarget(const Expr& e, TargetUse use, bool nested) {
  const char* verb = use == TargetUse::kDelete ? "cannot delete " : "cannot assign to ";
  switch (e.kind) {
    case ExprKind::kName:
    case ExprKind::kAttribute:
    case ExprKind::kSubscript: return absl::OkStatus();
    case ExprKind::kTuple:
    case ExprKind::kList: {
      const auto& elts =
          e.kind == ExprKind::kTuple ? e.as<TupleExpr>()->elts : e.as<ListExpr>()->elts;
      bool starred = false;
      for (const ExprPtr& elt : elts) {
        if (elt->kind == ExprKind::kStarred) {
          if (use == TargetUse::kDelete) return Error(elt->loc, "cannot delete starred");
          if (starred) return Error(elt->loc, "multiple starred expressions in assignment");
          starred = true;
          PARSER_RETURN_IF_ERROR(CheckTarget(*elt->as<StarredExpr>()->value, use, true));
          continue;
        }
        PARSER_RETURN_IF_ERROR(CheckTarget(*elt, use, true));
      }
      return absl::OkStatus();
    }
    case ExprKind::kStarred:
      if (use == TargetUse::kDelete) return Error(e.loc, "cannot delete starred");
      return Error(e.loc, "starred assignment target must be in a list or tuple");
    default: return Error(e.loc, verb + Describe(e));
  }
}

}  // namespace parser_internal

absl::StatusOr<std::unique_ptr<Module>> Parse(const SourceFile& file) {
  absl::StatusOr<std::vector<Token>> tokens = Tokenize(file);
  if (!tokens.ok()) return tokens.status();
  auto module = std::make_unique<Module>();
  module->source = file;
  parser_internal::Parser parser(module->source, std::move(*tokens));
  PARSER_ASSIGN_OR_RETURN(module->body, parser.ParseFile());
  return module;
}

absl::StatusOr<ExprPtr> ParseExpression(const SourceFile& file) {
  absl::StatusOr<std::vector<Token>> tokens = Tokenize(file);
  if (!tokens.ok()) return tokens.status();
  return parser_internal::Parser(file, std::move(*tokens)).ParseSingleExpression();
}

}  // namespace tilec::frontend
