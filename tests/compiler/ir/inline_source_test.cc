#include "compiler/ir/inline_source.h"

#include <gtest/gtest.h>

#include <string>

namespace tilec::ir {
namespace {

// "line:col: message" of the first problem, or "" when the text passes.
std::string Check(const std::string& text) {
  std::optional<InlineSourceProblem> p = CheckInlineSource(text);
  if (!p) return "";
  return std::to_string(p->line) + ":" + std::to_string(p->column) + ": " + p->message;
}

TEST(InlineSourceTest, OrdinaryDeviceCodePasses) {
  EXPECT_EQ(Check(""), "");
  EXPECT_EQ(Check("#define SCALE 2.0f\n"
                  "#if SCALE > 1\n"
                  "__device__ __forceinline__ float scale(float x) { return SCALE * x; }\n"
                  "#endif\n"
                  "#pragma unroll\n"
                  "// include nothing: a comment may say include\n"
                  "/* #include <x> */\n"
                  "static const char* kName = \"#include <stdio.h>\";\n"
                  "static const char kHash = '#';\n"
                  "#define STR(x) #x\n"
                  "int line = 1'000 + 0x1p-3 + 1e+5;\n"),
            "");
}

TEST(InlineSourceTest, IncludeFamilyIsRefusedWithItsLocation) {
  EXPECT_EQ(Check("#include \"/etc/passwd\"").rfind("1:2: `include` is refused", 0), 0);
  EXPECT_EQ(Check("int x;\n  #  include </etc/shadow>").rfind("2:6: `include` is refused", 0), 0);
  EXPECT_EQ(Check("#include_next <x>").rfind("1:2: `include_next`", 0), 0);
  EXPECT_EQ(Check("#embed \"/etc/passwd\"").rfind("1:2: `embed`", 0), 0);
  EXPECT_EQ(Check("#import \"x\"").rfind("1:2: `import`", 0), 0);
  EXPECT_EQ(Check("#if __has_include(\"/etc/shadow\")\n#endif").rfind("1:5: `__has_include`", 0),
            0);
  EXPECT_EQ(Check("_Pragma(\"x\")").rfind("1:1: `_Pragma`", 0), 0);
  EXPECT_EQ(Check("#pragma include_alias(\"a\", \"/etc/passwd\")").rfind("1:9: `include_alias`", 0),
            0);
}

TEST(InlineSourceTest, DisguisedSpellingsAreCaught) {
  // A comment between # and the directive name.
  EXPECT_EQ(Check("# /*x*/ include \"/etc/passwd\"").rfind("1:9: `include`", 0), 0);
  // Backslash-newline inside the name: reported where the name starts.
  EXPECT_EQ(Check("#inc\\\nlude \"/etc/passwd\"").rfind("1:2: `include`", 0), 0);
  EXPECT_EQ(Check("#\\\ninclude \"/etc/passwd\"").rfind("2:1: `include`", 0), 0);
  // Digraph.
  EXPECT_EQ(Check("%:include \"/etc/passwd\"").rfind("1:3: `include`", 0), 0);
  // Token pasting, trigraphs, universal character names, raw strings.
  EXPECT_NE(Check("#define C(a, b) a##b").find("token pasting"), std::string::npos);
  EXPECT_NE(Check("#define C(a, b) a %:%: b").find("token pasting"), std::string::npos);
  EXPECT_NE(Check(std::string("??") + "=include \"x\"").find("trigraphs"), std::string::npos);
  EXPECT_NE(Check("#\\u0069nclude \"x\"").find("backslash"), std::string::npos);
  EXPECT_NE(Check("const char* s = R\"x(\")x\";\n#include \"y\"").find("raw string"),
            std::string::npos);
  // A string that does not close ends at the newline: the next line is code.
  EXPECT_EQ(Check("const char* s = \"abc\n#include \"/etc/passwd\"").rfind("2:2: `include`", 0), 0);
  EXPECT_NE(Check("/* never closed\n#include \"x\"").find("unterminated comment"),
            std::string::npos);
}

TEST(InlineSourceTest, LineDirectivesAreRefused) {
  EXPECT_EQ(Check("#line 1 \"/etc/passwd\"").rfind("1:2: `#line` is refused", 0), 0);
  EXPECT_EQ(Check("# 1 \"/etc/passwd\"").rfind("1:3: a `# <line>` marker is refused", 0), 0);
  EXPECT_EQ(Check("int line = 3;"), "");  // only the directive
}

}  // namespace
}  // namespace tilec::ir
