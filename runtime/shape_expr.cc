#include "runtime/shape_expr.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "absl/strings/str_cat.h"

namespace tilec::runtime {

struct ShapeExpr::Node {
  enum class Op {
    kConst,
    kName,
    kNeg,
    kNot,
    kAdd,
    kSub,
    kMul,
    kDiv,
    kFloorDiv,
    kFloorMod,
    kTruncMod,
    kShl,
    kShr,
    kAnd,
    kXor,
    kOr,
    kCeilDiv,
    kMin,
    kMax,
    // Conditions (requirements), 1 or 0.
    kEq,
    kNe,
    kLt,
    kLe,
    kGt,
    kGe,
    kLogicalAnd,
    kLogicalOr,
    kLogicalNot,
  };
  Op op = Op::kConst;
  int64_t value = 0;
  std::string name;
  std::shared_ptr<const Node> a, b;
};

namespace {

using Node = ShapeExpr::Node;
using Op = Node::Op;
using NodePtr = std::shared_ptr<const Node>;

constexpr int kMaxDepth = 256;

bool IsIntDType(std::string_view name) {
  static const char* const kInts[] = {"int8",   "int16",  "int32",  "int64", "uint8",
                                      "uint16", "uint32", "uint64", "bool"};
  return std::find(std::begin(kInts), std::end(kInts), name) != std::end(kInts);
}

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  absl::StatusOr<NodePtr> Read(std::set<std::string>& names) {
    names_ = &names;
    NodePtr e = Logic(0, 0);
    if (e && (Space(), pos_ != s_.size())) e = Fail("unexpected text");
    if (!e) {
      return absl::InvalidArgumentError(absl::StrCat("metadata expression \"", std::string(s_),
                                                     "\" at column ", pos_ + 1, ": ", error_));
    }
    return e;
  }

 private:
  NodePtr Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return nullptr;
  }
  void Space() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool Eat(std::string_view tok) {
    Space();
    if (s_.substr(pos_, tok.size()) != tok) return false;
    pos_ += tok.size();
    return true;
  }
  static NodePtr Make(Op op, NodePtr a, NodePtr b = nullptr) {
    auto n = std::make_shared<Node>();
    n->op = op;
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
  }

