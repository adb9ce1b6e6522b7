#include "compiler/ir/names.h"

#include <string>

#include "compiler/ir/ir.h"
#include "compiler/ir/limits.h"
#include "gtest/gtest.h"

namespace tilec::ir {
namespace {

using namespace std::string_literals;

TEST(NamesTest, IdentifiersAreAsciiLettersDigitsAndUnderscores) {
  for (const std::string& ok : {"k"s, "_"s, "A_shared"s, "x9"s, "__x"s, std::string(256, 'a')}) {
    EXPECT_TRUE(IsIdentifier(ok)) << ok;
  }
  for (const std::string& bad :
       {""s, "9x"s, "a b"s, "k\n__device__ int marker = 42;\n//"s, "a\"b"s, "a*/b"s, "#define"s,
        "a\0b"s, "k\\"s, "caf\xc3\xa9"s, "a.b"s, "a-b"s, "a\rb"s, std::string(257, 'a')}) {
    EXPECT_FALSE(IsIdentifier(bad)) << QuoteName(bad);
  }
}

TEST(NamesTest, TheProblemNamesTheFirstBadByteAndWhere) {
  EXPECT_EQ(NameProblem("k\nx"),
            "is not an identifier: byte 0x0a (a newline) at offset 1 is not a letter, digit or "
            "'_' (names are ASCII identifiers)");
  EXPECT_NE(NameProblem("a\0b"s).find("byte 0x00 (NUL) at offset 1"), std::string::npos);
  EXPECT_NE(NameProblem("9a").find("byte 0x39 ('9') at offset 0 is not a letter or '_'"),
            std::string::npos);
  EXPECT_NE(NameProblem("\xc3\xa9").find("(not ASCII)"), std::string::npos);
  EXPECT_EQ(NameProblem(""), "is empty");
  EXPECT_NE(NameProblem(std::string(300, 'a')).find("300 characters long"), std::string::npos);
  EXPECT_EQ(CharacterProblem(std::string(300, 'a')), "");
}

TEST(NamesTest, QuotedNamesHoldOnlyPrintableAscii) {
  EXPECT_EQ(QuoteName("k\n\"x\"\0\\"s), "k\\x0a\"x\"\\x00\\x5c");
  EXPECT_EQ(QuoteName("caf\xc3\xa9"), "caf\\xc3\\xa9");
  const std::string quoted = QuoteName(std::string(100, '\n'));
  EXPECT_EQ(quoted.find('\n'), std::string::npos);
  EXPECT_NE(quoted.find("(100 characters)"), std::string::npos) << quoted;
}

TEST(NamesTest, NonAsciiBytesAreSpelledAsIdentifierCharacters) {
  EXPECT_EQ(SpellNonAscii("A_shared"), "A_shared");
  EXPECT_EQ(SpellNonAscii("caf\xc3\xa9"), "caf_xc3_xa9");
  EXPECT_TRUE(IsIdentifier(SpellNonAscii("\xce\xb1_tile")));
  // Only non-ASCII bytes change: the verifier still sees a newline.
  EXPECT_EQ(SpellNonAscii("a\n\xff"), "a\n_xff");
  // MakeVar and MakeBuffer spell them.
  EXPECT_EQ(MakeVar("\xce\xb1")->name, "_xce_xb1");
  EXPECT_EQ(MakeBuffer("\xce\xb2", DType::kFloat32, {IntImm(4)}, Scope::kShared)->name, "_xce_xb2");
}

TEST(NamesTest, CheckNamesFindsABadNameAnywhereInTheProgram) {
  Program p;
  p.name = "k";
  Buffer a = MakeBuffer("A", DType::kFloat32, {IntImm(4)}, Scope::kGlobal);
  p.params.push_back({a, nullptr});
  Var i = MakeVar("i\n#include </etc/passwd>");
  Buffer s = MakeBuffer("S", DType::kFloat32, {IntImm(4)}, Scope::kShared);
  p.body = Seq(
      {Allocate(s), For(i, IntImm(0), IntImm(4), ForKind::kSerial, Store(a, {i}, Load(s, {i})))});
  absl::Status st = CheckNames(p);
  ASSERT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_NE(st.message().find("variable 'i\\x0a#include </etc/passwd>'"), absl::string_view::npos)
      << st;
  EXPECT_EQ(st.message().find('\n'), absl::string_view::npos);
  p.name = "k\"";
  st = CheckNames(p);
  EXPECT_NE(st.message().find("the program 'k\"'"), absl::string_view::npos) << st;
}

}  // namespace
}  // namespace tilec::ir
