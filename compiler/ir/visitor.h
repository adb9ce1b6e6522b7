// Walking and rewriting the tile IR.
//
// IRVisitor visits every node, recursing by default; override a Visit method
// to act on one kind and call the base to keep recursing. IRMutator rebuilds
// the tree bottom-up and returns the very same node when nothing below it
// changed, so unchanged subtrees stay shared.
#ifndef TILEC_COMPILER_IR_VISITOR_H_
#define TILEC_COMPILER_IR_VISITOR_H_

#include "compiler/ir/ir.h"

namespace tilec::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;

  virtual void Visit(const Expr& e);
  virtual void Visit(const Stmt& s);
  // Visits the mins and extents; the buffer itself through VisitBuffer.
  virtual void VisitRegion(const Region& r);
  // Called wherever a buffer is referenced; visits its shape by default.
  virtual void VisitBuffer(const Buffer& b);
  void VisitProgram(const Program& p);
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;

  virtual Expr Mutate(const Expr& e);
  virtual Stmt Mutate(const Stmt& s);
  virtual Region MutateRegion(const Region& r);
  // Buffers are kept as they are by default; override to substitute them.
  virtual Buffer MutateBuffer(const Buffer& b) { return b; }

 protected:
  std::vector<Expr> MutateAll(const std::vector<Expr>& es, bool* changed);
};

}  // namespace tilec::ir

#endif  // TILEC_COMPILER_IR_VISITOR_H_
