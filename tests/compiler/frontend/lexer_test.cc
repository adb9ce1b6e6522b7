#include "compiler/frontend/lexer.h"

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/frontend/source.h"
#include "gtest/gtest.h"

namespace tilec::frontend {

// Readable SourceLoc values in test failures.
void PrintTo(const SourceLoc& loc, std::ostream* os) { *os << loc.line << ":" << loc.col; }
namespace {

std::vector<Token> Lex(const std::string& text) {
  absl::StatusOr<std::vector<Token>> tokens = Tokenize(SourceFile{"t.py", text});
  EXPECT_TRUE(tokens.ok()) << tokens.status().message();
  return tokens.ok() ? *tokens : std::vector<Token>{};
}

// One word per token: the text for names, keywords, operators and literals,
// NL / IN / DE / EOF for the layout tokens.
std::string Shape(const std::string& text) {
  std::string out;
  for (const Token& t : Lex(text)) {
    if (!out.empty()) out += ' ';
    switch (t.kind) {
      case TokenKind::kNewline: out += "NL"; break;
      case TokenKind::kIndent: out += "IN"; break;
      case TokenKind::kDedent: out += "DE"; break;
      case TokenKind::kEndOfFile: out += "EOF"; break;
      default: out += t.text;
    }
  }
  return out;
}

// The first line of the diagnostic, or "OK".
std::string LexError(const std::string& text) {
  absl::StatusOr<std::vector<Token>> tokens = Tokenize(SourceFile{"t.py", text});
  if (tokens.ok()) return "OK";
  EXPECT_EQ(tokens.status().code(), absl::StatusCode::kInvalidArgument);
  std::string message(tokens.status().message());
  return message.substr(0, message.find('\n'));
}

TEST(SourceTest, FormatDiagnosticPointsAtTheColumn) {
  SourceFile file{"k.py", "x = 1\n  y = foo(\n"};
  EXPECT_EQ(FormatDiagnostic(file, {2, 9}, "bad call"),
            "k.py:2:9: error: bad call\n  y = foo(\n        ^\n");
}

TEST(SourceTest, TabsCountAsOneColumnAndUtf8AsOneCharacter) {
  SourceFile file{"k.py", "\tx = 'é' + $\n"};
  // tab(1) x(2) ' '(3) =(4) ' '(5) '(6) é(7) '(8) ' '(9) +(10) ' '(11) $(12)
  EXPECT_EQ(FormatDiagnostic(file, {1, 12}, "m"),
            "k.py:1:12: error: m\n\tx = 'é' + $\n           ^\n");
  EXPECT_EQ(LexError("\tx = 'é' + $\n"), "t.py:1:12: error: unexpected character '$'");
}

TEST(SourceTest, LinePastTheEndAndCrLf) {
  SourceFile file{"k.py", "a\r\nb"};
  EXPECT_EQ(SourceLine(file, 1), "a");
  EXPECT_EQ(SourceLine(file, 2), "b");
  EXPECT_EQ(SourceLine(file, 3), "");
  EXPECT_EQ(FormatDiagnostic(file, {3, 1}, "eof"), "k.py:3:1: error: eof\n\n^\n");
}

TEST(SourceTest, SourceErrorIsInvalidArgument) {
  absl::Status s = SourceError(SourceFile{"k.py", "x\n"}, {1, 1}, "boom");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "k.py:1:1: error: boom\nx\n^\n");
}

TEST(LexerTest, TokensCarryLocations) {
  std::vector<Token> t = Lex("def f(a):\n    return a ** 2\n");
  ASSERT_EQ(t.size(), 15u);
  EXPECT_EQ(t[0].kind, TokenKind::kKeyword);
  EXPECT_EQ(t[0].text, "def");
  EXPECT_EQ(t[0].loc, (SourceLoc{1, 1}));
  EXPECT_EQ(t[0].end, (SourceLoc{1, 4}));
  EXPECT_EQ(t[1].kind, TokenKind::kName);
  EXPECT_EQ(t[1].loc, (SourceLoc{1, 5}));
  EXPECT_EQ(t[6].kind, TokenKind::kNewline);
  EXPECT_EQ(t[6].loc, (SourceLoc{1, 10}));
  EXPECT_EQ(t[7].kind, TokenKind::kIndent);
  EXPECT_EQ(t[7].loc, (SourceLoc{2, 5}));
  EXPECT_EQ(t[8].text, "return");
  EXPECT_EQ(t[10].text, "**");
  EXPECT_EQ(t[10].loc, (SourceLoc{2, 14}));
  EXPECT_EQ(t[11].kind, TokenKind::kInt);
  EXPECT_EQ(t[11].int_value, 2);
  EXPECT_EQ(t[13].kind, TokenKind::kDedent);
  EXPECT_EQ(t[14].kind, TokenKind::kEndOfFile);
}

TEST(LexerTest, IndentDedentAndBlankLines) {
  EXPECT_EQ(Shape("if a:\n  b\n\n  # note\n  if c:\n      d\ne\n"),
            "if a : NL IN b NL if c : NL IN d NL DE DE e NL EOF");
  // Dedents at the end of the file, with no final newline.
  EXPECT_EQ(Shape("if a:\n  if b:\n    c"), "if a : NL IN if b : NL IN c NL DE DE EOF");
  EXPECT_EQ(Shape(""), "EOF");
  EXPECT_EQ(Shape("\n\n# only a comment\n"), "EOF");
}

TEST(LexerTest, ImplicitAndExplicitLineJoining) {
  EXPECT_EQ(Shape("f(a,\n      b)\nx = [1,\n# c\n 2]\n"), "f ( a , b ) NL x = [ 1 , 2 ] NL EOF");
  EXPECT_EQ(Shape("x = 1 + \\\n    2\ny = 3\n"), "x = 1 + 2 NL y = 3 NL EOF");
  EXPECT_EQ(Shape("d = {'a':\n\n  1}\n"), "d = { 'a' : 1 } NL EOF");
}

TEST(LexerTest, CommentsAndCrLf) {
  EXPECT_EQ(Shape("x = 1  # set x\r\nif x:\r\n\ty\r\n"), "x = 1 NL if x : NL IN y NL DE EOF");
}

TEST(LexerTest, Integers) {
  std::vector<Token> t = Lex("0 42 1_000_000 0x_FF 0o17 0b1010 00 9223372036854775807\n");
  ASSERT_EQ(t.size(), 10u);
  int64_t expected[] = {0, 42, 1000000, 255, 15, 10, 0, INT64_MAX};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(t[i].kind, TokenKind::kInt) << i;
    EXPECT_EQ(t[i].int_value, expected[i]) << t[i].text;
    EXPECT_FALSE(t[i].int_overflows) << t[i].text;
  }
  std::vector<Token> big = Lex("9223372036854775808 0xFFFFFFFFFFFFFFFF\n");
  EXPECT_TRUE(big[0].int_overflows);
  EXPECT_TRUE(big[1].int_overflows);
  EXPECT_EQ(big[1].text, "0xFFFFFFFFFFFFFFFF");
}