  // A whole word: `or` but not the start of `order`.
  bool EatWord(std::string_view word) {
    Space();
    if (s_.substr(pos_, word.size()) != word) return false;
    const size_t end = pos_ + word.size();
    if (end < s_.size()) {
      const char c = s_[end];
      if (c == '_' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9'))
        return false;
    }
    pos_ = end;
    return true;
  }

  // Conditions, loosest first: or, and, not, one comparison (Python's).
  NodePtr Logic(int level, int depth) {
    if (depth > kMaxDepth) return Fail("expression nested too deeply");
    if (level == 2) {
      if (EatWord("not")) {
        NodePtr a = Logic(2, depth + 1);
        return a ? Make(Op::kLogicalNot, a) : nullptr;
      }
      return Compare(depth + 1);
    }
    NodePtr lhs = Logic(level + 1, depth + 1);
    while (lhs && EatWord(level == 0 ? "or" : "and")) {
      NodePtr rhs = Logic(level + 1, depth + 1);
      if (!rhs) return nullptr;
      lhs = Make(level == 0 ? Op::kLogicalOr : Op::kLogicalAnd, lhs, rhs);
    }
    return lhs;
  }

  NodePtr Compare(int depth) {
    NodePtr lhs = Binary(0, depth + 1);
    if (!lhs) return nullptr;
    static constexpr std::pair<std::string_view, Op> kOps[] = {{"==", Op::kEq}, {"!=", Op::kNe},
                                                               {"<=", Op::kLe}, {">=", Op::kGe},
                                                               {"<", Op::kLt},  {">", Op::kGt}};
    for (const auto& [tok, op] : kOps) {
      if (!Eat(tok)) continue;
      NodePtr rhs = Binary(0, depth + 1);
      return rhs ? Make(op, lhs, rhs) : nullptr;
    }
    return lhs;
  }

  // Precedence levels, loosest first: | ^ & shifts additive multiplicative.
  NodePtr Binary(int level, int depth) {
    if (depth > kMaxDepth) return Fail("expression nested too deeply");
    if (level == 6) return Unary(depth);
    NodePtr lhs = Binary(level + 1, depth + 1);
    while (lhs) {
      Space();
      Op op;
      size_t len = 1;
      std::string_view rest = s_.substr(pos_);
      auto starts = [&](std::string_view t) { return rest.substr(0, t.size()) == t; };
      if (level == 0 && starts("|"))
        op = Op::kOr;
      else if (level == 1 && starts("^"))
        op = Op::kXor;
      else if (level == 2 && starts("&"))
        op = Op::kAnd;
      else if (level == 3 && starts("<<"))
        op = Op::kShl, len = 2;
      else if (level == 3 && starts(">>"))
        op = Op::kShr, len = 2;
      else if (level == 4 && starts("+"))
        op = Op::kAdd;
      else if (level == 4 && starts("-"))
        op = Op::kSub;
      else if (level == 5 && starts("//"))
        op = Op::kFloorDiv, len = 2;
      else if (level == 5 && starts("/"))
        op = Op::kDiv;
      else if (level == 5 && starts("*"))
        op = Op::kMul;
      else if (level == 5 && starts("%"))
        op = Op::kFloorMod;
      else
        break;
      pos_ += len;
      NodePtr rhs = Binary(level + 1, depth + 1);
      if (!rhs) return nullptr;
      lhs = Make(op, lhs, rhs);
    }
    return lhs;
  }

  NodePtr Unary(int depth) {
    if (depth > kMaxDepth) return Fail("expression nested too deeply");
    if (Eat("-")) {
      NodePtr a = Unary(depth + 1);
      return a ? Make(Op::kNeg, a) : nullptr;
    }
    if (Eat("~")) {
      NodePtr a = Unary(depth + 1);
      return a ? Make(Op::kNot, a) : nullptr;
    }
    return Atom(depth);
  }

  NodePtr Atom(int depth) {
    Space();
    if (pos_ >= s_.size()) return Fail("expression ends early");
    if (Eat("(")) {
      NodePtr e = Logic(0, depth + 1);
      if (e && !Eat(")")) return Fail("expected ')'");
      return e;
    }
    for (const auto& [word, value] : {std::pair<std::string_view, int64_t>{"True", 1},
                                      std::pair<std::string_view, int64_t>{"False", 0}}) {
      if (!EatWord(word)) continue;
      auto n = std::make_shared<Node>();
      n->value = value;
      return n;
    }
    const char c = s_[pos_];
    if (c >= '0' && c <= '9') {
      auto n = std::make_shared<Node>();
      auto [p, ec] = std::from_chars(s_.data() + pos_, s_.data() + s_.size(), n->value);
      if (ec != std::errc()) return Fail("integer literal out of range");
      pos_ = p - s_.data();
      return n;
    }
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
      return Fail("expected a number, a name or '('");
    const size_t start = pos_;
    while (pos_ < s_.size() &&
           (s_[pos_] == '_' || s_[pos_] == '.' || (s_[pos_] >= 'a' && s_[pos_] <= 'z') ||
            (s_[pos_] >= 'A' && s_[pos_] <= 'Z') || (s_[pos_] >= '0' && s_[pos_] <= '9')))
      ++pos_;
    std::string word(s_.substr(start, pos_ - start));
    if (word.rfind("T.", 0) != 0) {
      if (word.find('.') != std::string::npos) return Fail("unexpected name " + word);
      auto n = std::make_shared<Node>();
      n->op = Op::kName;
      n->name = word;
      names_->insert(word);
      return n;
    }
    const std::string fn = word.substr(2);
    if (!Eat("(")) return Fail("expected '(' after " + word);
    NodePtr a = Binary(0, depth + 1);
    if (!a) return nullptr;
    if (fn == "cast") {
      if (!Eat(",") || !Eat("\"")) return Fail("expected the dtype of T.cast");
      size_t end = s_.find('"', pos_);
      if (end == std::string_view::npos) return Fail("unterminated dtype");
      std::string dtype(s_.substr(pos_, end - pos_));
      pos_ = end + 1;
      if (!IsIntDType(dtype)) return Fail("cast to the non-integer dtype " + dtype);
      if (!Eat(")")) return Fail("expected ')'");
      return a;
    }
    if (IsIntDType(fn)) {
      if (!Eat(")")) return Fail("expected ')'");
      return a;
    }
    Op op;
    if (fn == "ceildiv")
      op = Op::kCeilDiv;
    else if (fn == "min")
      op = Op::kMin;
    else if (fn == "max")
      op = Op::kMax;
    else if (fn == "truncmod")
      op = Op::kTruncMod;
    else
      return Fail("unsupported function " + word);
    if (!Eat(",")) return Fail("expected ',' in " + word);
    NodePtr b = Binary(0, depth + 1);
    if (!b) return nullptr;
    if (!Eat(")")) return Fail("expected ')'");
    return Make(op, a, b);
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
  std::set<std::string>* names_ = nullptr;
};

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

absl::StatusOr<int64_t> EvalNode(const Node& n, const std::map<std::string, int64_t>& dims,
                                 const std::string& text) {
  auto error = [&](std::string what) {
    return absl::InvalidArgumentError(absl::StrCat("metadata expression \"", text, "\": ", what));
  };
  switch (n.op) {
    case Op::kConst: return n.value;
    case Op::kName: {
      auto it = dims.find(n.name);
      if (it == dims.end()) return error("no value for " + n.name);
      return it->second;
    }
    default: break;
  }
  absl::StatusOr<int64_t> a = EvalNode(*n.a, dims, text);
  if (!a.ok()) return a;
  if (n.op == Op::kNeg) return -*a;
  if (n.op == Op::kNot) return ~*a;
  if (n.op == Op::kLogicalNot) return *a == 0 ? 1 : 0;
  absl::StatusOr<int64_t> b = EvalNode(*n.b, dims, text);
  if (!b.ok()) return b;
  const int64_t x = *a, y = *b;
  const bool divides = n.op == Op::kDiv || n.op == Op::kFloorDiv || n.op == Op::kFloorMod ||
                       n.op == Op::kTruncMod || n.op == Op::kCeilDiv;
  if (divides && y == 0) return error("division by zero");
  if ((n.op == Op::kShl || n.op == Op::kShr) && (y < 0 || y >= 63))
    return error("shift by " + std::to_string(y));
  switch (n.op) {
    case Op::kAdd: return x + y;
    case Op::kSub: return x - y;
    case Op::kMul: return x * y;
    case Op::kDiv: return x / y;
    case Op::kFloorDiv: return FloorDiv(x, y);
    case Op::kFloorMod: return x - FloorDiv(x, y) * y;
    case Op::kTruncMod: return x % y;
    case Op::kCeilDiv: return -FloorDiv(-x, y);
    case Op::kShl: return x << y;
    case Op::kShr: return x >> y;
    case Op::kAnd: return x & y;
    case Op::kXor: return x ^ y;
    case Op::kOr: return x | y;
    case Op::kMin: return std::min(x, y);
    case Op::kMax: return std::max(x, y);
    case Op::kEq: return x == y;
    case Op::kNe: return x != y;
    case Op::kLt: return x < y;
    case Op::kLe: return x <= y;
    case Op::kGt: return x > y;
    case Op::kGe: return x >= y;
    case Op::kLogicalAnd: return x != 0 && y != 0;
    case Op::kLogicalOr: return x != 0 || y != 0;
    default: return error("compiler bug: unknown operator");
  }
}

}  // namespace

absl::StatusOr<ShapeExpr> ShapeExpr::Parse(std::string_view text) {
  std::set<std::string> names;
  absl::StatusOr<NodePtr> root = Reader(text).Read(names);
  if (!root.ok()) return root.status();
  ShapeExpr e;
  e.text_ = std::string(text);
  e.root_ = *std::move(root);
  e.names_.assign(names.begin(), names.end());
  return e;
}

absl::StatusOr<int64_t> ShapeExpr::Eval(const std::map<std::string, int64_t>& dims) const {
  return EvalNode(*root_, dims, text_);
}

bool ShapeExpr::is_name() const { return root_->op == Node::Op::kName; }

}  // namespace tilec::runtime
