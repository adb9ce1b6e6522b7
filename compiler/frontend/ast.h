// The syntax tree of a TileLang source file (Python syntax).
//
// The parser (parser.h) builds it for the whole file, host code included; the
// builder later evaluates only the kernel-building function it is asked for.
// The node set follows Python's `ast` module closely, so every construct that
// appears in ordinary Python files has a node, even those that a kernel may not
// use (comprehensions, lambdas, classes, try ...): the builder reports those
// with their location instead of the parser rejecting the file.
//
// Ownership: a tree owns its children through std::unique_ptr (ExprPtr,
// StmtPtr); the Module owns the whole tree. Nodes are plain structs with a kind
// tag; `as<T>()` downcasts (nullptr on a kind mismatch). Optional children are
// null pointers. Nodes are not copyable; the tree is built once and then read.
//
// Locations: every node has `loc`, the location of its first character
// (for `a.b`, `a[i]`, `f(x)` and binary operators that is the start of the
// left operand, or the '(' when the left operand is parenthesized). Operators also record `op_loc`,
// the location of the operator token itself; attributes record where the attribute name starts.
#ifndef TILEC_COMPILER_FRONTEND_AST_H_
#define TILEC_COMPILER_FRONTEND_AST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/frontend/source.h"

namespace tilec::frontend {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

// ---------------------------------------------------------------------------
// Expressions

enum class ExprKind : uint8_t {
  kName,           // x
  kConstant,       // 1, 2.5, True, None, "s", ...
  kAttribute,      // a.b
  kSubscript,      // a[i, lo:hi]
  kCall,           // f(x, *xs, k=v, **kw)
  kBinOp,          // a + b
  kUnaryOp,        // -a, not a
  kBoolOp,         // a and b and c
  kCompare,        // a < b <= c
  kIfExp,          // a if c else b
  kTuple,          // (a, b), a, b
  kList,           // [a, b]
  kSet,            // {a, b}
  kDict,           // {k: v, **d}
  kLambda,         // lambda x: x + 1
  kComprehension,  // [x for x in y], (x for ...), {x for ...}, {k: v for ...}
  kStarred,        // *a (call argument, assignment target, display element)
  kNamedExpr,      // (x := v)
  kYield,          // yield x, yield from x
  kAwait,          // await x
};

struct Expr {
  const ExprKind kind;
  SourceLoc loc;

  virtual ~Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;

  template <typename T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }
  template <typename T>
  T* as() {
    return kind == T::kKind ? static_cast<T*>(this) : nullptr;
  }

 protected:
  Expr(ExprKind k, SourceLoc l) : kind(k), loc(l) {}
};

struct NameExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kName;
  std::string id;
  NameExpr(SourceLoc l, std::string i) : Expr(kKind, l), id(std::move(i)) {}
};

enum class ConstantKind : uint8_t {
  kNone,
  kBool,
  kInt,        // int_value; int_overflows when the literal does not fit int64
  kFloat,      // float_value
  kImaginary,  // 2j: float_value is the imaginary part
  kString,     // str_value (escapes decoded); f-strings are kept opaque, see below
  kBytes,      // str_value holds the bytes
  kEllipsis,   // ...
};

struct ConstantExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kConstant;
  ConstantKind value_kind = ConstantKind::kNone;
  bool bool_value = false;
  int64_t int_value = 0;
  // The integer literal is larger than int64 (Python allows it); int_value is
  // then 0 and str_value holds the literal as written.
  bool int_overflows = false;
  double float_value = 0;
  std::string str_value;
  // An f-string (or an implicit concatenation that contains one). str_value
  // then holds the raw text between the quotes, replacement fields unparsed.
  bool is_fstring = false;
  ConstantExpr(SourceLoc l, ConstantKind k) : Expr(kKind, l), value_kind(k) {}
};