TEST(LexerTest, FloatsAndImaginary) {
  std::vector<Token> t = Lex("1e-3 1. .5 2.5E+2 1_0.0_1 3j 1.5e3J\n");
  ASSERT_EQ(t.size(), 9u);
  double expected[] = {1e-3, 1.0, 0.5, 250.0, 10.01, 3.0, 1500.0};
  for (int i = 0; i < 7; ++i) {
    EXPECT_DOUBLE_EQ(t[i].float_value, expected[i]) << t[i].text;
  }
  for (int i = 0; i < 5; ++i) EXPECT_EQ(t[i].kind, TokenKind::kFloat) << t[i].text;
  EXPECT_EQ(t[5].kind, TokenKind::kImaginary);
  EXPECT_EQ(t[6].kind, TokenKind::kImaginary);
  // `1.e5` and attribute access on a name are not confused with floats.
  EXPECT_EQ(Shape("x.y 1.e5 a[1:2]\n"), "x . y 1.e5 a [ 1 : 2 ] NL EOF");
}

TEST(LexerTest, StringsDecodeEscapes) {
  std::vector<Token> t = Lex(R"(  'a\tb' "q\"q" '\x41\101\u00e9\N{DASH}' r'\n' b'\xff' Rb"\d" u'x')"
                             "\n");
  ASSERT_GE(t.size(), 8u);
  EXPECT_EQ(t[0].kind, TokenKind::kIndent);
  EXPECT_EQ(t[1].str_value, "a\tb");
  EXPECT_EQ(t[2].str_value, "q\"q");
  EXPECT_EQ(t[3].str_value, "AA\xc3\xa9\\N{DASH}");
  EXPECT_EQ(t[4].str_value, "\\n");
  EXPECT_TRUE(t[4].is_raw);
  EXPECT_EQ(t[5].str_value, "\xff");
  EXPECT_TRUE(t[5].is_bytes);
  EXPECT_EQ(t[6].str_value, "\\d");
  EXPECT_TRUE(t[6].is_bytes && t[6].is_raw);
  EXPECT_EQ(t[7].str_value, "x");
  EXPECT_EQ(t[7].loc, (SourceLoc{1, 63}));
}

