// Tokenizer for the Python syntax of TileLang source files.
//
// Tokenize turns a whole file into tokens the way Python's tokenizer does:
//   - NEWLINE ends each logical line; blank and comment-only lines produce
//     nothing; lines are joined inside (), [] and {} and after a backslash;
//   - INDENT/DEDENT bracket each change of indentation (a tab advances to the
//     next multiple of 8, and an indentation whose meaning depends on the tab
//     size is an error, as in Python);
//   - the token list always ends with NEWLINE (when the last line had
//     tokens), the DEDENTs that close open blocks, then END_OF_FILE.
// Literals are decoded: integers (decimal, 0x, 0o, 0b, with `_` separators),
// floats (1e-3, 1., .5), imaginary numbers (2j), strings with any of the
// r/u/b/f prefixes, single, double or triple quoted, escapes decoded;
// f-strings are kept opaque (their raw body, replacement fields unparsed).
// Adjacent string literals are separate tokens; the parser concatenates them.
//
// The input must be UTF-8. Identifiers are ASCII letters, digits and `_`,
// plus any non-ASCII character (Python's stricter Unicode identifier rule is
// not checked). Errors (unterminated string, unexpected character,
// inconsistent dedent, unmatched bracket ...) are SourceError statuses that
// point at the offending character.
#ifndef TILEC_COMPILER_FRONTEND_LEXER_H_
#define TILEC_COMPILER_FRONTEND_LEXER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/source.h"

namespace tilec::frontend {

enum class TokenKind : uint8_t {
  kName,       // identifiers, including soft keywords (match, case, type, _)
  kKeyword,    // Python's hard keywords: def, if, True, None, not, ...
  kInt,        // int_value / int_overflows
  kFloat,      // float_value
  kImaginary,  // float_value is the imaginary part
  kString,     // str_value; is_bytes / is_fstring / is_raw
  kOp,         // operators and delimiters: + ** // -> := ( ) ... +=
  kNewline,
  kIndent,
  kDedent,
  kEndOfFile,
};
std::string_view TokenKindName(TokenKind kind);  // "name", "newline", ...

struct Token {
  TokenKind kind = TokenKind::kEndOfFile;
  SourceLoc loc;  // first character
  SourceLoc end;  // just past the last character (on the same line for most tokens)
  // The token as written (names, keywords, operators, literals with their
  // prefixes and quotes); empty for NEWLINE, INDENT, DEDENT and END_OF_FILE.
  std::string text;

  int64_t int_value = 0;
  bool int_overflows = false;  // the literal does not fit int64
  double float_value = 0;
  std::string str_value;  // decoded (raw body for f-strings)
  bool is_bytes = false;
  bool is_fstring = false;
  bool is_raw = false;

  bool Is(TokenKind k, std::string_view t) const { return kind == k && text == t; }
  bool IsOp(std::string_view t) const { return Is(TokenKind::kOp, t); }
  bool IsKeyword(std::string_view t) const { return Is(TokenKind::kKeyword, t); }
};

// True for Python's hard keywords.
bool IsKeyword(std::string_view word);

// How a token is named in diagnostics: "'for'", "')'", "newline",
// "end of file", "name 'x'", "integer literal", ...
std::string DescribeToken(const Token& token);

absl::StatusOr<std::vector<Token>> Tokenize(const SourceFile& file);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_LEXER_H_