struct AttributeExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kAttribute;
  ExprPtr value;
  std::string attr;
  SourceLoc attr_loc;  // where the attribute name starts
  AttributeExpr(SourceLoc l, ExprPtr v, std::string a, SourceLoc al)
      : Expr(kKind, l), value(std::move(v)), attr(std::move(a)), attr_loc(al) {}
};

// One item between the brackets of a subscript: either an expression
// (`a[i]`, `a[*idx]` as a Starred) or a slice `lower:upper:step` where each
// part may be absent (null).
struct SubscriptItem {
  SourceLoc loc;
  bool is_slice = false;
  ExprPtr index;               // when !is_slice
  ExprPtr lower, upper, step;  // when is_slice; each may be null
};

struct SubscriptExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kSubscript;
  ExprPtr value;
  std::vector<SubscriptItem> items;  // at least one
  // `a[i,]`: a one-element tuple index rather than a plain index.
  bool trailing_comma = false;
  SourceLoc lbracket_loc;
  SubscriptExpr(SourceLoc l, ExprPtr v) : Expr(kKind, l), value(std::move(v)) {}
};

// A keyword argument `name=value`, or `**value` when name is empty.
struct Keyword {
  SourceLoc loc;
  std::string name;
  ExprPtr value;
};

struct CallExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kCall;
  ExprPtr func;
  // Positional arguments in order; `*xs` appears as a StarredExpr. A lone
  // generator argument `f(x for x in y)` is a ComprehensionExpr.
  std::vector<ExprPtr> args;
  std::vector<Keyword> keywords;  // in order; `**kw` has an empty name
  SourceLoc lparen_loc;
  CallExpr(SourceLoc l, ExprPtr f) : Expr(kKind, l), func(std::move(f)) {}
};

enum class BinOpKind : uint8_t {
  kAdd,       // +
  kSub,       // -
  kMul,       // *
  kMatMul,    // @
  kDiv,       // /
  kFloorDiv,  // //
  kMod,       // %
  kPow,       // **
  kLShift,    // <<
  kRShift,    // >>
  kBitOr,     // |
  kBitXor,    // ^
  kBitAnd,    // &
};
std::string_view BinOpSymbol(BinOpKind op);  // "+", "//", ...

struct BinOpExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kBinOp;
  BinOpKind op;
  SourceLoc op_loc;
  ExprPtr lhs, rhs;
  BinOpExpr(SourceLoc l, BinOpKind o, SourceLoc ol, ExprPtr a, ExprPtr b)
      : Expr(kKind, l), op(o), op_loc(ol), lhs(std::move(a)), rhs(std::move(b)) {}
};

enum class UnaryOpKind : uint8_t { kNeg, kPos, kNot, kInvert };  // - + not ~
std::string_view UnaryOpSymbol(UnaryOpKind op);                  // "-", "+", "not", "~"

struct UnaryOpExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kUnaryOp;
  UnaryOpKind op;
  ExprPtr operand;  // loc is the operator's location
  UnaryOpExpr(SourceLoc l, UnaryOpKind o, ExprPtr a)
      : Expr(kKind, l), op(o), operand(std::move(a)) {}
};

enum class BoolOpKind : uint8_t { kAnd, kOr };

// `a and b and c` is one node with three values.
struct BoolOpExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kBoolOp;
  BoolOpKind op;
  std::vector<ExprPtr> values;     // at least two
  std::vector<SourceLoc> op_locs;  // values.size() - 1 operator locations
  BoolOpExpr(SourceLoc l, BoolOpKind o) : Expr(kKind, l), op(o) {}
};

enum class CmpOpKind : uint8_t { kEq, kNotEq, kLt, kLtE, kGt, kGtE, kIs, kIsNot, kIn, kNotIn };
std::string_view CmpOpSymbol(CmpOpKind op);  // "==", "is not", "not in", ...

