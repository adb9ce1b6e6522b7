// Builder: literals, f-strings included.
#include <string>

#include "compiler/frontend/builder.h"
#include "compiler/frontend/parser.h"
#include "compiler/frontend/str_util.h"

namespace tilec::frontend {

absl::StatusOr<Value> Builder::EvalConstant(const ConstantExpr& e) {
  switch (e.value_kind) {
    case ConstantKind::kNone: return Value::None();
    case ConstantKind::kBool: return Value::Bool(e.bool_value);
    case ConstantKind::kInt:
      if (e.int_overflows) {
        return Err(e.loc, Cat("integer literal ", e.str_value, " does not fit in 64 bits"));
      }
      return Value::Int(e.int_value);
    case ConstantKind::kFloat: return Value::Float(e.float_value);
    case ConstantKind::kString: {
      if (!e.is_fstring) return Value::Str(e.str_value);
      absl::StatusOr<std::string> s = FormatFString(e);
      if (!s.ok()) return s.status();
      return Value::Str(*s);
    }
    case ConstantKind::kBytes: return Err(e.loc, "bytes literals are not supported");
    case ConstantKind::kImaginary: return Err(e.loc, "complex numbers are not supported");
    case ConstantKind::kEllipsis: return Err(e.loc, "`...` is not supported here");
  }
  return Internal("unknown constant kind");
}

absl::StatusOr<std::string> Builder::FormatFString(const ConstantExpr& e) {
  // Replacement fields are evaluated when they parse and evaluate; anything
  // else is kept as written (f-strings only appear in messages).
  const std::string& raw = e.str_value;
  std::string out;
  for (size_t k = 0; k < raw.size(); ++k) {
    char c = raw[k];
    if ((c == '{' || c == '}') && k + 1 < raw.size() && raw[k + 1] == c) {
      out += c;
      ++k;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    int depth = 1;
    size_t end = k + 1;
    size_t colon = std::string::npos;
    for (; end < raw.size() && depth > 0; ++end) {
      char d = raw[end];
      if (d == '{' || d == '[' || d == '(') ++depth;
      if (d == '}' || d == ']' || d == ')') --depth;
      if (d == ':' && depth == 1 && colon == std::string::npos) colon = end;
      if (depth == 0) break;
    }
    if (end >= raw.size()) {
      out += raw.substr(k);
      break;
    }
    std::string field = raw.substr(k + 1, (colon == std::string::npos ? end : colon) - k - 1);
    bool repr = false;
    if (field.size() >= 2 && field[field.size() - 2] == '!') {
      repr = field.back() == 'r';
      field.resize(field.size() - 2);
    }
    std::string text = raw.substr(k, end - k + 1);
    absl::StatusOr<ExprPtr> parsed = ParseExpression(SourceFile{file_.path, field});
    if (parsed.ok() && *parsed) {
      absl::StatusOr<Value> v = Eval(**parsed);
      if (v.ok()) text = (v->kind == ValueKind::kStr && !repr) ? v->s : ValueRepr(*v);
    }
    out += text;
    k = end;
  }
  return out;
}

}  // namespace tilec::frontend
