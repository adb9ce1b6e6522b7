#include "compiler/frontend/lexer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/limits.h"

namespace tilec::frontend {

namespace {

constexpr std::array<std::string_view, 35> kKeywords = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield",
};

// Operators, longest first so that the first match is the longest one.
constexpr std::array<std::string_view, 48> kOperators = {
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=",
    ">=",  "==",  "!=",  "+=",  "-=",  "*=", "/=", "%=", "&=", "|=", "^=", "@=",
    "+",   "-",   "*",   "/",   "%",   "@",  "&",  "|",  "^",  "~",  "<",  ">",
    "(",   ")",   "[",   "]",   "{",   "}",  ",",  ":",  ";",  ".",  "=",  "!",
};

constexpr int kMaxBracketDepth = 200;  // Python's own limit
constexpr int kMaxIndentDepth = 100;   // Python's own limit
constexpr int kTabSize = 8;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAsciiIdentStart(uint32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
// Non-ASCII characters are accepted in identifiers except those in the
// punctuation, symbol and emoji blocks (smart quotes, arrows, NBSP, ...), so
// that a stray `“` or `→` is reported as such.
bool IsNonAsciiIdentChar(uint32_t cp) {
  if (cp < 0xC0 || cp == 0xD7 || cp == 0xF7) return false;
  if (cp >= 0x2000 && cp <= 0x2BFF) return false;
  if (cp >= 0x3000 && cp <= 0x303F) return false;
  if (cp >= 0xFE30 && cp <= 0xFE4F) return false;
  if (cp >= 0xFF00 && cp <= 0xFF20) return false;
  if (cp >= 0x1F000 && cp <= 0x1FFFF) return false;
  return true;
}
bool IsIdentStart(uint32_t cp) { return IsAsciiIdentStart(cp) || IsNonAsciiIdentChar(cp); }
bool IsIdentChar(uint32_t cp) { return IsIdentStart(cp) || (cp >= '0' && cp <= '9'); }

int DigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

// The number of bytes of the UTF-8 sequence that starts with `lead`, or 0 if
// `lead` cannot start one.
int Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string Hex(uint32_t v, int digits) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string s(digits, '0');
  for (int i = digits - 1; i >= 0; --i, v >>= 4) s[i] = kHex[v & 15];
  return s;
}

class Lexer {
 public:
  explicit Lexer(const SourceFile& file) : file_(file), text_(file.text) {}

  absl::StatusOr<std::vector<Token>> Run() {
    if (absl::Status s = CheckEncoding(); !s.ok()) return s;
    indents_.push_back({0, 0});
    while (true) {
      if (at_line_start_) {
        absl::StatusOr<bool> more = StartLine();
        if (!more.ok()) return more.status();
        if (!*more) break;
        continue;
      }
      SkipSpaces();
      if (pos_ >= text_.size()) break;
      char c = Peek();
      if (c == '#') {
        while (pos_ < text_.size() && Peek() != '\n') Advance();
        continue;
      }
      if (c == '\n') {
        if (brackets_.empty() && !tokens_.empty() && tokens_.back().kind != TokenKind::kNewline &&
            tokens_.back().kind != TokenKind::kIndent &&
            tokens_.back().kind != TokenKind::kDedent) {
          Emit(TokenKind::kNewline, Loc(), "");
        }
        Advance();
        at_line_start_ = brackets_.empty();
        continue;
      }
      if (c == '\\') {
        SourceLoc loc = Loc();
        Advance();
        if (Peek() == '\r' && Peek(1) == '\n') Advance();
        if (pos_ >= text_.size()) {
          return Error(loc, "unexpected end of file after line continuation character");
        }
        if (Peek() != '\n') {
          return Error(loc, "unexpected character after line continuation character");
        }
        Advance();
        continue;
      }
      absl::Status s = Token1();
      if (!s.ok()) return s;
    }
    if (!brackets_.empty()) {
      return Error(brackets_.back().second,
                   std::string("'") + brackets_.back().first + "' was never closed");
    }
    SourceLoc eof = Loc();
    if (!tokens_.empty() && tokens_.back().kind != TokenKind::kNewline &&
        tokens_.back().kind != TokenKind::kDedent) {
      Emit(TokenKind::kNewline, eof, "");
    }
    for (size_t i = 1; i < indents_.size(); ++i) Emit(TokenKind::kDedent, eof, "");
    Emit(TokenKind::kEndOfFile, eof, "");
    return std::move(tokens_);
  }

 private:
  struct Indent {
    int col;     // with tabs to multiples of 8
    int altcol;  // with tabs as one column
  };

  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  SourceLoc Loc() const { return {line_, col_}; }

