// Internals of the parser, shared by parser.cc (statements) and
// parser_expr.cc (expressions). Not part of the frontend's interface: include
// parser.h instead.
#ifndef TILEC_COMPILER_FRONTEND_PARSER_INTERNAL_H_
#define TILEC_COMPILER_FRONTEND_PARSER_INTERNAL_H_

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/frontend/ast.h"
#include "compiler/frontend/lexer.h"
#include "compiler/frontend/source.h"

// Error propagation inside this file.
#define PARSER_CONCAT_INNER(a, b) a##b
#define PARSER_CONCAT(a, b) PARSER_CONCAT_INNER(a, b)
#define PARSER_RETURN_IF_ERROR(expr)               \
  do {                                             \
    absl::Status parser_status = (expr);           \
    if (!parser_status.ok()) return parser_status; \
  } while (0)
#define PARSER_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(*tmp)
#define PARSER_ASSIGN_OR_RETURN(lhs, expr) \
  PARSER_ASSIGN_OR_RETURN_IMPL(PARSER_CONCAT(parser_or_, __LINE__), lhs, expr)

namespace tilec::frontend::parser_internal {

// Each bracket level costs two units (the atom and the expression inside it);
// unary operator chains and lambda/if-else chains one unit per operator.
inline constexpr int kMaxExprDepth = 450;

enum class TargetUse { kAssign, kDelete, kFor, kWith, kComprehension };

// A recursive-descent parser over the token list of one file, following
// Python's grammar and operator precedence. Each Parse* method starts at the
// current token and leaves the token after what it parsed current; on error it
// returns a SourceError and the position is unspecified.
class Parser {
 public:
  Parser(const SourceFile& file, std::vector<Token> tokens)
      : file_(file), toks_(std::move(tokens)) {}

  absl::StatusOr<StmtList> ParseFile();
  // The whole input as one expression (a bare tuple allowed).
  absl::StatusOr<ExprPtr> ParseSingleExpression();

 private:
  // ---- tokens -------------------------------------------------------------

  const Token& Cur() const { return toks_[pos_]; }
  const Token& Ahead(size_t n) const { return toks_[std::min(pos_ + n, toks_.size() - 1)]; }
  const Token& Prev() const { return toks_[pos_ > 0 ? pos_ - 1 : 0]; }
  void Advance() {
    if (pos_ + 1 < toks_.size()) ++pos_;
  }
  bool AtOp(std::string_view op) const { return Cur().IsOp(op); }
  bool AtKw(std::string_view kw) const { return Cur().IsKeyword(kw); }
  bool AcceptOp(std::string_view op) {
    if (!AtOp(op)) return false;
    Advance();
    return true;
  }
  bool AcceptKw(std::string_view kw) {
    if (!AtKw(kw)) return false;
    Advance();
    return true;
  }
  bool AtLineEnd() const {
    TokenKind k = Cur().kind;
    return k == TokenKind::kNewline || k == TokenKind::kEndOfFile || k == TokenKind::kIndent ||
           k == TokenKind::kDedent;
  }
  bool AtStmtEnd() const { return AtLineEnd() || AtOp(";"); }
  bool AtCompFor() const { return AtKw("for") || (AtKw("async") && Ahead(1).IsKeyword("for")); }

  // Whether the current token can begin an expression (or a starred item).
  bool CanStartExpr() const {
    const Token& t = Cur();
    switch (t.kind) {
      case TokenKind::kName:
      case TokenKind::kInt:
      case TokenKind::kFloat:
      case TokenKind::kImaginary:
      case TokenKind::kString: return true;
      case TokenKind::kKeyword:
        return t.text == "None" || t.text == "True" || t.text == "False" || t.text == "not" ||
               t.text == "lambda" || t.text == "await";
      case TokenKind::kOp:
        return t.text == "(" || t.text == "[" || t.text == "{" || t.text == "-" || t.text == "+" ||
               t.text == "~" || t.text == "*" || t.text == "...";
      default: return false;
    }
  }

  absl::Status Error(SourceLoc loc, std::string_view message) const {
    return SourceError(file_, loc, message);
  }
  // Where a missing token belongs: just after the previous token when the
  // line ends here, else at the current token.
  SourceLoc MissingLoc() const { return AtLineEnd() && pos_ > 0 ? Prev().end : Cur().loc; }
  absl::Status Expected(std::string_view what) const {
    if (AtLineEnd()) return Error(MissingLoc(), "expected " + std::string(what));
    return Error(Cur().loc, "expected " + std::string(what) + ", found " + DescribeToken(Cur()));
  }
  absl::Status ExpectOp(std::string_view op, std::string_view message) {
    if (AcceptOp(op)) return absl::OkStatus();
    return Error(MissingLoc(), message);
  }

  struct DepthGuard {
    explicit DepthGuard(int* d) : depth(d) { ++*depth; }
    ~DepthGuard() { --*depth; }
    int* depth;
  };
  absl::Status CheckDepth() const {
    if (depth_ > kMaxExprDepth) return Error(Cur().loc, "expression is too deeply nested");
    return absl::OkStatus();
  }

  // ---- statements ---------------------------------------------------------

  absl::Status ParseStatement(StmtList* out);
  absl::Status Push(StmtList* out, absl::StatusOr<StmtPtr> s);

  // `match x:` NEWLINE INDENT `case ...`: the only shape in which a line
  // starting with the soft keyword `match` is a match statement.
  bool IsMatchStatement() const;
  absl::Status ParseSimpleStatements(StmtList* out);