// `a < b <= c`: left = a, ops = [<, <=], comparators = [b, c].
struct CompareExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kCompare;
  ExprPtr left;
  std::vector<CmpOpKind> ops;
  std::vector<SourceLoc> op_locs;
  std::vector<ExprPtr> comparators;  // same size as ops
  CompareExpr(SourceLoc l, ExprPtr a) : Expr(kKind, l), left(std::move(a)) {}
};

// `body if test else orelse`
struct IfExpExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kIfExp;
  ExprPtr test, body, orelse;
  IfExpExpr(SourceLoc l, ExprPtr t, ExprPtr b, ExprPtr o)
      : Expr(kKind, l), test(std::move(t)), body(std::move(b)), orelse(std::move(o)) {}
};

struct TupleExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kTuple;
  std::vector<ExprPtr> elts;  // a StarredExpr for `*x`
  bool parenthesized = false;
  explicit TupleExpr(SourceLoc l) : Expr(kKind, l) {}
};

struct ListExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kList;
  std::vector<ExprPtr> elts;
  explicit ListExpr(SourceLoc l) : Expr(kKind, l) {}
};

struct SetExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kSet;
  std::vector<ExprPtr> elts;
  explicit SetExpr(SourceLoc l) : Expr(kKind, l) {}
};

// {k: v, **d}: keys[i] is null for a `**values[i]` entry.
struct DictExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kDict;
  std::vector<ExprPtr> keys;
  std::vector<ExprPtr> values;
  explicit DictExpr(SourceLoc l) : Expr(kKind, l) {}
};

// Function parameters, in source order. The `/` and `*` markers are not
// entries of their own: they set the kind of the parameters around them.
enum class ParamKind : uint8_t {
  kPositionalOnly,  // before `/`
  kNormal,          // positional or keyword
  kVarArgs,         // *args
  kKeywordOnly,     // after `*` or `*args`
  kVarKeywords,     // **kwargs
};

struct Param {
  SourceLoc loc;
  std::string name;
  ParamKind kind = ParamKind::kNormal;
  ExprPtr annotation;     // may be null
  ExprPtr default_value;  // may be null
};

struct LambdaExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kLambda;
  std::vector<Param> params;  // never annotated
  ExprPtr body;
  explicit LambdaExpr(SourceLoc l) : Expr(kKind, l) {}
};

// `for target in iter if cond1 if cond2` inside a comprehension.
struct ComprehensionFor {
  SourceLoc loc;  // of `for` (or `async`)
  ExprPtr target;
  ExprPtr iter;
  std::vector<ExprPtr> ifs;
  bool is_async = false;
};

enum class ComprehensionKind : uint8_t { kList, kSet, kDict, kGenerator };
std::string_view ComprehensionKindName(ComprehensionKind k);  // "list comprehension", ...

struct ComprehensionExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kComprehension;
  ComprehensionKind comp_kind;
  ExprPtr element;                           // the key for a dict comprehension
  ExprPtr value;                             // dict comprehension only
  std::vector<ComprehensionFor> generators;  // at least one
  ComprehensionExpr(SourceLoc l, ComprehensionKind k) : Expr(kKind, l), comp_kind(k) {}
};

struct StarredExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kStarred;
  ExprPtr value;  // loc is the `*`
  StarredExpr(SourceLoc l, ExprPtr v) : Expr(kKind, l), value(std::move(v)) {}
};

// `target := value`
struct NamedExprExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kNamedExpr;
  ExprPtr target;  // a NameExpr
  ExprPtr value;
  NamedExprExpr(SourceLoc l, ExprPtr t, ExprPtr v)
      : Expr(kKind, l), target(std::move(t)), value(std::move(v)) {}
};

struct YieldExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kYield;
  ExprPtr value;  // may be null
  bool is_from = false;
  explicit YieldExpr(SourceLoc l) : Expr(kKind, l) {}
};

struct AwaitExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kAwait;
  ExprPtr value;
  AwaitExpr(SourceLoc l, ExprPtr v) : Expr(kKind, l), value(std::move(v)) {}
};