  void Advance() {
    char c = text_[pos_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      ++col_;
    }
  }

  // Advances over one whole (UTF-8) character.
  void AdvanceChar() {
    int n = std::max(1, Utf8Length(static_cast<unsigned char>(Peek())));
    for (int i = 0; i < n && pos_ < text_.size(); ++i) Advance();
  }

  absl::Status Error(SourceLoc loc, std::string_view message) const {
    return SourceError(file_, loc, message);
  }

  Token& Emit(TokenKind kind, SourceLoc loc, std::string text) {
    Token& t = tokens_.emplace_back();
    t.kind = kind;
    t.loc = loc;
    t.end = Loc();
    t.text = std::move(text);
    return t;
  }

  absl::Status CheckEncoding() const {
    int line = 1, col = 1;
    for (size_t i = 0; i < text_.size();) {
      unsigned char c = static_cast<unsigned char>(text_[i]);
      if (c == 0) return Error({line, col}, "source code cannot contain null bytes");
      int n = Utf8Length(c);
      bool ok = n > 0 && i + n <= text_.size();
      for (int k = 1; ok && k < n; ++k) {
        ok = (static_cast<unsigned char>(text_[i + k]) & 0xC0) == 0x80;
      }
      if (!ok) return Error({line, col}, "invalid UTF-8 byte 0x" + Hex(c, 2) + " in source");
      if (c == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
      i += n;
    }
    return absl::OkStatus();
  }

  void SkipSpaces() {
    while (pos_ < text_.size()) {
      char c = Peek();
      if (c == ' ' || c == '\t' || c == '\f' || (c == '\r' && Peek(1) != '\n')) {
        Advance();
      } else if (c == '\r') {
        Advance();  // the '\n' of "\r\n" follows
      } else {
        break;
      }
    }
  }

  // At the start of a physical line outside brackets: measures indentation,
  // skips blank and comment-only lines, emits INDENT/DEDENT. Returns false at
  // the end of the file.
  absl::StatusOr<bool> StartLine() {
    int col = 0, altcol = 0;
    while (pos_ < text_.size()) {
      char c = Peek();
      if (c == ' ') {
        ++col;
        ++altcol;
      } else if (c == '\t') {
        col = (col / kTabSize + 1) * kTabSize;
        ++altcol;
      } else if (c == '\f') {
        col = altcol = 0;
      } else if (c != '\r') {
        break;
      }
      Advance();
    }
    if (pos_ >= text_.size()) return false;
    char c = Peek();
    if (c == '\n' || c == '#') {  // blank or comment-only line
      while (pos_ < text_.size() && Peek() != '\n') Advance();
      if (pos_ < text_.size()) Advance();
      return true;
    }
    at_line_start_ = false;
    SourceLoc loc = Loc();
    const Indent& top = indents_.back();
    if (col == top.col) {
      if (altcol != top.altcol)
        return Error(loc, "inconsistent use of tabs and spaces in indentation");
    } else if (col > top.col) {
      if (altcol <= top.altcol)
        return Error(loc, "inconsistent use of tabs and spaces in indentation");
      if (static_cast<int>(indents_.size()) > kMaxIndentDepth) {
        return Error(loc, "too many levels of indentation");
      }
      indents_.push_back({col, altcol});
      Emit(TokenKind::kIndent, loc, "");
    } else {
      while (indents_.size() > 1 && col < indents_.back().col) {
        indents_.pop_back();
        Emit(TokenKind::kDedent, loc, "");
      }
      if (col != indents_.back().col) {
        return Error(loc, "unindent does not match any outer indentation level");
      }
      if (altcol != indents_.back().altcol) {
        return Error(loc, "inconsistent use of tabs and spaces in indentation");
      }
    }
    return true;
  }

  absl::Status Token1() {
    SourceLoc loc = Loc();
    size_t start = pos_;
    char c = Peek();
    if (IsDigit(c) || (c == '.' && IsDigit(Peek(1)))) return Number();
    if (c == '"' || c == '\'') return String(loc, start, "");
    if (IsIdentStart(DecodeAt(pos_))) {
      while (pos_ < text_.size() && IsIdentChar(DecodeAt(pos_))) AdvanceChar();
      if (pos_ - start > ir::kMaxNameLength) {
        return Error(loc, "this name is " + std::to_string(pos_ - start) +
                              " characters long; tilec accepts names of at most " +
                              std::to_string(ir::kMaxNameLength));
      }
      std::string word(text_.substr(start, pos_ - start));
      if ((Peek() == '"' || Peek() == '\'') && IsStringPrefix(word))
        return String(loc, start, word);
      TokenKind kind = IsKeyword(word) ? TokenKind::kKeyword : TokenKind::kName;
      Emit(kind, loc, std::move(word));
      return absl::OkStatus();
    }
    for (std::string_view op : kOperators) {
      if (text_.substr(pos_, op.size()) != op) continue;
      if (op == "!") break;  // `!` alone is not an operator outside f-strings
      for (size_t i = 0; i < op.size(); ++i) Advance();
      if (absl::Status s = Bracket(op, loc); !s.ok()) return s;
      Emit(TokenKind::kOp, loc, std::string(op));
      return absl::OkStatus();
    }
    uint32_t cp = DecodeAt(pos_);
    if (cp >= 0x20 && cp < 0x7F) {
      return Error(loc, std::string("unexpected character '") + static_cast<char>(cp) + "'");
    }
    return Error(loc, "unexpected character U+" + Hex(cp, 4));
  }

  uint32_t DecodeAt(size_t i) const {
    unsigned char c = static_cast<unsigned char>(text_[i]);
    int n = Utf8Length(c);
    if (n <= 1) return c;
    uint32_t cp = c & (0x7F >> n);
    for (int k = 1; k < n && i + k < text_.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(text_[i + k]) & 0x3F);
    }
    return cp;
  }

