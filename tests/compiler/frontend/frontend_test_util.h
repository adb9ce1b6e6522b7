// Helpers shared by the frontend unit tests: build a snippet of TileLang
// (with the usual imports prepended), verify it, and look into the result.
#ifndef TILEC_TESTS_COMPILER_FRONTEND_FRONTEND_TEST_UTIL_H_
#define TILEC_TESTS_COMPILER_FRONTEND_FRONTEND_TEST_UTIL_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/ir/visitor.h"
#include "gtest/gtest.h"

namespace tilec::frontend::test_util {

using Binds = std::vector<std::pair<std::string, std::string>>;

inline constexpr char kPrelude[] = "import math\nimport tilelang\nimport tilelang.language as T\n";

inline absl::StatusOr<ir::Program> Build(const std::string& src, std::string_view fn,
                                         const Binds& binds = {}) {
  SourceFile file{"test.py", kPrelude + src};
  Bindings b;
  for (const auto& [k, v] : binds) b.Set(k, v);
  return CompileTileLang(file, fn, b);
}

// The first line of a failed build's message; fails the test when the
// program builds.
inline std::string ErrorOf(const std::string& src, std::string_view fn, const Binds& b = {}) {
  absl::StatusOr<ir::Program> p = Build(src, fn, b);
  EXPECT_FALSE(p.ok()) << "built:\n" << (p.ok() ? ir::Print(*p) : "");
  if (p.ok()) return "";
  std::string m(p.status().message());
  return m.substr(0, m.find('\n'));
}

// Builds and verifies; records a failure (and returns an empty program) if
// either step fails.
inline ir::Program Ok(const std::string& src, std::string_view fn, const Binds& binds = {}) {
  absl::StatusOr<ir::Program> p = Build(src, fn, binds);
  EXPECT_TRUE(p.ok()) << p.status().message();
  if (!p.ok()) return ir::Program{};
  absl::Status v = ir::Verify(*p);
  EXPECT_TRUE(v.ok()) << v.message() << "\n" << ir::Print(*p);
  return *p;
}

// Statements of type N in pre-order.
template <typename N>
std::vector<const N*> Find(const ir::Program& p) {
  struct Collector : ir::IRVisitor {
    using ir::IRVisitor::Visit;
    void Visit(const ir::Stmt& s) override {
      if (s) {
        if (const N* n = s->as<N>()) found.push_back(n);
      }
      ir::IRVisitor::Visit(s);
    }
    std::vector<const N*> found;
  } c;
  if (p.body) c.Visit(p.body);
  return c.found;
}

inline std::vector<int64_t> ConstShape(const ir::Buffer& b) {
  std::vector<int64_t> out;
  for (const ir::Expr& e : b->shape) out.push_back(ir::AsConstInt(e).value_or(-1));
  return out;
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace tilec::frontend::test_util

#endif  // TILEC_TESTS_COMPILER_FRONTEND_FRONTEND_TEST_UTIL_H_