// ---------------------------------------------------------------------------
// Statements

enum class StmtKind : uint8_t {
  kFunctionDef,
  kClassDef,
  kReturn,
  kDelete,
  kAssign,
  kAugAssign,
  kAnnAssign,
  kFor,
  kWhile,
  kIf,
  kWith,
  kRaise,
  kTry,
  kAssert,
  kImport,
  kImportFrom,
  kGlobal,
  kNonlocal,
  kExpr,
  kPass,
  kBreak,
  kContinue,
};

struct Stmt {
  const StmtKind kind;
  SourceLoc loc;  // the first character of the statement (the `def` after decorators)

  virtual ~Stmt() = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  template <typename T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }
  template <typename T>
  T* as() {
    return kind == T::kKind ? static_cast<T*>(this) : nullptr;
  }

 protected:
  Stmt(StmtKind k, SourceLoc l) : kind(k), loc(l) {}
};

struct FunctionDefStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kFunctionDef;
  std::string name;
  SourceLoc name_loc;
  std::vector<ExprPtr> decorators;  // `@tilelang.jit(out_idx=[-1])` is a CallExpr
  std::vector<Param> params;
  ExprPtr returns;  // `-> T`, may be null
  StmtList body;
  bool is_async = false;
  explicit FunctionDefStmt(SourceLoc l) : Stmt(kKind, l) {}
};

struct ClassDefStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kClassDef;
  std::string name;
  SourceLoc name_loc;
  std::vector<ExprPtr> decorators;
  std::vector<ExprPtr> bases;
  std::vector<Keyword> keywords;  // metaclass=..., **kw
  StmtList body;
  explicit ClassDefStmt(SourceLoc l) : Stmt(kKind, l) {}
};

struct ReturnStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kReturn;
  ExprPtr value;  // may be null; `return a, b` is a TupleExpr
  explicit ReturnStmt(SourceLoc l) : Stmt(kKind, l) {}
};

struct DeleteStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kDelete;
  std::vector<ExprPtr> targets;
  explicit DeleteStmt(SourceLoc l) : Stmt(kKind, l) {}
};

// `t1 = t2 = value`: targets = [t1, t2]. Tuple unpacking `a, b = v` has a
// TupleExpr (or ListExpr) target.
struct AssignStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kAssign;
  std::vector<ExprPtr> targets;  // at least one
  ExprPtr value;
  explicit AssignStmt(SourceLoc l) : Stmt(kKind, l) {}
};

// `target op= value`
struct AugAssignStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kAugAssign;
  ExprPtr target;
  BinOpKind op;
  SourceLoc op_loc;
  ExprPtr value;
  AugAssignStmt(SourceLoc l, BinOpKind o) : Stmt(kKind, l), op(o) {}
};

// `target: annotation` or `target: annotation = value`, e.g. the parameter
// declarations `A: T.Tensor((M, K), dtype)` of the eager style.
struct AnnAssignStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kAnnAssign;
  ExprPtr target;
  ExprPtr annotation;
  ExprPtr value;  // may be null
  explicit AnnAssignStmt(SourceLoc l) : Stmt(kKind, l) {}
};

struct ForStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kFor;
  ExprPtr target;  // a NameExpr, or a TupleExpr for `for i, j in ...`
  ExprPtr iter;
  StmtList body;
  StmtList orelse;
  bool is_async = false;
  explicit ForStmt(SourceLoc l) : Stmt(kKind, l) {}
};

struct WhileStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kWhile;
  ExprPtr test;
  StmtList body;
  StmtList orelse;
  explicit WhileStmt(SourceLoc l) : Stmt(kKind, l) {}
};

// `elif` is an IfStmt (with is_elif set) that is the only statement of the
// enclosing IfStmt's orelse.
struct IfStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kIf;
  ExprPtr test;
  StmtList body;
  StmtList orelse;
  bool is_elif = false;
  explicit IfStmt(SourceLoc l) : Stmt(kKind, l) {}
};