  absl::Status Bracket(std::string_view op, SourceLoc loc) {
    char c = op[0];
    if (op.size() != 1) return absl::OkStatus();
    if (c == '(' || c == '[' || c == '{') {
      if (static_cast<int>(brackets_.size()) >= kMaxBracketDepth) {
        return Error(loc, "too many nested parentheses");
      }
      brackets_.push_back({c, loc});
    } else if (c == ')' || c == ']' || c == '}') {
      if (brackets_.empty()) return Error(loc, std::string("unmatched '") + c + "'");
      char open = brackets_.back().first;
      char expected = open == '(' ? ')' : open == '[' ? ']' : '}';
      if (c != expected) {
        std::string message = std::string("closing parenthesis '") + c +
                              "' does not match opening parenthesis '" + open + "'";
        if (brackets_.back().second.line != loc.line) {
          message += " on line " + std::to_string(brackets_.back().second.line);
        }
        return Error(loc, message);
      }
      brackets_.pop_back();
    }
    return absl::OkStatus();
  }

  static bool IsStringPrefix(std::string_view word) {
    if (word.empty() || word.size() > 2) return false;
    std::string lower;
    for (char ch : word) lower += static_cast<char>(ch | 0x20);
    static constexpr std::array<std::string_view, 8> kPrefixes = {"r",  "u",  "b",  "f",
                                                                  "br", "rb", "fr", "rf"};
    return std::find(kPrefixes.begin(), kPrefixes.end(), lower) != kPrefixes.end();
  }

  // Scans digits of the given base with single `_` separators between them;
  // appends the digits (without separators) to `digits`.
  absl::Status Digits(int base, std::string* digits, SourceLoc literal_loc, bool required) {
    bool any = false;
    while (pos_ < text_.size()) {
      char c = Peek();
      if (c == '_') {
        if (!any || DigitValue(Peek(1)) >= base) {
          return Error(Loc(), "invalid " + BaseName(base) + " literal");
        }
        Advance();
        continue;
      }
      int v = DigitValue(c);
      if (v >= base) {
        if (base < 10 && IsDigit(c)) {
          return Error(Loc(),
                       std::string("invalid digit '") + c + "' in " + BaseName(base) + " literal");
        }
        break;
      }
      *digits += c;
      any = true;
      Advance();
    }
    if (required && !any) return Error(literal_loc, "invalid " + BaseName(base) + " literal");
    return absl::OkStatus();
  }

  static std::string BaseName(int base) {
    switch (base) {
      case 16: return "hexadecimal";
      case 8: return "octal";
      case 2: return "binary";
      default: return "decimal";
    }
  }

