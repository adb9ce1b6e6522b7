// Reducers (T.alloc_reducer / T.finalize_reducer): a fragment that the
// iterations of a T.Parallel nest accumulate into,
//
//   r = T.alloc_reducer((N,), "float32", op="sum")
//   T.clear(r)
//   for i, j in T.Parallel(M, N):
//       r[j] += A[i, j]
//   T.finalize_reducer(r)
//
// computes r[j] = r[j] + sum over i. LowerReducers rewrites each such nest
// (lets, then one store into a reducer at the nest's variables but one, in
// order, whose value is the element combined with the reducer's op: + for
// sum, T.max / T.min) into the nest storing the contributions into a
// fragment over the whole nest, then T.reduce_<op> of that fragment along
// the missing variable into the reducer (clear=False); a one-loop nest may
// also accumulate into element 0 of a reducer of shape [1] (`total[0] +=
// x[i]`), reduced along its loop. T.finalize_reducer
// needs nothing more. A nest of another form is left as written (layout
// inference refuses a read-modify-write across iterations).
#ifndef TILEC_COMPILER_FRONTEND_REDUCERS_H_
#define TILEC_COMPILER_FRONTEND_REDUCERS_H_

#include <map>

#include "compiler/ir/ir.h"

namespace tilec::frontend {

using ReducerMap = std::map<const ir::BufferNode*, ir::ReduceKind>;

ir::Stmt LowerReducers(const ir::Stmt& body, const ReducerMap& reducers);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_REDUCERS_H_