TEST(LexerTest, TripleQuotedStringsSpanLines) {
  std::vector<Token> t = Lex("x = \"\"\"one\n'two' \"\n\"\"\"\ny = '''a\\\nb'''\n");
  ASSERT_EQ(t.size(), 9u);
  EXPECT_EQ(t[2].str_value, "one\n'two' \"\n");
  EXPECT_EQ(t[2].loc, (SourceLoc{1, 5}));
  EXPECT_EQ(t[2].end, (SourceLoc{3, 4}));
  EXPECT_EQ(t[6].str_value, "ab");  // backslash-newline continues the line
  EXPECT_EQ(t[4].loc, (SourceLoc{4, 1}));
}

TEST(LexerTest, FStringsStayOpaque) {
  std::vector<Token> t = Lex(R"(f"v={x['k']:>{w}} {{lit}} {d["q"]}" rf'\d{a}')"
                             "\n");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_TRUE(t[0].is_fstring);
  EXPECT_EQ(t[0].str_value, R"(v={x['k']:>{w}} {{lit}} {d["q"]})");
  EXPECT_TRUE(t[1].is_fstring && t[1].is_raw);
  EXPECT_EQ(t[1].str_value, R"(\d{a})");
}

TEST(LexerTest, OperatorsTakeTheLongestMatch) {
  EXPECT_EQ(Shape("a **= b //= c >>= d <<= e ... -> := ** // << >> <= >= == != @ @=\n"),
            "a **= b //= c >>= d <<= e ... -> := ** // << >> <= >= == != @ @= NL EOF");
  EXPECT_EQ(Shape("x+=1;y-=2;z*=3;w/=4;v%=5;u&=6;t|=7;s^=8\n"),
            "x += 1 ; y -= 2 ; z *= 3 ; w /= 4 ; v %= 5 ; u &= 6 ; t |= 7 ; s ^= 8 NL EOF");
  EXPECT_EQ(Shape("a<b>c~d\n"), "a < b > c ~ d NL EOF");
}

TEST(LexerTest, KeywordsAndSoftKeywords) {
  std::vector<Token> t = Lex("lambda match case type _ None True is not in\n");
  TokenKind expected[] = {TokenKind::kKeyword, TokenKind::kName,    TokenKind::kName,
                          TokenKind::kName,    TokenKind::kName,    TokenKind::kKeyword,
                          TokenKind::kKeyword, TokenKind::kKeyword, TokenKind::kKeyword,
                          TokenKind::kKeyword};
  ASSERT_EQ(t.size(), 12u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(t[i].kind, expected[i]) << t[i].text;
}

TEST(LexerTest, NonAsciiIdentifiers) {
  std::vector<Token> t = Lex("αβ = café\n");
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].text, "αβ");
  EXPECT_EQ(t[1].loc, (SourceLoc{1, 4}));
  EXPECT_EQ(t[2].text, "café");
  EXPECT_EQ(t[2].end, (SourceLoc{1, 10}));
}

