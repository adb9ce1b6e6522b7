// Random numbers in kernels, as curand's device API draws them with the
// Philox4_32_10 generator (docs/language.md "Random numbers"):
//
//   T.rng_init(seed, seq=None, off=0, generator="curandStatePhilox4_32_10_t")
//   T.rng_rand()                                   uint32
//   T.rng_rand_float(bit=32, dist="uniform")       float32 (bit=64: float64;
//                                                  dist="normal": N(0, 1))
//
// Each thread has its own generator state; T.rng_init seeds it as
// curand_init(seed, seq, off, &state) does (seq defaults to the thread's
// linear index over the whole launch), and every draw advances it as
// curand(), curand_uniform(), curand_uniform_double(), curand_normal() and
// curand_normal_double() do. The generator is written out here as ordinary
// IR over a thread-private uint32 buffer (32-bit integer arithmetic, the
// 64-bit products the high words come from, the float math of the
// conversions), so the interpreter, the emulator and every target compute
// the very same words. The state is allocated at the top of the kernel, so a
// T.rng_init inside a branch seeds a state that the rest of the kernel sees.
//
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11): a 128-bit counter (c0..c3) and a 64-bit key (k0, k1); ten
// rounds of
//   (c0, c1, c2, c3) <- (hi(M1 c2) ^ c1 ^ k0, lo(M1 c2), hi(M0 c0) ^ c3 ^ k1, lo(M0 c0))
// with the key advanced by (W0, W1) between rounds. The position in the
// stream is (counter, index of the next word of the current output block).
#include <array>

#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"

namespace tilec::frontend {
namespace {

using Args = std::vector<std::optional<Arg>>;
using ir::BinaryOp;
using ir::DType;
using Stmts = std::vector<ir::Stmt>;

constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // key increments
constexpr std::string_view kPhilox = "curandStatePhilox4_32_10_t";

// Slots of the state buffer.
enum Slot : int64_t {
  kCounter = 0,        // 4 words, low first
  kKey = 4,            // 2 words, low first
  kOutput = 6,         // the current output block, 4 words
  kIndex = 10,         // the next word of the output block to return, 0..3
  kNormalFlag = 11,    // a float32 normal is cached
  kNormal64Flag = 12,  // a float64 normal is cached
  kWords = 13,
};

ir::Expr U32(uint32_t v) { return ir::IntImm(v, DType::kUInt32); }
ir::Expr U64(uint64_t v) { return ir::IntImm(static_cast<int64_t>(v), DType::kUInt64); }
ir::Expr Bin(BinaryOp op, ir::Expr a, ir::Expr b) {
  return ir::Binary(op, std::move(a), std::move(b));
}

// Builds the statements of one generator operation, binding intermediate
// values to fresh lets so that no expression is written out twice.
class RngCode {
 public:
  explicit RngCode(const Builder::RngState& st) : st_(st) {}

  ir::Expr Word(int64_t slot) const { return ir::Load(st_.words, {ir::IntImm(slot)}); }
  void SetWord(Stmts& out, int64_t slot, ir::Expr v) const {
    out.push_back(ir::Store(st_.words, {ir::IntImm(slot)}, std::move(v)));
  }
  ir::Expr Let(Stmts& out, std::string_view name, ir::Expr v) {
    ir::Var var = ir::MakeVar(Cat("rng_", name), v->dtype);
    out.push_back(ir::Let(var, std::move(v)));
    return var;
  }

  // The high 32 bits of m * x (x a uint32 expression).
  static ir::Expr MulHi(uint32_t m, const ir::Expr& x) {
    ir::Expr wide = Bin(BinaryOp::kMul, U64(m), ir::Cast(DType::kUInt64, x));
    return ir::Cast(DType::kUInt32, Bin(BinaryOp::kShr, wide, U64(32)));
  }

