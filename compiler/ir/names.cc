#include "compiler/ir/names.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/ir/ir.h"
#include "compiler/ir/limits.h"
#include "compiler/ir/visitor.h"

namespace tilec::ir {
namespace {

bool IsAsciiLetter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

std::string DescribeByte(unsigned char c) {
  std::string s = absl::StrFormat("byte 0x%02x", c);
  switch (c) {
    case 0: return s + " (NUL)";
    case '\n': return s + " (a newline)";
    case '\r': return s + " (a carriage return)";
    case '\t': return s + " (a tab)";
    case ' ': return s + " (a space)";
    default: break;
  }
  if (c >= 0x80) return s + " (not ASCII)";
  if (c < 0x20 || c == 0x7f) return s + " (a control character)";
  return absl::StrFormat("%s ('%c')", s, c);
}

// The first name below that is not an identifier.
class NameFinder : public IRVisitor {
 public:
  void Visit(const Expr& e) override {
    if (bad_.empty() && e && e->kind == ExprKind::kVar) Note(e->as<VarNode>()->name, "variable");
    IRVisitor::Visit(e);
  }
  void VisitBuffer(const Buffer& b) override {
    if (bad_.empty() && b) Note(b->name, "buffer");
    IRVisitor::VisitBuffer(b);
  }
  void Note(const std::string& name, std::string_view what) {
    if (!bad_.empty()) return;
    std::string problem = CharacterProblem(name);
    if (!problem.empty()) {
      bad_ = absl::StrCat("the name of ", std::string(what), " '", QuoteName(name), "' ", problem);
    }
  }
  const std::string& bad() const { return bad_; }

 private:
  std::string bad_;
};

}  // namespace

bool IsIdentifier(std::string_view name) { return NameProblem(name).empty(); }

std::string NameProblem(std::string_view name) {
  if (name.size() > kMaxNameLength) {
    return absl::StrCat("is ", name.size(), " characters long; names are at most ", kMaxNameLength,
                        " characters");
  }
  return CharacterProblem(name);
}

std::string CharacterProblem(std::string_view name) {
  if (name.empty()) return "is empty";
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (IsAsciiLetter(c) || c == '_' || (i > 0 && IsDigit(c))) continue;
    return absl::StrCat("is not an identifier: ", DescribeByte(c), " at offset ", i, " is not ",
                        i == 0 ? "a letter or '_'" : "a letter, digit or '_'",
                        " (names are ASCII identifiers)");
  }
  return "";
}

std::string QuoteName(std::string_view name) {
  constexpr size_t kShown = 40;
  std::string out;
  for (size_t i = 0; i < name.size() && i < kShown; ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      absl::StrAppendFormat(&out, "\\x%02x", c);
    }
  }
  if (name.size() > kShown) absl::StrAppend(&out, "... (", name.size(), " characters)");
  return out;
}

std::string SpellNonAscii(std::string name) {
  size_t i = 0;
  while (i < name.size() && static_cast<unsigned char>(name[i]) < 0x80) ++i;
  if (i == name.size()) return name;
  std::string out = name.substr(0, i);
  for (; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      absl::StrAppendFormat(&out, "_x%02x", c);
    }
  }
  return out;
}

absl::Status CheckNames(const Program& program) {
  NameFinder finder;
  if (!program.name.empty()) finder.Note(program.name, "the program");
  // Dims and tile parameters may appear nowhere below; parameters and the
  // body are visited.
  for (const Var& v : program.dyn_dims) {
    if (v) finder.Note(v->name, "dynamic dim");
  }
  for (const TileParam& t : program.tile_params) {
    if (t.var) finder.Note(t.var->name, "tile parameter");
  }
  if (finder.bad().empty()) finder.VisitProgram(program);
  if (finder.bad().empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(finder.bad());
}

}  // namespace tilec::ir
