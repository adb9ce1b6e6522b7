// Helpers for building small tile programs by hand in interpreter tests.
#ifndef TILEC_TESTS_COMPILER_INTERP_TEST_PROGRAMS_H_
#define TILEC_TESTS_COMPILER_INTERP_TEST_PROGRAMS_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace tilec::interp::testing {

inline std::vector<ir::Expr> Ints(std::initializer_list<int64_t> values) {
  std::vector<ir::Expr> out;
  for (int64_t v : values) out.push_back(ir::IntImm(v));
  return out;
}

inline ir::Buffer Global(std::string name, ir::DType t, std::initializer_list<int64_t> shape) {
  return ir::MakeBuffer(std::move(name), t, Ints(shape), ir::Scope::kGlobal);
}

inline ir::Buffer Local(std::string name, ir::DType t, std::initializer_list<int64_t> shape,
                        ir::Scope scope = ir::Scope::kFragment) {
  return ir::MakeBuffer(std::move(name), t, Ints(shape), scope);
}

inline ir::Stmt Kernel(std::vector<ir::Expr> grid, std::vector<ir::Var> block_vars, ir::Stmt body) {
  auto k = std::make_shared<ir::KernelNode>();
  k->grid = std::move(grid);
  k->block_vars = std::move(block_vars);
  k->threads = ir::IntImm(128);
  k->body = std::move(body);
  return k;
}

// A kernel with a single block.
inline ir::Stmt OneBlock(ir::Stmt body) {
  return Kernel(Ints({1}), {ir::MakeVar("bx")}, std::move(body));
}

inline ir::Program MakeProgram(std::vector<ir::Buffer> tensors, ir::Stmt body,
                               std::vector<ir::Var> dyn_dims = {}) {
  ir::Program p;
  p.name = "test";
  for (ir::Buffer& t : tensors) p.params.push_back(ir::Param{std::move(t), nullptr});
  p.dyn_dims = std::move(dyn_dims);
  p.body = ir::Seq({std::move(body)});
  return p;
}

inline ir::Region RegionOf(const ir::Buffer& b, std::vector<ir::Expr> mins,
                           std::vector<ir::Expr> extents) {
  return ir::Region{b, std::move(mins), std::move(extents)};
}

inline ir::Expr Add(ir::Expr a, ir::Expr b) {
  return ir::Binary(ir::BinaryOp::kAdd, std::move(a), std::move(b));
}
inline ir::Expr Mul(ir::Expr a, ir::Expr b) {
  return ir::Binary(ir::BinaryOp::kMul, std::move(a), std::move(b));
}

}  // namespace tilec::interp::testing

#endif  // TILEC_TESTS_COMPILER_INTERP_TEST_PROGRAMS_H_