  absl::Status Number() {
    SourceLoc loc = Loc();
    size_t start = pos_;
    std::string digits;
    int base = 10;
    bool is_float = false;
    if (Peek() == '0' && (Peek(1) | 0x20) == 'x') {
      base = 16;
    } else if (Peek() == '0' && (Peek(1) | 0x20) == 'o') {
      base = 8;
    } else if (Peek() == '0' && (Peek(1) | 0x20) == 'b') {
      base = 2;
    }
    if (base != 10) {
      Advance();
      Advance();
      if (Peek() == '_') Advance();  // 0x_ff is valid
      if (absl::Status s = Digits(base, &digits, loc, true); !s.ok()) return s;
    } else {
      if (absl::Status s = Digits(10, &digits, loc, false); !s.ok()) return s;
      if (Peek() == '.') {
        is_float = true;
        digits += '.';
        Advance();
        if (IsDigit(Peek())) {
          if (absl::Status s = Digits(10, &digits, loc, false); !s.ok()) return s;
        }
      }
      if ((Peek() | 0x20) == 'e' &&
          (IsDigit(Peek(1)) || ((Peek(1) == '+' || Peek(1) == '-') && IsDigit(Peek(2))))) {
        is_float = true;
        digits += 'e';
        Advance();
        if (Peek() == '+' || Peek() == '-') {
          digits += Peek();
          Advance();
        }
        if (absl::Status s = Digits(10, &digits, loc, true); !s.ok()) return s;
      }
    }
    bool imaginary = false;
    if (base == 10 && (Peek() | 0x20) == 'j') {
      imaginary = true;
      Advance();
    }
    if (pos_ < text_.size() && IsIdentChar(DecodeAt(pos_))) {
      return Error(Loc(), "invalid " + BaseName(base) + " literal");
    }
    std::string spelling(text_.substr(start, pos_ - start));
    if (is_float || imaginary) {
      double value = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ec == std::errc::result_out_of_range) {
        value = digits.find("e-") != std::string::npos ? 0.0 : HUGE_VAL;
      } else if (ec != std::errc() || ptr != digits.data() + digits.size()) {
        return Error(loc, "invalid decimal literal");
      }
      Token& t = Emit(imaginary ? TokenKind::kImaginary : TokenKind::kFloat, loc, spelling);
      t.float_value = value;
      return absl::OkStatus();
    }
    if (base == 10 && digits.size() > 1 && digits[0] == '0' &&
        digits.find_first_not_of('0') != std::string::npos) {
      return Error(loc,
                   "leading zeros in decimal integer literals are not permitted; use an 0o "
                   "prefix for octal integers");
    }
    uint64_t value = 0;
    bool overflow = false;
    for (char d : digits) {
      uint64_t v = static_cast<uint64_t>(DigitValue(d));
      if (value > (static_cast<uint64_t>(INT64_MAX) - v) / static_cast<uint64_t>(base)) {
        overflow = true;
        break;
      }
      value = value * base + v;
    }
    Token& t = Emit(TokenKind::kInt, loc, spelling);
    t.int_overflows = overflow;
    t.int_value = overflow ? 0 : static_cast<int64_t>(value);
    return absl::OkStatus();
  }

  // Scans a string literal whose prefix (already consumed) is `prefix`.
  absl::Status String(SourceLoc loc, size_t start, std::string_view prefix) {
    bool raw = false, bytes = false, fstring = false;
    for (char ch : prefix) {
      char lower = static_cast<char>(ch | 0x20);
      raw |= lower == 'r';
      bytes |= lower == 'b';
      fstring |= lower == 'f';
    }
    char quote = Peek();
    bool triple = Peek(1) == quote && Peek(2) == quote;
    int quote_len = triple ? 3 : 1;
    for (int i = 0; i < quote_len; ++i) Advance();
    std::string value;
    int field_depth = 0;  // f-strings: nesting of `{...}` replacement fields
    while (true) {
      if (pos_ >= text_.size() || (!triple && Peek() == '\n')) return Unterminated(loc, triple);
      char c = Peek();
      if (fstring && field_depth > 0 && (c == '"' || c == '\'')) {
        // A string inside a replacement field; it may use the outer quote
        // (Python 3.12).
        value += c;
        Advance();
        while (pos_ < text_.size() && Peek() != c && Peek() != '\n') {
          if (Peek() == '\\' && pos_ + 1 < text_.size()) {
            value += Peek();
            Advance();
          }
          value += Peek();
          Advance();
        }
        if (pos_ >= text_.size() || Peek() != c) return Unterminated(loc, triple);
        value += c;
        Advance();
        continue;
      }
      if (fstring && c == '{') {
        if (field_depth == 0 && Peek(1) == '{') {
          value += "{{";
          Advance();
          Advance();
          continue;
        }
        ++field_depth;
      } else if (fstring && c == '}' && field_depth > 0) {
        --field_depth;
      }
      if (c == quote && (!triple || (Peek(1) == quote && Peek(2) == quote))) {
        for (int i = 0; i < quote_len; ++i) Advance();
        break;
      }
      if (c == '\\') {
        if (pos_ + 1 >= text_.size()) {
          Advance();
          continue;  // reported as unterminated on the next iteration
        }
        if (raw || fstring) {
          // The backslash stays, and the next character cannot end the string.
          value += c;
          Advance();
          value += Peek();
          Advance();
          continue;
        }
        Advance();
        Escape(bytes, &value);
        continue;
      }
      if (c == '\r' && Peek(1) == '\n') {
        Advance();
        continue;
      }
      value += c;
      Advance();
    }
    Token& t = Emit(TokenKind::kString, loc, std::string(text_.substr(start, pos_ - start)));
    t.str_value = std::move(value);
    t.is_raw = raw;
    t.is_bytes = bytes;
    t.is_fstring = fstring;
    return absl::OkStatus();
  }