  // output <- Philox4x32-10(counter c, key).
  void Block(Stmts& out, std::array<ir::Expr, 4> c) {
    const ir::Expr k0 = Let(out, "k0", Word(kKey)), k1 = Let(out, "k1", Word(kKey + 1));
    for (uint32_t round = 0; round < 10; ++round) {
      const ir::Expr rk0 = round == 0 ? k0 : Bin(BinaryOp::kAdd, k0, U32(round * kW0));
      const ir::Expr rk1 = round == 0 ? k1 : Bin(BinaryOp::kAdd, k1, U32(round * kW1));
      std::array<ir::Expr, 4> n = {
          Bin(BinaryOp::kBitXor, Bin(BinaryOp::kBitXor, MulHi(kM1, c[2]), c[1]), rk0),
          Bin(BinaryOp::kMul, U32(kM1), c[2]),
          Bin(BinaryOp::kBitXor, Bin(BinaryOp::kBitXor, MulHi(kM0, c[0]), c[3]), rk1),
          Bin(BinaryOp::kMul, U32(kM0), c[0]),
      };
      for (int i = 0; i < 4; ++i) c[i] = Let(out, Cat("x", i), std::move(n[i]));
    }
    for (int i = 0; i < 4; ++i) SetWord(out, kOutput + i, c[i]);
  }

  // curand_init(seed, seq, off): counter (off / 4, seq), key seed, the word
  // off % 4 of the first block next, no cached normals.
  Stmts Init(const ir::Expr& seed, const ir::Expr& seq, const ir::Expr& off) {
    Stmts out;
    const ir::Expr s = Let(out, "seed", seed), q = Let(out, "seq", seq), o = Let(out, "off", off);
    auto lo = [](const ir::Expr& e) { return ir::Cast(DType::kUInt32, e); };
    auto hi = [](const ir::Expr& e) {
      return ir::Cast(DType::kUInt32, Bin(BinaryOp::kShr, e, U64(32)));
    };
    const ir::Expr n = Bin(BinaryOp::kShr, o, U64(2));
    std::array<ir::Expr, 4> c = {Let(out, "c0", lo(n)), Let(out, "c1", hi(n)),
                                 Let(out, "c2", lo(q)), Let(out, "c3", hi(q))};
    for (int i = 0; i < 4; ++i) SetWord(out, kCounter + i, c[i]);
    SetWord(out, kKey, lo(s));
    SetWord(out, kKey + 1, hi(s));
    SetWord(out, kIndex, lo(Bin(BinaryOp::kBitAnd, o, U64(3))));
    SetWord(out, kNormalFlag, U32(0));
    SetWord(out, kNormal64Flag, U32(0));
    Block(out, c);
    return out;
  }

  // curand(): the next word; after the block's last word the counter steps
  // by one and the next block is made. Returns the word (a let).
  ir::Expr Draw(Stmts& out) {
    const ir::Expr at = Let(out, "at", Word(kIndex));
    auto is = [&](uint32_t i) { return Bin(BinaryOp::kEq, at, U32(i)); };
    ir::Expr word = ir::Select(is(0), Word(kOutput),
                               ir::Select(is(1), Word(kOutput + 1),
                                          ir::Select(is(2), Word(kOutput + 2), Word(kOutput + 3))));
    const ir::Expr r = Let(out, "r", std::move(word));
    Stmts next;
    std::array<ir::Expr, 4> c;
    ir::Expr carry;  // every lower word wrapped to zero
    for (int i = 0; i < 4; ++i) {
      ir::Expr add = i == 0 ? U32(1) : ir::Select(carry, U32(1), U32(0));
      c[i] = Let(next, Cat("c", i), Bin(BinaryOp::kAdd, Word(kCounter + i), std::move(add)));
      SetWord(next, kCounter + i, c[i]);
      ir::Expr zero = Bin(BinaryOp::kEq, c[i], U32(0));
      carry = i == 0 ? zero : Bin(BinaryOp::kAnd, carry, zero);
    }
    Block(next, c);
    SetWord(next, kIndex, U32(0));
    out.push_back(
        ir::If(is(3), ir::Seq(std::move(next)),
               ir::Store(st_.words, {ir::IntImm(kIndex)}, Bin(BinaryOp::kAdd, at, U32(1)))));
    return r;
  }

  // curand_uniform(): x * 2^-32 + 2^-33 in float32, in (0, 1].
  ir::Expr Uniform(Stmts& out) {
    ir::Expr x = ir::Cast(DType::kFloat32, Draw(out));
    return Bin(BinaryOp::kAdd, Bin(BinaryOp::kMul, x, ir::FloatImm(0x1p-32, DType::kFloat32)),
               ir::FloatImm(0x1p-33, DType::kFloat32));
  }
  // curand_uniform_double(): one word, x * 2^-32 + 2^-32.
  ir::Expr UniformDouble(Stmts& out) {
    ir::Expr x = ir::Cast(DType::kFloat64, Draw(out));
    return Bin(BinaryOp::kAdd, Bin(BinaryOp::kMul, x, ir::FloatImm(0x1p-32, DType::kFloat64)),
               ir::FloatImm(0x1p-32, DType::kFloat64));
  }