TEST(LexerTest, DescribeToken) {
  std::vector<Token> t = Lex("for x . 1 'a'\n");
  EXPECT_EQ(DescribeToken(t[0]), "'for'");
  EXPECT_EQ(DescribeToken(t[1]), "name 'x'");
  EXPECT_EQ(DescribeToken(t[3]), "integer literal");
  EXPECT_EQ(DescribeToken(t[4]), "string literal");
  EXPECT_EQ(DescribeToken(t[5]), "newline");
  EXPECT_EQ(DescribeToken(t[6]), "end of file");
}

TEST(LexerTest, Diagnostics) {
  EXPECT_EQ(LexError("x = 'abc\ny = 1\n"),
            "t.py:1:5: error: unterminated string literal (detected at line 1)");
  EXPECT_EQ(LexError("x = 1\ns = \"\"\"abc\n\n"),
            "t.py:2:5: error: unterminated triple-quoted string literal (detected at line 3)");
  EXPECT_EQ(LexError("a = b ? c\n"), "t.py:1:7: error: unexpected character '?'");
  EXPECT_EQ(LexError("a = b → c\n"), "t.py:1:7: error: unexpected character U+2192");
  EXPECT_EQ(LexError("a = “b”\n"), "t.py:1:5: error: unexpected character U+201C");
  EXPECT_EQ(LexError("if a:\n    b\n  c\n"),
            "t.py:3:3: error: unindent does not match any outer indentation level");
  EXPECT_EQ(LexError("if a:\n\tb\n        c\n"),
            "t.py:3:9: error: inconsistent use of tabs and spaces in indentation");
  EXPECT_EQ(LexError("f(a))\n"), "t.py:1:5: error: unmatched ')'");
  EXPECT_EQ(LexError("f(a,\n  b]\n"),
            "t.py:2:4: error: closing parenthesis ']' does not match opening parenthesis '(' on "
            "line 1");
  EXPECT_EQ(LexError("x = [1,\n  2\n"), "t.py:1:5: error: '[' was never closed");
  EXPECT_EQ(LexError("x = 0x\n"), "t.py:1:5: error: invalid hexadecimal literal");
  EXPECT_EQ(LexError("x = 0o19\n"), "t.py:1:8: error: invalid digit '9' in octal literal");
  EXPECT_EQ(LexError("x = 1__0\n"), "t.py:1:6: error: invalid decimal literal");
  EXPECT_EQ(LexError("x = 12abc\n"), "t.py:1:7: error: invalid decimal literal");
  EXPECT_EQ(LexError("x = 007\n"),
            "t.py:1:5: error: leading zeros in decimal integer literals are not permitted; use "
            "an 0o prefix for octal integers");
  EXPECT_EQ(LexError("x = 1 \\ 2\n"),
            "t.py:1:7: error: unexpected character after line continuation character");
  EXPECT_EQ(LexError("x = 1 \\"),
            "t.py:1:7: error: unexpected end of file after line continuation character");
  EXPECT_EQ(LexError(std::string("x = 1\ny\0", 8)),
            "t.py:2:2: error: source code cannot contain null bytes");
  EXPECT_EQ(LexError("x = 'a\xff'\n"), "t.py:1:7: error: invalid UTF-8 byte 0xFF in source");
  EXPECT_EQ(LexError("a ! b\n"), "t.py:1:3: error: unexpected character '!'");
}

TEST(LexerTest, NestingLimits) {
  EXPECT_EQ(LexError(std::string(199, '(') + std::string(199, ')') + "\n"), "OK");
  EXPECT_EQ(LexError(std::string(300, '[')), "t.py:1:201: error: too many nested parentheses");
  std::string deep;
  for (int i = 0; i < 120; ++i) deep += std::string(i, ' ') + "if x:\n";
  EXPECT_EQ(LexError(deep), "t.py:102:102: error: too many levels of indentation");
}

}  // namespace
}  // namespace tilec::frontend
