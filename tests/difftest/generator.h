// A generator of random, valid TileLang programs (as the generator's Program,
// which renders to source text).
//
//   Program p = Generate(seed);            // one 64-bit seed reproduces it
//   std::string text = p.Render();        // `def kernel(...)` + prim_func
//
// Families (a weighted choice, GeneratorOptions::weights):
// - "tile": 1-3 grid dims (a 1-D grid walks its column tiles in a
//   T.Pipelined/T.serial loop), 32-512 threads; tiles of A loaded by T.copy
//   (head address or slice, partial regions at an offset) into shared or
//   fragment buffers or read straight from global under a ragged-edge guard;
//   0-4 transform steps: T.Parallel loops whose shape, destination shape and
//   buffer layout each may be the tile, its transpose or its flattening (so
//   index expressions are affine, div and mod: reshapes, transposes,
//   broadcasts of row and column vectors), element-wise math and casts, scope
//   changes by T.copy, T.reduce_* over either axis with and without clear;
//   stores by T.copy, by guarded T.Parallel (also flattened and transposed
//   outputs), and by atomics (a column vector from every row block).
// - "gemm": T.gemm with random transposes, warp policies and dtypes
//   (float16, bfloat16, float8), A in shared or registers, inside a
//   T.Pipelined K loop of 0-4 stages, then a "tile" epilogue on the
//   accumulator.
// - "local": a per-thread T.alloc_local accumulator over a T.serial loop of
//   global reads (math calls on global elements).
// Problem sizes are random, need not be multiples of the tiles, and each may
// be a dynamic dim.
//
// Validity: programs only read tile buffers after defining them, store each
// output element from one thread of one block (or through atomics), avoid
// math outside its domain (log/sqrt of |x| + 1 ...) and never branch, round
// or cast to integer on a computed float (where the last bit of a rounding
// could flip the result), so that the interpreter is a true oracle.
#ifndef TILEC_TESTS_DIFFTEST_GENERATOR_H_
#define TILEC_TESTS_DIFFTEST_GENERATOR_H_

#include <cstdint>

#include "tests/difftest/program.h"

namespace tilec::difftest {

struct GeneratorWeights {
  double family_tile = 5;
  double family_gemm = 3;
  double family_local = 1;
  double dynamic_dim = 0.25;  // probability that a problem size is a dynamic dim
  double float8 = 0.1;        // weight of the float8 dtypes among input dtypes
  double int32 = 0.15;        // weight of int32 among input dtypes
  // A value written in one T.Parallel shape and read in a loop of another
  // shape through a fragment (a reshape through registers).
  double fragment_reshape = 1;
  double atomics = 0.5;
};

struct GeneratorOptions {
  GeneratorWeights weights;
  // Leaves out the patterns of the open bugs kept under
  // tests/difftest/regressions (status "open"), so that a batch can gate on
  // new bugs while those are being fixed: a fragment written or read by a
  // T.Parallel loop whose shape differs from the fragment's (transposed or
  // flattened) or through an index that is the loop variable written with
  // div and mod ((k // bn) * bn + k % bn), and a math call (T.abs, T.min,
  // T.exp, ...) straight on an element of a shared or global buffer (the
  // host build rejects it).
  bool avoid_open_bugs = false;
  // The float8 types are AMD's fnuz pair (float8_e4m3fnuz, float8_e5m2fnuz:
  // gfx942's float8) instead of the OCP pair NVIDIA targets take.
  bool fnuz_float8 = false;
};

Program Generate(uint64_t seed, const GeneratorOptions& options = {});

}  // namespace tilec::difftest

#endif  // TILEC_TESTS_DIFFTEST_GENERATOR_H_
