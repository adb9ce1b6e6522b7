#include "compiler/ir/inline_source.h"

#include <array>
#include <cctype>
#include <string>
#include <vector>

namespace tilec::ir {
namespace {

constexpr std::array<std::string_view, 9> kRefused = {
    "include",       "include_next",       "import",      "embed",   "include_alias",
    "__has_include", "__has_include_next", "__has_embed", "_Pragma",
};

constexpr char kWhy[] =
    "; inline source (a prelude) may not use preprocessor features that reach the server's file "
    "system (#include, #include_next, #embed, #import, #line, __has_include) or could spell them";

struct Pos {
  int line, column;
};

// The text after joining backslash-newline continuations, with the position
// in the original text of every character kept.
struct Spliced {
  std::string text;
  std::vector<Pos> pos;
};

Spliced Splice(std::string_view in) {
  Spliced s;
  int line = 1, column = 1;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\\') {
      size_t j = i + 1;
      if (j < in.size() && in[j] == '\r') ++j;
      if (j < in.size() && in[j] == '\n') {
        i = j;
        ++line;
        column = 1;
        continue;
      }
    }
    s.text.push_back(in[i]);
    s.pos.push_back({line, column});
    if (in[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  s.pos.push_back({line, column});  // end of text
  return s;
}

bool IdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool IdentChar(char c) { return IdentStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

class Checker {
 public:
  explicit Checker(std::string_view text) : raw_(text), s_(Splice(text)) {}

  std::optional<InlineSourceProblem> Run() {
    for (size_t i = 0; i + 2 < raw_.size(); ++i) {
      if (raw_[i] == '?' && raw_[i + 1] == '?' && (raw_[i + 2] == '=' || raw_[i + 2] == '/')) {
        return ProblemAtRaw(i, "trigraphs are not accepted in inline source");
      }
    }
    const std::string& t = s_.text;
    bool line_start = true;  // only whitespace and comments so far on this line
    bool expect_directive = false;
    size_t i = 0;
    while (i < t.size()) {
      char c = t[i];
      if (c == '\n') {
        line_start = true;
        expect_directive = false;
        ++i;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++i;
        continue;
      }
      if (c == '/' && At(i + 1) == '/') {
        while (i < t.size() && t[i] != '\n') ++i;
        continue;
      }
      if (c == '/' && At(i + 1) == '*') {
        size_t end = t.find("*/", i + 2);
        if (end == std::string::npos) return Problem(i, "unterminated comment in inline source");
        i = end + 2;
        continue;
      }
      bool was_line_start = line_start;
      bool directive_name = expect_directive;
      line_start = false;
      expect_directive = false;
      if (c == '#' || (c == '%' && At(i + 1) == ':')) {
        size_t width = c == '#' ? 1 : 2;
        bool paste =
            (c == '#' && At(i + 1) == '#') || (c == '%' && At(i + 2) == '%' && At(i + 3) == ':');
        if (paste) return Problem(i, "token pasting (##) is not accepted in inline source");
        expect_directive = was_line_start;
        i += width;
        continue;
      }
      if (IdentStart(c)) {
        size_t start = i;
        while (i < t.size() && IdentChar(t[i])) ++i;
        std::string_view id(t.data() + start, i - start);
        if ((id == "R" || id == "LR" || id == "uR" || id == "UR" || id == "u8R") && At(i) == '"') {
          return Problem(start, "raw string literals are not accepted in inline source");
        }
        if ((id == "L" || id == "u" || id == "U" || id == "u8") &&
            (At(i) == '"' || At(i) == '\'')) {
          i = SkipLiteral(i);
          continue;
        }
        for (std::string_view refused : kRefused) {
          if (id == refused) return Problem(start, "`" + std::string(id) + "` is refused" + kWhy);
        }
        if (directive_name && id == "line") {
          return Problem(start, std::string("`#line` is refused") + kWhy);
        }
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && std::isdigit(static_cast<unsigned char>(At(i + 1))))) {
        if (directive_name) return Problem(i, std::string("a `# <line>` marker is refused") + kWhy);
        i = SkipNumber(i);
        continue;
      }
      if (c == '"' || c == '\'') {
        i = SkipLiteral(i);
        continue;
      }
      if (c == '\\') {
        return Problem(i,
                       "a backslash outside a string or character literal is not accepted in "
                       "inline source");
      }
      ++i;
    }
    return std::nullopt;
  }

 private:
  char At(size_t i) const { return i < s_.text.size() ? s_.text[i] : '\0'; }

  std::optional<InlineSourceProblem> Problem(size_t i, std::string message) const {
    return InlineSourceProblem{s_.pos[i].line, s_.pos[i].column, std::move(message)};
  }
  std::optional<InlineSourceProblem> ProblemAtRaw(size_t i, std::string message) {
    int line = 1, column = 1;
    for (size_t k = 0; k < i; ++k) {
      if (raw_[k] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return InlineSourceProblem{line, column, std::move(message)};
  }

  // From an opening quote to just past the closing one (or the end of the
  // line: an unterminated literal ends there, as for the compiler).
  size_t SkipLiteral(size_t i) const {
    const std::string& t = s_.text;
    char quote = t[i++];
    while (i < t.size() && t[i] != '\n') {
      if (t[i] == '\\') {
        i += 2;
        continue;
      }
      if (t[i++] == quote) break;
    }
    return i;
  }

  // A preprocessing number: digits, letters, '.', '\'' and signed exponents.
  size_t SkipNumber(size_t i) const {
    const std::string& t = s_.text;
    while (i < t.size()) {
      char c = t[i];
      if ((c == '+' || c == '-') && i > 0 &&
          (t[i - 1] == 'e' || t[i - 1] == 'E' || t[i - 1] == 'p' || t[i - 1] == 'P')) {
        ++i;
      } else if (IdentChar(c) || c == '.' || c == '\'') {
        ++i;
      } else {
        break;
      }
    }
    return i;
  }

  std::string_view raw_;
  Spliced s_;
};

}  // namespace

std::optional<InlineSourceProblem> CheckInlineSource(std::string_view text) {
  return Checker(text).Run();
}

}  // namespace tilec::ir
