// Expression parsing: the Parser methods from ParseTestListStarExpr down to
// atoms, displays and comprehensions.
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/frontend/ast.h"
#include "compiler/frontend/lexer.h"
#include "compiler/frontend/parser_internal.h"

namespace tilec::frontend::parser_internal {

absl::StatusOr<ExprPtr> Parser::ParseTestListStarExpr() {
  SourceLoc loc = Cur().loc;
  PARSER_ASSIGN_OR_RETURN(ExprPtr first, ParseTestOrStar());
  if (!AtOp(",")) return first;
  auto tuple = std::make_unique<TupleExpr>(loc);
  tuple->elts.push_back(std::move(first));
  while (AcceptOp(",")) {
    if (!CanStartExpr()) break;
    PARSER_ASSIGN_OR_RETURN(ExprPtr e, ParseTestOrStar());
    tuple->elts.push_back(std::move(e));
  }
  return ExprPtr(std::move(tuple));
}

absl::StatusOr<ExprPtr> Parser::ParseStarred() {
  SourceLoc loc = Cur().loc;
  Advance();
  PARSER_ASSIGN_OR_RETURN(ExprPtr value, ParseBitOr());
  return ExprPtr(std::make_unique<StarredExpr>(loc, std::move(value)));
}

absl::StatusOr<ExprPtr> Parser::ParseTargetList() {
  SourceLoc loc = Cur().loc;
  PARSER_ASSIGN_OR_RETURN(ExprPtr first, AtOp("*") ? ParseStarred() : ParseBitOr());
  if (!AtOp(",")) return first;
  auto tuple = std::make_unique<TupleExpr>(loc);
  tuple->elts.push_back(std::move(first));
  while (AcceptOp(",")) {
    if (!CanStartExpr()) break;
    PARSER_ASSIGN_OR_RETURN(ExprPtr e, AtOp("*") ? ParseStarred() : ParseBitOr());
    tuple->elts.push_back(std::move(e));
  }
  return ExprPtr(std::move(tuple));
}

absl::StatusOr<ExprPtr> Parser::ParseNamedExprTest() {
  if (Cur().kind == TokenKind::kName && Ahead(1).IsOp(":=")) {
    SourceLoc loc = Cur().loc;
    auto target = std::make_unique<NameExpr>(loc, Cur().text);
    Advance();
    Advance();
    PARSER_ASSIGN_OR_RETURN(ExprPtr value, ParseTest());
    return ExprPtr(std::make_unique<NamedExprExpr>(loc, std::move(target), std::move(value)));
  }
  return ParseTest();
}

absl::StatusOr<ExprPtr> Parser::ParseTest() {
  DepthGuard guard(&depth_);
  PARSER_RETURN_IF_ERROR(CheckDepth());
  if (AtKw("lambda")) return ParseLambda();
  SourceLoc loc = Cur().loc;
  PARSER_ASSIGN_OR_RETURN(ExprPtr body, ParseOrTest());
  if (!AtKw("if")) return body;
  Advance();
  PARSER_ASSIGN_OR_RETURN(ExprPtr test, ParseOrTest());
  if (!AcceptKw("else")) return Expected("'else' after 'if' expression");
  PARSER_ASSIGN_OR_RETURN(ExprPtr orelse, ParseTest());
  return ExprPtr(
      std::make_unique<IfExpExpr>(loc, std::move(test), std::move(body), std::move(orelse)));
}

absl::StatusOr<ExprPtr> Parser::ParseLambda() {
  auto l = std::make_unique<LambdaExpr>(Cur().loc);
  Advance();
  PARSER_RETURN_IF_ERROR(ParseParams(":", false, &l->params));
  PARSER_RETURN_IF_ERROR(ExpectOp(":", "expected ':' after lambda parameters"));
  PARSER_ASSIGN_OR_RETURN(l->body, ParseTest());
  return ExprPtr(std::move(l));
}

absl::StatusOr<ExprPtr> Parser::ParseBoolOp(BoolOpKind kind) {
  std::string_view word = kind == BoolOpKind::kOr ? "or" : "and";
  auto operand = [&]() -> absl::StatusOr<ExprPtr> {
    return kind == BoolOpKind::kOr ? ParseBoolOp(BoolOpKind::kAnd) : ParseNotTest();
  };
  SourceLoc loc = Cur().loc;
  PARSER_ASSIGN_OR_RETURN(ExprPtr first, operand());
  if (!AtKw(word)) return first;
  auto b = std::make_unique<BoolOpExpr>(loc, kind);
  b->values.push_back(std::move(first));
  while (AtKw(word)) {
    b->op_locs.push_back(Cur().loc);
    Advance();
    PARSER_ASSIGN_OR_RETURN(ExprPtr next, operand());
    b->values.push_back(std::move(next));
  }
  return ExprPtr(std::move(b));
}

absl::StatusOr<ExprPtr> Parser::ParseNotTest() {
  if (!AtKw("not")) return ParseComparison();
  DepthGuard guard(&depth_);
  PARSER_RETURN_IF_ERROR(CheckDepth());
  SourceLoc loc = Cur().loc;
  Advance();
  PARSER_ASSIGN_OR_RETURN(ExprPtr operand, ParseNotTest());
  return ExprPtr(std::make_unique<UnaryOpExpr>(loc, UnaryOpKind::kNot, std::move(operand)));
}

Parser::CmpOpMatch Parser::CmpOpHere() const {
  const Token& t = Cur();
  if (t.kind == TokenKind::kOp) {
    static constexpr std::pair<std::string_view, CmpOpKind> kOps[] = {
        {"==", CmpOpKind::kEq},  {"!=", CmpOpKind::kNotEq}, {"<", CmpOpKind::kLt},
        {"<=", CmpOpKind::kLtE}, {">", CmpOpKind::kGt},     {">=", CmpOpKind::kGtE},
    };
    for (const auto& [text, kind] : kOps) {
      if (t.text == text) return {kind, 1};
    }
    return {};
  }
  if (t.IsKeyword("in")) return {CmpOpKind::kIn, 1};
  if (t.IsKeyword("not") && Ahead(1).IsKeyword("in")) return {CmpOpKind::kNotIn, 2};
  if (t.IsKeyword("is")) {
    if (Ahead(1).IsKeyword("not")) return {CmpOpKind::kIsNot, 2};
    return {CmpOpKind::kIs, 1};
  }
  return {};
}

absl::StatusOr<ExprPtr> Parser::ParseComparison() {
  SourceLoc loc = Cur().loc;
  PARSER_ASSIGN_OR_RETURN(ExprPtr left, ParseBitOr());
  CmpOpMatch op = CmpOpHere();
  if (op.tokens == 0) return left;
  auto c = std::make_unique<CompareExpr>(loc, std::move(left));
  while (op.tokens > 0) {
    c->ops.push_back(op.kind);
    c->op_locs.push_back(Cur().loc);
    for (int i = 0; i < op.tokens; ++i) Advance();
    PARSER_ASSIGN_OR_RETURN(ExprPtr right, ParseBitOr());
    c->comparators.push_back(std::move(right));
    op = CmpOpHere();
  }
  return ExprPtr(std::move(c));
}

std::optional<BinOpKind> Parser::BinOpAt(const Token& t, int level) {
  if (t.kind != TokenKind::kOp) return std::nullopt;
  const std::string& s = t.text;
  switch (level) {
    case 0:
      if (s == "|") return BinOpKind::kBitOr;
      break;
    case 1:
      if (s == "^") return BinOpKind::kBitXor;
      break;
    case 2:
      if (s == "&") return BinOpKind::kBitAnd;
      break;
    case 3:
      if (s == "<<") return BinOpKind::kLShift;
      if (s == ">>") return BinOpKind::kRShift;
      break;
    case 4:
      if (s == "+") return BinOpKind::kAdd;
      if (s == "-") return BinOpKind::kSub;
      break;
    case 5:
      if (s == "*") return BinOpKind::kMul;
      if (s == "@") return BinOpKind::kMatMul;
      if (s == "/") return BinOpKind::kDiv;
      if (s == "//") return BinOpKind::kFloorDiv;
      if (s == "%") return BinOpKind::kMod;
      break;
    default: break;
  }
  return std::nullopt;
}

absl::StatusOr<ExprPtr> Parser::ParseBinary(int level) {
  if (level == kNumBinaryLevels) return ParseFactor();
  SourceLoc loc = Cur().loc;
  PARSER_ASSIGN_OR_RETURN(ExprPtr lhs, ParseBinary(level + 1));
  while (std::optional<BinOpKind> op = BinOpAt(Cur(), level)) {
    SourceLoc op_loc = Cur().loc;
    Advance();
    PARSER_ASSIGN_OR_RETURN(ExprPtr rhs, ParseBinary(level + 1));
    lhs = std::make_unique<BinOpExpr>(loc, *op, op_loc, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

absl::StatusOr<ExprPtr> Parser::ParseFactor() {
  std::optional<UnaryOpKind> op;
  if (AtOp("-")) op = UnaryOpKind::kNeg;
  if (AtOp("+")) op = UnaryOpKind::kPos;
  if (AtOp("~")) op = UnaryOpKind::kInvert;
  if (!op) return ParsePower();
  DepthGuard guard(&depth_);
  PARSER_RETURN_IF_ERROR(CheckDepth());
  SourceLoc loc = Cur().loc;
  Advance();
  PARSER_ASSIGN_OR_RETURN(ExprPtr operand, ParseFactor());
  return ExprPtr(std::make_unique<UnaryOpExpr>(loc, *op, std::move(operand)));
}

absl::StatusOr<ExprPtr> Parser::ParsePower() {
  SourceLoc loc = Cur().loc;
  PARSER_ASSIGN_OR_RETURN(ExprPtr base, ParseAwaitPrimary());
  if (!AtOp("**")) return base;
  SourceLoc op_loc = Cur().loc;
  Advance();
  PARSER_ASSIGN_OR_RETURN(ExprPtr exponent, ParseFactor());
  return ExprPtr(std::make_unique<BinOpExpr>(loc, BinOpKind::kPow, op_loc, std::move(base),
                                             std::move(exponent)));
}

absl::StatusOr<ExprPtr> Parser::ParseAwaitPrimary() {
  if (!AtKw("await")) return ParsePrimary();
  SourceLoc loc = Cur().loc;
  Advance();
  PARSER_ASSIGN_OR_RETURN(ExprPtr value, ParsePrimary());
  return ExprPtr(std::make_unique<AwaitExpr>(loc, std::move(value)));
}

absl::StatusOr<ExprPtr> Parser::ParsePrimary() {
  SourceLoc loc = Cur().loc;  // of the atom, including a '(' around it
  PARSER_ASSIGN_OR_RETURN(ExprPtr e, ParseAtom());
  while (true) {
    if (AtOp(".")) {
      Advance();
      if (Cur().kind != TokenKind::kName) return Expected("attribute name after '.'");
      e = std::make_unique<AttributeExpr>(loc, std::move(e), Cur().text, Cur().loc);
      Advance();
    } else if (AtOp("(")) {
      SourceLoc lparen = Cur().loc;
      Advance();
      auto call = std::make_unique<CallExpr>(loc, std::move(e));
      call->lparen_loc = lparen;
      PARSER_RETURN_IF_ERROR(ParseArguments(&call->args, &call->keywords));
      e = std::move(call);
    } else if (AtOp("[")) {
      PARSER_ASSIGN_OR_RETURN(e, ParseSubscript(loc, std::move(e)));
    } else {
      return e;
    }
  }
}

absl::Status Parser::ParseArguments(std::vector<ExprPtr>* args, std::vector<Keyword>* keywords) {
  bool saw_keyword = false, saw_kwargs = false;
  std::set<std::string> names;
  while (!AtOp(")")) {
    SourceLoc loc = Cur().loc;
    if (AcceptOp("**")) {
      PARSER_ASSIGN_OR_RETURN(ExprPtr value, ParseTest());
      keywords->push_back(Keyword{loc, "", std::move(value)});
      saw_kwargs = true;
    } else if (AtOp("*")) {
      if (saw_kwargs) {
        return Error(loc, "iterable argument unpacking follows keyword argument unpacking");
      }
      Advance();
      PARSER_ASSIGN_OR_RETURN(ExprPtr value, ParseTest());
      args->push_back(std::make_unique<StarredExpr>(loc, std::move(value)));
    } else if (Cur().kind == TokenKind::kName && Ahead(1).IsOp("=")) {
      std::string name = Cur().text;
      if (!names.insert(name).second) return Error(loc, "keyword argument repeated: " + name);
      Advance();
      Advance();
      PARSER_ASSIGN_OR_RETURN(ExprPtr value, ParseTest());
      keywords->push_back(Keyword{loc, std::move(name), std::move(value)});
      saw_keyword = true;
    } else {
      PARSER_ASSIGN_OR_RETURN(ExprPtr value, ParseNamedExprTest());
      if (AtCompFor()) {
        bool alone = args->empty() && keywords->empty();
        PARSER_ASSIGN_OR_RETURN(value, ParseComprehension(loc, ComprehensionKind::kGenerator,
                                                          std::move(value), nullptr));
        if (!alone || !AtOp(")")) {
          return Error(loc, "generator expression must be parenthesized");
        }
      }
      if (AtOp("=")) {
        return Error(Cur().loc, "expression cannot contain assignment, perhaps you meant \"==\"?");
      }
      if (saw_kwargs) return Error(loc, "positional argument follows keyword argument unpacking");
      if (saw_keyword) return Error(loc, "positional argument follows keyword argument");
      args->push_back(std::move(value));
    }
    if (!AcceptOp(",")) break;
  }
  if (!AcceptOp(")")) return Expected("',' or ')' after argument");
  return absl::OkStatus();
}

absl::StatusOr<ExprPtr> Parser::ParseSubscript(SourceLoc loc, ExprPtr value) {
  auto s = std::make_unique<SubscriptExpr>(loc, std::move(value));
  s->lbracket_loc = Cur().loc;
  Advance();  // [
  while (true) {
    SubscriptItem item;
    item.loc = Cur().loc;
    ExprPtr first;
    if (!AtOp(":")) {
      PARSER_ASSIGN_OR_RETURN(first, AtOp("*") ? ParseStarred() : ParseNamedExprTest());
    }
    if (AtOp(":") && (first == nullptr || first->kind != ExprKind::kStarred)) {
      item.is_slice = true;
      item.lower = std::move(first);
      Advance();
      if (CanStartExpr() && !AtOp("*")) {
        PARSER_ASSIGN_OR_RETURN(item.upper, ParseTest());
      }
      if (AcceptOp(":")) {
        if (CanStartExpr() && !AtOp("*")) {
          PARSER_ASSIGN_OR_RETURN(item.step, ParseTest());
        }
      }
    } else {
      item.index = std::move(first);
    }
    s->items.push_back(std::move(item));
    if (!AcceptOp(",")) break;
    if (AtOp("]")) {
      s->trailing_comma = true;
      break;
    }
  }
  if (!AcceptOp("]")) return Expected("',' or ']' in subscript");
  return ExprPtr(std::move(s));
}

absl::StatusOr<ExprPtr> Parser::ParseYield() {
  auto y = std::make_unique<YieldExpr>(Cur().loc);
  Advance();
  if (AcceptKw("from")) {
    y->is_from = true;
    PARSER_ASSIGN_OR_RETURN(y->value, ParseTest());
  } else if (CanStartExpr()) {
    PARSER_ASSIGN_OR_RETURN(y->value, ParseTestListStarExpr());
  }
  return ExprPtr(std::move(y));
}

absl::StatusOr<ExprPtr> Parser::ParseAtom() {
  DepthGuard guard(&depth_);
  PARSER_RETURN_IF_ERROR(CheckDepth());
  const Token& t = Cur();
  SourceLoc loc = t.loc;
  switch (t.kind) {
    case TokenKind::kName: {
      auto n = std::make_unique<NameExpr>(loc, t.text);
      Advance();
      return ExprPtr(std::move(n));
    }
    case TokenKind::kInt: {
      auto c = std::make_unique<ConstantExpr>(loc, ConstantKind::kInt);
      c->int_value = t.int_value;
      c->int_overflows = t.int_overflows;
      if (t.int_overflows) c->str_value = t.text;
      Advance();
      return ExprPtr(std::move(c));
    }
    case TokenKind::kFloat:
    case TokenKind::kImaginary: {
      auto c = std::make_unique<ConstantExpr>(
          loc, t.kind == TokenKind::kFloat ? ConstantKind::kFloat : ConstantKind::kImaginary);
      c->float_value = t.float_value;
      Advance();
      return ExprPtr(std::move(c));
    }
    case TokenKind::kString: return ParseStrings();
    case TokenKind::kKeyword: {
      if (t.text == "None" || t.text == "True" || t.text == "False") {
        auto c = std::make_unique<ConstantExpr>(
            loc, t.text == "None" ? ConstantKind::kNone : ConstantKind::kBool);
        c->bool_value = t.text == "True";
        Advance();
        return ExprPtr(std::move(c));
      }
      if (t.text == "yield") {
        return Error(loc, "'yield' inside an expression must be parenthesized");
      }
      break;
    }
    case TokenKind::kOp: {
      if (t.text == "...") {
        Advance();
        return ExprPtr(std::make_unique<ConstantExpr>(loc, ConstantKind::kEllipsis));
      }
      if (t.text == "(") return ParseParenthesized();
      if (t.text == "[") return ParseListDisplay();
      if (t.text == "{") return ParseBraceDisplay();
      break;
    }
    default: break;
  }
  return Expected("expression");
}

absl::StatusOr<ExprPtr> Parser::ParseStrings() {
  SourceLoc loc = Cur().loc;
  bool bytes = Cur().is_bytes;
  auto c =
      std::make_unique<ConstantExpr>(loc, bytes ? ConstantKind::kBytes : ConstantKind::kString);
  while (Cur().kind == TokenKind::kString) {
    if (Cur().is_bytes != bytes) return Error(Cur().loc, "cannot mix bytes and nonbytes literals");
    c->str_value += Cur().str_value;
    c->is_fstring |= Cur().is_fstring;
    Advance();
  }
  return ExprPtr(std::move(c));
}

absl::StatusOr<ExprPtr> Parser::ParseParenthesized() {
  SourceLoc loc = Cur().loc;
  Advance();  // (
  if (AcceptOp(")")) {
    auto tuple = std::make_unique<TupleExpr>(loc);
    tuple->parenthesized = true;
    return ExprPtr(std::move(tuple));
  }
  if (AtKw("yield")) {
    PARSER_ASSIGN_OR_RETURN(ExprPtr y, ParseYield());
    if (!AcceptOp(")")) return Expected("')'");
    return y;
  }
  PARSER_ASSIGN_OR_RETURN(ExprPtr first, AtOp("*") ? ParseStarred() : ParseNamedExprTest());
  if (AtCompFor()) {
    PARSER_ASSIGN_OR_RETURN(ExprPtr gen, ParseComprehension(loc, ComprehensionKind::kGenerator,
                                                            std::move(first), nullptr));
    if (!AcceptOp(")")) return Expected("')' after generator expression");
    return gen;
  }
  if (AtOp(",")) {
    auto tuple = std::make_unique<TupleExpr>(loc);
    tuple->parenthesized = true;
    tuple->elts.push_back(std::move(first));
    PARSER_RETURN_IF_ERROR(ParseMoreElements(&tuple->elts, ")"));
    return ExprPtr(std::move(tuple));
  }
  if (!AcceptOp(")")) return Expected("',' or ')'");
  if (first->kind == ExprKind::kStarred) {
    return Error(first->loc, "cannot use starred expression here");
  }
  return first;
}

absl::Status Parser::ParseMoreElements(std::vector<ExprPtr>* elts, std::string_view close) {
  while (AcceptOp(",")) {
    if (AtOp(close)) break;
    PARSER_ASSIGN_OR_RETURN(ExprPtr e, AtOp("*") ? ParseStarred() : ParseNamedExprTest());
    elts->push_back(std::move(e));
  }
  if (!AcceptOp(close)) return Expected("',' or '" + std::string(close) + "'");
  return absl::OkStatus();
}

absl::StatusOr<ExprPtr> Parser::ParseListDisplay() {
  SourceLoc loc = Cur().loc;
  Advance();  // [
  auto list = std::make_unique<ListExpr>(loc);
  if (AcceptOp("]")) return ExprPtr(std::move(list));
  PARSER_ASSIGN_OR_RETURN(ExprPtr first, AtOp("*") ? ParseStarred() : ParseNamedExprTest());
  if (AtCompFor()) {
    PARSER_ASSIGN_OR_RETURN(
        ExprPtr comp, ParseComprehension(loc, ComprehensionKind::kList, std::move(first), nullptr));
    if (!AcceptOp("]")) return Expected("']' after list comprehension");
    return comp;
  }
  list->elts.push_back(std::move(first));
  PARSER_RETURN_IF_ERROR(ParseMoreElements(&list->elts, "]"));
  return ExprPtr(std::move(list));
}

absl::StatusOr<ExprPtr> Parser::ParseBraceDisplay() {
  SourceLoc loc = Cur().loc;
  Advance();  // {
  if (AcceptOp("}")) return ExprPtr(std::make_unique<DictExpr>(loc));
  ExprPtr key, value;
  if (AcceptOp("**")) {
    PARSER_ASSIGN_OR_RETURN(value, ParseBitOr());
  } else {
    PARSER_ASSIGN_OR_RETURN(key, AtOp("*") ? ParseStarred() : ParseNamedExprTest());
    if (!AtOp(":") || key->kind == ExprKind::kStarred) {
      // A set.
      if (AtCompFor()) {
        PARSER_ASSIGN_OR_RETURN(ExprPtr comp, ParseComprehension(loc, ComprehensionKind::kSet,
                                                                 std::move(key), nullptr));
        if (!AcceptOp("}")) return Expected("'}' after set comprehension");
        return comp;
      }
      auto set = std::make_unique<SetExpr>(loc);
      set->elts.push_back(std::move(key));
      PARSER_RETURN_IF_ERROR(ParseMoreElements(&set->elts, "}"));
      return ExprPtr(std::move(set));
    }
    Advance();  // :
    PARSER_ASSIGN_OR_RETURN(value, ParseTest());
    if (AtCompFor()) {
      PARSER_ASSIGN_OR_RETURN(ExprPtr comp, ParseComprehension(loc, ComprehensionKind::kDict,
                                                               std::move(key), std::move(value)));
      if (!AcceptOp("}")) return Expected("'}' after dict comprehension");
      return comp;
    }
  }
  auto dict = std::make_unique<DictExpr>(loc);
  dict->keys.push_back(std::move(key));
  dict->values.push_back(std::move(value));
  while (AcceptOp(",")) {
    if (AtOp("}")) break;
    ExprPtr k, v;
    if (AcceptOp("**")) {
      PARSER_ASSIGN_OR_RETURN(v, ParseBitOr());
    } else {
      PARSER_ASSIGN_OR_RETURN(k, ParseTest());
      PARSER_RETURN_IF_ERROR(ExpectOp(":", "expected ':' after dictionary key"));
      PARSER_ASSIGN_OR_RETURN(v, ParseTest());
    }
    dict->keys.push_back(std::move(k));
    dict->values.push_back(std::move(v));
  }
  if (!AcceptOp("}")) return Expected("',' or '}'");
  return ExprPtr(std::move(dict));
}

absl::StatusOr<ExprPtr> Parser::ParseComprehension(SourceLoc loc, ComprehensionKind kind,
                                                   ExprPtr element, ExprPtr value) {
  if (element->kind == ExprKind::kStarred) {
    return Error(element->loc, "iterable unpacking cannot be used in comprehension");
  }
  auto c = std::make_unique<ComprehensionExpr>(loc, kind);
  c->element = std::move(element);
  c->value = std::move(value);
  while (AtCompFor()) {
    ComprehensionFor g;
    g.loc = Cur().loc;
    g.is_async = AcceptKw("async");
    Advance();  // for
    PARSER_ASSIGN_OR_RETURN(g.target, ParseTargetList());
    PARSER_RETURN_IF_ERROR(CheckTarget(*g.target, TargetUse::kComprehension));
    if (!AcceptKw("in")) return Expected("'in' after 'for' target");
    PARSER_ASSIGN_OR_RETURN(g.iter, ParseOrTest());
    while (AcceptKw("if")) {
      PARSER_ASSIGN_OR_RETURN(ExprPtr cond, ParseOrTest());
      g.ifs.push_back(std::move(cond));
    }
    c->generators.push_back(std::move(g));
  }
  return ExprPtr(std::move(c));
}

}  // namespace tilec::frontend::parser_internal