  // The body after a compound statement's ':'. `what` names the statement in
  // "expected an indented block after 'for' statement on line 3".
  absl::StatusOr<StmtList> ParseBlock(std::string_view what, int header_line);
  absl::Status ParseDecorated(StmtList* out);
  absl::StatusOr<StmtPtr> ParseFunctionDef(SourceLoc loc, bool is_async,
                                           std::vector<ExprPtr> decorators);

  // Parameters up to (not including) `end`: ")" for def, ":" for lambda.
  absl::Status ParseParams(std::string_view end, bool annotations, std::vector<Param>* out);
  absl::StatusOr<StmtPtr> ParseClassDef(SourceLoc loc, std::vector<ExprPtr> decorators);
  absl::StatusOr<StmtPtr> ParseIf();
  absl::StatusOr<StmtList> ParseElse();
  absl::StatusOr<StmtPtr> ParseWhile();
  absl::StatusOr<StmtPtr> ParseFor(SourceLoc loc, bool is_async);
  absl::StatusOr<StmtPtr> ParseWith(SourceLoc loc, bool is_async);
  absl::Status ParseWithItems(std::vector<WithItem>* items, bool parenthesized);
  absl::StatusOr<StmtPtr> ParseTry();
  absl::StatusOr<StmtPtr> ParseSmallStatement();
  template <typename T>
  absl::StatusOr<StmtPtr> Simple(SourceLoc loc) {
    Advance();
    return StmtPtr(std::make_unique<T>(loc));
  }

  absl::StatusOr<StmtPtr> ParseGlobal(bool global);

  // a.b.c
  absl::StatusOr<std::string> ParseDottedName(std::string_view context);
  absl::StatusOr<StmtPtr> ParseImport();
  absl::StatusOr<StmtPtr> ParseImportFrom();
  absl::StatusOr<ExprPtr> ParseYieldOrTestList() {
    if (AtKw("yield")) return ParseYield();
    return ParseTestListStarExpr();
  }

  absl::StatusOr<StmtPtr> ParseExprStatement();
  absl::Status CheckTarget(const Expr& e, TargetUse use, bool nested = false);

  // ---- expressions --------------------------------------------------------

  // `a, *b, c` (a tuple when there is a comma) or a single expression.
  absl::StatusOr<ExprPtr> ParseTestListStarExpr();
  absl::StatusOr<ExprPtr> ParseTestOrStar() {
    if (AtOp("*")) return ParseStarred();
    return ParseTest();
  }

  absl::StatusOr<ExprPtr> ParseStarred();

  // Targets of `for` and comprehensions: `i`, `i, j`, `(i, j)`, `*rest`.
  absl::StatusOr<ExprPtr> ParseTargetList();

  // `name := value` or a plain expression.
  absl::StatusOr<ExprPtr> ParseNamedExprTest();
  absl::StatusOr<ExprPtr> ParseTest();
  absl::StatusOr<ExprPtr> ParseLambda();
  absl::StatusOr<ExprPtr> ParseOrTest() { return ParseBoolOp(BoolOpKind::kOr); }

  absl::StatusOr<ExprPtr> ParseBoolOp(BoolOpKind kind);
  absl::StatusOr<ExprPtr> ParseNotTest();

  // The comparison operator at the current token, and how many tokens it
  // spans (0 when there is none).
  struct CmpOpMatch {
    CmpOpKind kind = CmpOpKind::kEq;
    int tokens = 0;
  };
  CmpOpMatch CmpOpHere() const;
  absl::StatusOr<ExprPtr> ParseComparison();

  // Binary operator levels from loosest to tightest; all left-associative.
  static std::optional<BinOpKind> BinOpAt(const Token& t, int level);
  static constexpr int kNumBinaryLevels = 6;
  absl::StatusOr<ExprPtr> ParseBitOr() { return ParseBinary(0); }

  absl::StatusOr<ExprPtr> ParseBinary(int level);
  absl::StatusOr<ExprPtr> ParseFactor();

  // `a ** b` binds tighter than a unary minus on its left, looser on its
  // right: -a ** -b == -(a ** (-b)).
  absl::StatusOr<ExprPtr> ParsePower();
  absl::StatusOr<ExprPtr> ParseAwaitPrimary();
  absl::StatusOr<ExprPtr> ParsePrimary();

  // Call arguments after the '(' up to and including the ')'.
  absl::Status ParseArguments(std::vector<ExprPtr>* args, std::vector<Keyword>* keywords);
  // `value[...]` where `loc` is where `value` starts.
  absl::StatusOr<ExprPtr> ParseSubscript(SourceLoc loc, ExprPtr value);
  absl::StatusOr<ExprPtr> ParseYield();
  absl::StatusOr<ExprPtr> ParseAtom();

  // Adjacent string literals concatenate.
  absl::StatusOr<ExprPtr> ParseStrings();
  absl::StatusOr<ExprPtr> ParseParenthesized();

  // After the first element of a display: `, b, c` up to and including `close`.
  absl::Status ParseMoreElements(std::vector<ExprPtr>* elts, std::string_view close);
  absl::StatusOr<ExprPtr> ParseListDisplay();
  absl::StatusOr<ExprPtr> ParseBraceDisplay();

  // The `for ... in ... if ...` clauses after the element of a comprehension.
  absl::StatusOr<ExprPtr> ParseComprehension(SourceLoc loc, ComprehensionKind kind, ExprPtr element,
                                             ExprPtr value);
  const SourceFile& file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace tilec::frontend::parser_internal

#endif  // TILEC_COMPILER_FRONTEND_PARSER_INTERNAL_H_