  // curand_normal() / curand_normal_double(): Box-Muller on two words
  // (float32) or two 53-bit values of two words each (float64); the sine
  // result is returned and the cosine one kept for the next call.
  ir::Expr Normal(Stmts& out, bool f64) {
    const ir::Buffer& buf = f64 ? st_.normal64 : st_.normal;
    const int64_t flag = f64 ? kNormal64Flag : kNormalFlag;
    const DType t = f64 ? DType::kFloat64 : DType::kFloat32;
    auto f = [&](double v) { return ir::FloatImm(v, t); };
    Stmts fresh;
    ir::Expr u, v;
    if (!f64) {
      // u = x 2^-32 + 2^-33, v = y (2^-32 * 2pi) + (2^-32 * 2pi) / 2, in float32.
      const double two_pi_inv32 = static_cast<double>(6.2831855f) * 0x1p-32;
      ir::Expr x = ir::Cast(t, Draw(fresh));
      ir::Expr y = ir::Cast(t, Draw(fresh));
      u = Bin(BinaryOp::kAdd, Bin(BinaryOp::kMul, x, f(0x1p-32)), f(0x1p-33));
      v = Bin(BinaryOp::kAdd, Bin(BinaryOp::kMul, y, f(two_pi_inv32)), f(two_pi_inv32 / 2));
    } else {
      // z = w0 ^ (w1 << 21); u = zx 2^-53 + 2^-54, v = (zy 2^-52 + 2^-53) pi.
      auto z = [&]() {
        ir::Expr w0 = ir::Cast(DType::kUInt64, Draw(fresh));
        ir::Expr w1 = ir::Cast(DType::kUInt64, Draw(fresh));
        return ir::Cast(t, Bin(BinaryOp::kBitXor, w0, Bin(BinaryOp::kShl, w1, U64(21))));
      };
      ir::Expr zx = Let(fresh, "zx", z());
      ir::Expr zy = Let(fresh, "zy", z());
      u = Bin(BinaryOp::kAdd, Bin(BinaryOp::kMul, zx, f(0x1p-53)), f(0x1p-54));
      v = Bin(BinaryOp::kMul, Bin(BinaryOp::kAdd, Bin(BinaryOp::kMul, zy, f(0x1p-52)), f(0x1p-53)),
              f(3.1415926535897932));
    }
    const ir::Expr uu = Let(fresh, "u", u), vv = Let(fresh, "v", v);
    const ir::Expr s =
        Let(fresh, "s",
            ir::Call(ir::CallFn::kSqrt,
                     {Bin(BinaryOp::kMul, f(-2.0), ir::Call(ir::CallFn::kLog, {uu}))}));
    fresh.push_back(
        ir::Store(buf, {ir::IntImm(0)}, Bin(BinaryOp::kMul, ir::Call(ir::CallFn::kCos, {vv}), s)));
    fresh.push_back(
        ir::Store(buf, {ir::IntImm(1)}, Bin(BinaryOp::kMul, ir::Call(ir::CallFn::kSin, {vv}), s)));
    SetWord(fresh, flag, U32(1));
    Stmts cached;
    cached.push_back(ir::Store(buf, {ir::IntImm(1)}, ir::Load(buf, {ir::IntImm(0)})));
    SetWord(cached, flag, U32(0));
    out.push_back(ir::If(Bin(BinaryOp::kEq, Word(flag), U32(0)), ir::Seq(std::move(fresh)),
                         ir::Seq(std::move(cached))));
    return Let(out, "normal", ir::Load(buf, {ir::IntImm(1)}));
  }

