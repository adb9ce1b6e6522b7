#include "runtime/json.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tilec::runtime::json {
namespace {

using ::testing::HasSubstr;

TEST(Json, ReadsEveryKind) {
  absl::StatusOr<Value> v = Parse(R"( {"a": [1, -2, 3.5, 1e3], "b": {"c": "x\"\u00e9\ud83d\ude00"},
                                       "t": true, "f": false, "n": null} )");
  ASSERT_TRUE(v.ok()) << v.status();
  const Value* a = v->Find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->array().size(), 4u);
  EXPECT_TRUE(a->array()[0].is_int());
  EXPECT_EQ(a->array()[1].int_value(), -2);
  EXPECT_EQ(a->array()[2].kind(), Value::Kind::kDouble);
  EXPECT_DOUBLE_EQ(a->array()[2].number(), 3.5);
  EXPECT_DOUBLE_EQ(a->array()[3].number(), 1000.0);
  EXPECT_EQ(v->Find("b")->Find("c")->string(), "x\"\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE(v->Find("t")->bool_value());
  EXPECT_EQ(v->Find("n")->kind(), Value::Kind::kNull);
  EXPECT_EQ(v->Find("missing"), nullptr);
}

TEST(Json, ErrorsNameTheByte) {
  struct Case {
    std::string text, message;
  } cases[] = {
      {"{\"a\": 1,}", "expected a member name"},
      {"[1 2]", "expected ',' or ']'"},
      {"\"abc", "unterminated string"},
      {"{\"a\": 1} x", "unexpected text after"},
      {"\"\\ud800\"", "unpaired UTF-16 surrogate"},
      {"{\"a\": 1, \"a\": 2}", "duplicate member"},
      {"-", "invalid value"},
      {"\"\x01\"", "control character"},
      {"", "unexpected end of input"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Value> v = Parse(c.text);
    ASSERT_FALSE(v.ok()) << c.text;
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(v.status().message(), HasSubstr(c.message)) << c.text;
    EXPECT_THAT(v.status().message(), HasSubstr("JSON at byte ")) << c.text;
  }
}

TEST(Json, DeepNestingIsRefusedNotACrash) {
  std::string deep(100000, '[');
  absl::StatusOr<Value> v = Parse(deep);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("nesting deeper than 64"));
  std::string ok = std::string(kMaxDepth, '[') + std::string(kMaxDepth, ']');
  EXPECT_TRUE(Parse(ok).ok());
}

}  // namespace
}  // namespace tilec::runtime::json
