// What the source says of a function before it runs (kernel_style.cc):
// the decorators and statements that tell how it builds its kernel, for
// frontend.cc's choice of style.
#ifndef TILEC_COMPILER_FRONTEND_KERNEL_STYLE_H_
#define TILEC_COMPILER_FRONTEND_KERNEL_STYLE_H_

#include <string>
#include <vector>

#include "compiler/frontend/ast.h"

namespace tilec::frontend {

bool IsPrimFuncDecorator(const Expr& d);
// @tilelang.lazy_jit (bare or with options) or @T.prim_func(generator=True).
bool IsSignatureGenerator(const FunctionDefStmt& def);
// A @T.prim_func defined anywhere inside the function.
bool HasNestedPrimFunc(const FunctionDefStmt& def);
// Eager style: the parameters annotated in the body (`A: T.Tensor(...)`),
// and the names declared with T.const("M, N").
void ScanEager(const FunctionDefStmt& def, std::vector<std::string>* annotated,
               std::vector<std::string>* consts);
// Whether a parameter annotation is written as a tensor type.
bool TensorAnnotation(const Expr* e);
// A `with` block (T.Kernel) or TIR's thread loops.
bool OpensKernel(const Stmt& s);
// Whether any statement of `body`, in nested functions and classes too,
// opens a kernel.
bool AnyKernel(const StmtList& body);
// Every parameter annotated, one a tensor, and a body that opens T.Kernel.
bool SignatureKernel(const FunctionDefStmt& def);
// The body opens a kernel, annotates a name or declares T.const sizes.
bool LooksEager(const FunctionDefStmt& def);
// The functions a curried generator returns by name (see kernel_style.cc).
std::vector<const FunctionDefStmt*> CurriedInner(const FunctionDefStmt& def);
// The functions a generator's body defines under an @autotune decorator
// (`@autotune(configs=...) @jit(...) def kernel(block_N=None, ...)`, then
// `return kernel()`), other than those in `curried`: what the call leaves
// open the autotuner would choose, so their parameters are bound with -D.
std::vector<const FunctionDefStmt*> AutotunedInner(
    const FunctionDefStmt& def, const std::vector<const FunctionDefStmt*>& curried);
// A plain parameter (not *args or **kwargs), which -D may bind.
bool Bindable(const Param& p);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_KERNEL_STYLE_H_