 private:
  const Builder::RngState& st_;
};

// The kernel's threads per block; 0 when that is not a constant.
int64_t BlockThreads(const Builder& b) {
  int64_t threads = 1;
  for (int64_t d : b.kernel_thread_dims()) threads *= d;
  return b.kernel_thread_dims().empty() ? 0 : threads;
}

absl::Status EmitAll(Builder& b, Stmts stmts, SourceLoc loc, std::string_view what) {
  for (ir::Stmt& s : stmts) {
    if (absl::Status st = b.Emit(std::move(s), loc, what); !st.ok()) return st;
  }
  return absl::OkStatus();
}

// Where a generator call cannot be: outside a kernel, or in a T.Parallel
// loop, whose iterations the threads share out in an order of the
// compiler's choosing, unless the kernel has one thread, which runs them in
// order (the loops become serial).
absl::Status CheckPlace(Builder& b, SourceLoc loc, std::string_view what) {
  if (!b.InKernel()) return b.Err(loc, Cat(what, " outside a T.Kernel"));
  if (b.InParallel() && BlockThreads(b) == 1) {
    b.NoteDrawInParallel();
  } else if (b.InParallel()) {
    return b.Err(loc, Cat(what,
                          " inside T.Parallel of a kernel of more than one thread: which thread "
                          "runs which iteration, and in what order, is the compiler's choice, so "
                          "the draws would depend on it; draw in per-thread code (a T.serial "
                          "loop over each thread's elements) instead"));
  }
  if (b.InWarpGroupScope()) {
    return b.Err(loc, Cat(what,
                          " inside `with T.ws(...)` is not supported: tilec runs a "
                          "warp-specialised region as block code"));
  }
  return absl::OkStatus();
}

// T.rng_init's default seq: the thread's linear index over the launch,
// threadIdx (x fastest) + threads per block * the linear block index
// (blockIdx.x fastest).
absl::StatusOr<ir::Expr> DefaultSeq(Builder& b, SourceLoc loc) {
  const int64_t threads = BlockThreads(b);
  if (threads == 0) {
    return b.Err(loc,
                 "T.rng_init() without seq= needs the kernel's thread count to be a constant "
                 "(the default seq numbers every thread of the launch)");
  }
  auto u64 = [](const ir::Expr& e) { return ir::Cast(DType::kUInt64, e); };
  ir::Expr block = U64(0), below = U64(1);
  for (size_t d = 0; d < b.kernel_block_vars().size(); ++d) {
    block = Bin(BinaryOp::kAdd, block, Bin(BinaryOp::kMul, below, u64(b.kernel_block_vars()[d])));
    below = Bin(BinaryOp::kMul, below, u64(b.kernel_grid()[d]));
  }
  ir::Expr seq = Bin(BinaryOp::kMul, U64(static_cast<uint64_t>(threads)), block);
  if (threads > 1) {
    seq = Bin(BinaryOp::kAdd, u64(ir::Call(ir::CallFn::kThreadIndex, {})), seq);
  }
  return seq;
}

absl::StatusOr<Value> RngInit(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.rng_init", {"seed", "seq", "off", "generator"}, 1);
  if (!a.ok()) return a.status();
  if (absl::Status s = CheckPlace(b, args.loc, "T.rng_init"); !s.ok()) return s;
  if ((*a)[3] && (*a)[3]->value.kind != ValueKind::kNone) {
    absl::StatusOr<std::string> g = b.StaticStr((*a)[3]->value, (*a)[3]->loc, "generator");
    if (!g.ok()) return g.status();
    if (*g != kPhilox) {
      const bool curand = *g == "curandStateXORWOW_t" || *g == "curandStateMRG32k3a_t";
      return b.Err((*a)[3]->loc,
                   Cat("T.rng_init(generator=\"", *g, "\"): ",
                       curand ? "tilec implements curand's Philox4_32_10 generator only"
                              : "not a curand generator; tilec implements",
                       " (generator=\"", kPhilox, "\", the default)"));
    }
  }
  absl::StatusOr<ir::Expr> seed = b.ExprAs((*a)[0]->value, DType::kUInt64, (*a)[0]->loc);
  if (!seed.ok()) return seed.status();
  absl::StatusOr<ir::Expr> seq;
  if ((*a)[1] && (*a)[1]->value.kind != ValueKind::kNone) {
    seq = b.ExprAs((*a)[1]->value, DType::kUInt64, (*a)[1]->loc);
  } else {
    seq = DefaultSeq(b, args.loc);
  }
  if (!seq.ok()) return seq.status();
  absl::StatusOr<ir::Expr> off = U64(0);
  if ((*a)[2] && (*a)[2]->value.kind != ValueKind::kNone) {
    off = b.ExprAs((*a)[2]->value, DType::kUInt64, (*a)[2]->loc);
  }
  if (!off.ok()) return off.status();
  Builder::RngState& st = b.rng();
  if (!st.words) {
    st.words = ir::MakeBuffer("rng_state", DType::kUInt32, {ir::IntImm(kWords)}, ir::Scope::kLocal);
    absl::Status s = b.EmitAtKernelTop(ir::Allocate(st.words), args.loc, "T.rng_init");
    if (!s.ok()) return s;
  }
  RngCode code(st);
  if (absl::Status s = EmitAll(b, code.Init(*seed, *seq, *off), args.loc, "T.rng_init"); !s.ok()) {
    return s;
  }
  return Value::None();
}

// The generator a draw reads: the kernel's, seeded before.
absl::Status CheckSeeded(Builder& b, SourceLoc loc, std::string_view what) {
  if (absl::Status s = CheckPlace(b, loc, what); !s.ok()) return s;
  if (!b.rng().words) {
    return b.Err(loc, Cat(what,
                          " requires a preceding `T.rng_init(...)` in the kernel: it draws from "
                          "the thread's generator, which T.rng_init seeds"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Value> RngRand(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.rng_rand", {}, 0);
  if (!a.ok()) return a.status();
  if (absl::Status s = CheckSeeded(b, args.loc, "T.rng_rand()"); !s.ok()) return s;
  RngCode code(b.rng());
  Stmts out;
  ir::Expr r = code.Draw(out);
  if (absl::Status s = EmitAll(b, std::move(out), args.loc, "T.rng_rand"); !s.ok()) return s;
  return Value::Runtime(r);
}

absl::StatusOr<Value> RngRandFloat(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.rng_rand_float", {"bit", "dist"}, 0);
  if (!a.ok()) return a.status();
  int64_t bit = 32;
  if ((*a)[0]) {
    absl::StatusOr<int64_t> n = b.StaticInt((*a)[0]->value, (*a)[0]->loc, "bit");
    if (!n.ok()) return n.status();
    if (*n != 32 && *n != 64) {
      return b.Err((*a)[0]->loc, Cat("T.rng_rand_float(bit=", *n, "): bit is 32 or 64"));
    }
    bit = *n;
  }
  std::string dist = "uniform";
  if ((*a)[1]) {
    absl::StatusOr<std::string> d = b.StaticStr((*a)[1]->value, (*a)[1]->loc, "dist");
    if (!d.ok()) return d.status();
    if (*d != "uniform" && *d != "normal") {
      return b.Err((*a)[1]->loc,
                   Cat("T.rng_rand_float(dist=\"", *d, "\"): dist is \"uniform\" or \"normal\""));
    }
    dist = *d;
  }
  if (absl::Status s = CheckSeeded(b, args.loc, "T.rng_rand_float()"); !s.ok()) return s;
  Builder::RngState& st = b.rng();
  const bool f64 = bit == 64;
  ir::Buffer& normal = f64 ? st.normal64 : st.normal;
  if (dist == "normal" && !normal) {
    normal =
        ir::MakeBuffer(f64 ? "rng_normal64" : "rng_normal", f64 ? DType::kFloat64 : DType::kFloat32,
                       {ir::IntImm(2)}, ir::Scope::kLocal);
    absl::Status s = b.EmitAtKernelTop(ir::Allocate(normal), args.loc, "T.rng_rand_float");
    if (!s.ok()) return s;
  }
  RngCode code(st);
  Stmts out;
  ir::Expr r = dist == "normal" ? code.Normal(out, f64)
               : f64            ? code.UniformDouble(out)
                                : code.Uniform(out);
  if (absl::Status s = EmitAll(b, std::move(out), args.loc, "T.rng_rand_float"); !s.ok()) return s;
  return Value::Runtime(r);
}

}  // namespace

std::optional<absl::StatusOr<Value>> CallTlRandom(Builder& b, std::string_view name,
                                                  CallArgs& args) {
  if (name == "T.rng_init") return RngInit(b, args);
  if (name == "T.rng_rand") return RngRand(b, args);
  if (name == "T.rng_rand_float") return RngRandFloat(b, args);
  return std::nullopt;
}

}  // namespace tilec::frontend