  absl::Status Unterminated(SourceLoc loc, bool triple) const {
    int line = pos_ >= text_.size() && !text_.empty() && text_.back() == '\n' ? line_ - 1 : line_;
    return Error(loc, std::string(triple ? "unterminated triple-quoted string literal"
                                         : "unterminated string literal") +
                          " (detected at line " + std::to_string(line) + ")");
  }

  // Decodes the escape sequence after a backslash (already consumed). Unknown
  // escapes are kept as written, as Python does.
  void Escape(bool bytes, std::string* out) {
    char c = Peek();
    auto simple = [&](char decoded) {
      *out += decoded;
      Advance();
    };
    switch (c) {
      case '\n': Advance(); return;  // line continuation inside the string
      case '\r':
        Advance();
        if (Peek() == '\n') Advance();
        return;
      case '\\': return simple('\\');
      case '\'': return simple('\'');
      case '"': return simple('"');
      case 'a': return simple('\a');
      case 'b': return simple('\b');
      case 'f': return simple('\f');
      case 'n': return simple('\n');
      case 'r': return simple('\r');
      case 't': return simple('\t');
      case 'v': return simple('\v');
      default: break;
    }
    if (c >= '0' && c <= '7') {
      uint32_t v = 0;
      for (int i = 0; i < 3 && Peek() >= '0' && Peek() <= '7'; ++i) {
        v = v * 8 + (Peek() - '0');
        Advance();
      }
      if (bytes) {
        *out += static_cast<char>(v & 0xFF);
      } else {
        AppendUtf8(v, out);
      }
      return;
    }
    int hex_digits = c == 'x' ? 2 : (!bytes && c == 'u') ? 4 : (!bytes && c == 'U') ? 8 : 0;
    if (hex_digits > 0) {
      uint32_t v = 0;
      bool ok = true;
      for (int i = 1; i <= hex_digits; ++i) {
        int d = DigitValue(Peek(i));
        if (d >= 16) {
          ok = false;
          break;
        }
        v = v * 16 + d;
      }
      if (ok && v <= 0x10FFFF) {
        for (int i = 0; i <= hex_digits; ++i) Advance();
        if (bytes) {
          *out += static_cast<char>(v & 0xFF);
        } else {
          AppendUtf8(v, out);
        }
        return;
      }
    }
    *out += '\\';  // unknown or malformed escape: kept as written
  }

  const SourceFile& file_;
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  bool at_line_start_ = true;
  std::vector<Indent> indents_;
  std::vector<std::pair<char, SourceLoc>> brackets_;
  std::vector<Token> tokens_;
};

}  // namespace

std::string_view TokenKindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kName: return "name";
    case TokenKind::kKeyword: return "keyword";
    case TokenKind::kInt: return "integer literal";
    case TokenKind::kFloat: return "float literal";
    case TokenKind::kImaginary: return "imaginary literal";
    case TokenKind::kString: return "string literal";
    case TokenKind::kOp: return "operator";
    case TokenKind::kNewline: return "newline";
    case TokenKind::kIndent: return "indent";
    case TokenKind::kDedent: return "dedent";
    case TokenKind::kEndOfFile: return "end of file";
  }
  return "?";
}

bool IsKeyword(std::string_view word) {
  return std::find(kKeywords.begin(), kKeywords.end(), word) != kKeywords.end();
}

std::string DescribeToken(const Token& token) {
  switch (token.kind) {
    case TokenKind::kName: return "name '" + token.text + "'";
    case TokenKind::kKeyword:
    case TokenKind::kOp: return "'" + token.text + "'";
    default: return std::string(TokenKindName(token.kind));
  }
}

absl::StatusOr<std::vector<Token>> Tokenize(const SourceFile& file) { return Lexer(file).Run(); }

}  // namespace tilec::frontend