// `context as target`; `with T.Kernel(...) as (bx, by):` has a TupleExpr target.
struct WithItem {
  SourceLoc loc;
  ExprPtr context;
  ExprPtr target;  // may be null
};

struct WithStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kWith;
  std::vector<WithItem> items;  // at least one
  StmtList body;
  bool is_async = false;
  explicit WithStmt(SourceLoc l) : Stmt(kKind, l) {}
};

struct RaiseStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kRaise;
  ExprPtr exc;    // may be null (re-raise)
  ExprPtr cause;  // `from cause`, may be null
  explicit RaiseStmt(SourceLoc l) : Stmt(kKind, l) {}
};

struct ExceptHandler {
  SourceLoc loc;
  ExprPtr type;      // may be null (bare except)
  std::string name;  // `as name`, may be empty
  StmtList body;
  bool is_star = false;  // except*
};

struct TryStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kTry;
  StmtList body;
  std::vector<ExceptHandler> handlers;
  StmtList orelse;
  StmtList finalbody;
  explicit TryStmt(SourceLoc l) : Stmt(kKind, l) {}
};

struct AssertStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kAssert;
  ExprPtr test;
  ExprPtr msg;  // may be null
  explicit AssertStmt(SourceLoc l) : Stmt(kKind, l) {}
};

// `import a.b as c`: name "a.b", asname "c". `from m import *` has name "*".
struct ImportAlias {
  SourceLoc loc;
  std::string name;
  std::string asname;  // may be empty
};

struct ImportStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kImport;
  std::vector<ImportAlias> names;
  explicit ImportStmt(SourceLoc l) : Stmt(kKind, l) {}
};

// `from ..pkg.mod import a as b`: module "pkg.mod", level 2.
struct ImportFromStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kImportFrom;
  std::string module;  // may be empty (`from . import x`)
  int level = 0;       // number of leading dots
  std::vector<ImportAlias> names;
  explicit ImportFromStmt(SourceLoc l) : Stmt(kKind, l) {}
};

struct GlobalStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kGlobal;
  std::vector<std::string> names;
  explicit GlobalStmt(SourceLoc l) : Stmt(kKind, l) {}
};

struct NonlocalStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kNonlocal;
  std::vector<std::string> names;
  explicit NonlocalStmt(SourceLoc l) : Stmt(kKind, l) {}
};

// An expression evaluated for its effect: `T.copy(A, B)`, a docstring.
struct ExprStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kExpr;
  ExprPtr value;
  ExprStmt(SourceLoc l, ExprPtr v) : Stmt(kKind, l), value(std::move(v)) {}
};

struct PassStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kPass;
  explicit PassStmt(SourceLoc l) : Stmt(kKind, l) {}
};

struct BreakStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kBreak;
  explicit BreakStmt(SourceLoc l) : Stmt(kKind, l) {}
};

struct ContinueStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::kContinue;
  explicit ContinueStmt(SourceLoc l) : Stmt(kKind, l) {}
};

// ---------------------------------------------------------------------------
// Module

struct Module {
  SourceFile source;  // the file the tree was parsed from
  StmtList body;      // top-level statements in order

  // The last top-level `def name` (as Python rebinds the name), or null.
  // Functions nested in classes, other functions or `if` blocks are not found.
  const FunctionDefStmt* FindFunction(std::string_view name) const;
  // All top-level function definitions, in source order.
  std::vector<const FunctionDefStmt*> Functions() const;
};

// A compact, deterministic text form of the tree, one statement per line,
// indented two spaces per block, expressions in prefix form, e.g.
//   def f(a, b=2):
//     return (BinOp + (Name a) (Name b))
// Locations are not printed. For tests and debugging; the format may change.
std::string DumpAst(const Module& module);
std::string DumpExpr(const Expr& expr);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_AST_H_
