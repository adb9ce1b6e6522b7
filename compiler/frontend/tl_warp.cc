// Warp shuffles and warp reductions in per-thread code (docs/language.md,
// "Warp shuffles"): T.shfl_xor, T.shfl_down, T.shfl_up, T.shfl_sync (value,
// delta or source lane, width=32, mask) and T.warp_reduce_{sum,max,min,
// bitand,bitor}(value).
//
// Per-thread code runs statement by statement for the whole block
// (ir/thread_dependence.h), so an exchange between lanes is two statements:
// every thread stores its value into its slot of a shared buffer, then each
// reads the slot of the lane it takes the value from (the CUDA code places
// the barrier between them). The partner follows CUDA's rules for a width
// of 2^k lanes: xor within the lane's segment and earlier ones (a later one
// gives the thread's own value), down / up within the segment (else its own
// value), sync from the segment's lane `src % width`. A warp reduction folds
// the 32 slots of the thread's warp in lane order, so every lane gets the
// same bits; in a block whose thread count is not a multiple of 32, the last
// warp folds the lanes it has.
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"

namespace tilec::frontend {
namespace {

using ir::BinaryOp;
using ir::Expr;

Expr Bin(BinaryOp op, Expr a, Expr b) { return ir::Binary(op, std::move(a), std::move(b)); }
Expr Int(int64_t v) { return ir::IntImm(v); }

// The block's thread count, or an error naming `name` when the code cannot
// exchange values between lanes (a shuffle needs whole warps; a reduction
// takes a last warp that is partial, `partial`).
absl::StatusOr<int64_t> Threads(Builder& b, std::string_view name, SourceLoc loc,
                                bool partial = false) {
  if (!b.InKernel()) return b.Err(loc, Cat(name, " outside a T.Kernel"));
  if (b.InWarpGroupScope()) {
    return b.Err(loc, Cat(name,
                          " inside `with T.ws(...)` is not supported: tilec runs a "
                          "warp-specialised region as block code"));
  }
  const std::vector<int64_t>& dims = b.kernel_thread_dims();
  if (dims.empty() || dims[0] == 0) {
    return b.Err(loc, Cat(name, " needs the kernel's thread count to be a constant"));
  }
  int64_t threads = 1;
  for (int64_t d : dims) threads *= d;
  if (threads % 32 != 0 && !partial) {
    return b.Err(loc, Cat(name, " needs whole warps; the kernel has ", threads, " threads"));
  }
  return threads;
}

// Every thread's `value` into its slot of a new shared buffer.
absl::StatusOr<ir::Buffer> Slots(Builder& b, std::string_view name, const Expr& value,
                                 int64_t threads, SourceLoc loc) {
  ir::Buffer slots =
      ir::MakeBuffer(b.TakeNameHint("lanes"), value->dtype, {Int(threads)}, ir::Scope::kShared);
  absl::Status st = b.Emit(ir::Allocate(slots), loc, name);
  if (!st.ok()) return st;
  st = b.Emit(ir::Store(slots, {ir::Call(ir::CallFn::kThreadIndex, {})}, value), loc, name);
  if (!st.ok()) return st;
  return slots;
}

absl::StatusOr<Value> Shuffle(Builder& b, std::string_view name, CallArgs& args) {
  const bool sync = name == "T.shfl_sync";
  absl::StatusOr<std::vector<std::optional<Arg>>> a =
      BindArgs(b, args, name, {"value", sync ? "srcLane" : "delta", "width", "mask"}, 2);
  if (!a.ok()) return a.status();
  absl::StatusOr<int64_t> threads = Threads(b, name, args.loc);
  if (!threads.ok()) return threads.status();
  int64_t width = 32;
  if ((*a)[2] && (*a)[2]->value.kind != ValueKind::kNone) {
    absl::StatusOr<int64_t> w = b.StaticInt((*a)[2]->value, (*a)[2]->loc, "the width");
    if (!w.ok()) return w.status();
    if (*w < 1 || *w > 32 || (*w & (*w - 1)) != 0) {
      return b.Err((*a)[2]->loc, Cat(name, ": the width is a power of two up to 32, got ", *w));
    }
    width = *w;
  }
  absl::StatusOr<ir::Expr> value = b.ExprOf((*a)[0]->value, (*a)[0]->loc);
  if (!value.ok()) return value.status();
  absl::StatusOr<ir::Expr> delta = b.ExprAs((*a)[1]->value, ir::DType::kInt32, (*a)[1]->loc);
  if (!delta.ok()) return delta.status();
  absl::StatusOr<ir::Buffer> slots = Slots(b, name, *value, *threads, args.loc);
  if (!slots.ok()) return slots.status();
  const Expr tid = ir::Call(ir::CallFn::kThreadIndex, {});
  const Expr lane = Bin(BinaryOp::kFloorMod, tid, Int(32));
  const Expr seg = Bin(BinaryOp::kFloorMod, tid, Int(width));  // lane within its segment
  const Expr base = Bin(BinaryOp::kSub, tid, seg);             // the segment's first thread
  Expr partner;
  if (name == "T.shfl_xor") {
    const Expr src = Bin(BinaryOp::kBitXor, lane, *delta);
    const Expr end = Bin(BinaryOp::kAdd, Bin(BinaryOp::kSub, lane, seg), Int(width));
    partner = ir::Select(Bin(BinaryOp::kLt, src, end),
                         Bin(BinaryOp::kAdd, Bin(BinaryOp::kSub, tid, lane), src), tid);
  } else if (name == "T.shfl_down") {
    partner = ir::Select(Bin(BinaryOp::kLt, Bin(BinaryOp::kAdd, seg, *delta), Int(width)),
                         Bin(BinaryOp::kAdd, tid, *delta), tid);
  } else if (name == "T.shfl_up") {
    partner = ir::Select(Bin(BinaryOp::kGe, Bin(BinaryOp::kSub, seg, *delta), Int(0)),
                         Bin(BinaryOp::kSub, tid, *delta), tid);
  } else {
    partner = Bin(BinaryOp::kAdd, base, Bin(BinaryOp::kFloorMod, *delta, Int(width)));
  }
  return Value::Runtime(ir::Load(*slots, {partner}));
}

absl::StatusOr<Value> WarpReduce(Builder& b, std::string_view name, CallArgs& args) {
  absl::StatusOr<std::vector<std::optional<Arg>>> a = BindArgs(b, args, name, {"value"}, 1);
  if (!a.ok()) return a.status();
  absl::StatusOr<int64_t> threads = Threads(b, name, args.loc, /*partial=*/true);
  if (!threads.ok()) return threads.status();
  absl::StatusOr<ir::Expr> value = b.ExprOf((*a)[0]->value, (*a)[0]->loc);
  if (!value.ok()) return value.status();
  const ir::DType t = (*value)->dtype;
  const std::string_view op = name.substr(std::string_view("T.warp_reduce_").size());
  BinaryOp combine = BinaryOp::kAdd;
  if (op == "max") combine = BinaryOp::kMax;
  if (op == "min") combine = BinaryOp::kMin;
  if (op == "bitand" || op == "bitor") {
    if (!ir::IsInt(t)) {
      return b.Err(args.loc, Cat(name, " takes an integer value, got ", ir::DTypeName(t)));
    }
    combine = op == "bitand" ? BinaryOp::kBitAnd : BinaryOp::kBitOr;
  }
  absl::StatusOr<ir::Buffer> slots = Slots(b, name, *value, *threads, args.loc);
  if (!slots.ok()) return slots.status();
  const Expr tid = ir::Call(ir::CallFn::kThreadIndex, {});
  const Expr warp = Bin(BinaryOp::kSub, tid, Bin(BinaryOp::kFloorMod, tid, Int(32)));
  ir::Buffer acc = ir::MakeBuffer(b.TakeNameHint("warp_sum"), t, {Int(1)}, ir::Scope::kVar);
  absl::Status st = b.Emit(ir::Allocate(acc, ir::Load(*slots, {warp})), args.loc, name);
  if (!st.ok()) return st;
  ir::Var r = ir::MakeVar("r", ir::DType::kInt32);
  const Expr lane = Bin(BinaryOp::kAdd, warp, r);
  Expr next = Bin(combine, ir::Load(acc, {Int(0)}), ir::Load(*slots, {lane}));
  ir::Stmt fold = ir::Store(acc, {Int(0)}, next);
  // The last warp of a block of 32k + m threads has m lanes: it folds those.
  if (*threads % 32 != 0) fold = ir::If(Bin(BinaryOp::kLt, lane, Int(*threads)), fold);
  st = b.Emit(ir::For(r, Int(1), Int(31), ir::ForKind::kSerial, fold), args.loc, name);
  if (!st.ok()) return st;
  return Value::Runtime(ir::Load(acc, {Int(0)}));
}

}  // namespace

std::optional<absl::StatusOr<Value>> CallTlWarp(Builder& b, std::string_view name, CallArgs& args) {
  if (name == "T.shfl_xor" || name == "T.shfl_down" || name == "T.shfl_up" ||
      name == "T.shfl_sync") {
    return Shuffle(b, name, args);
  }
  if (name == "T.tvm_warp_shuffle") {
    // TVM's intrinsic: tvm_warp_shuffle(mask, value, lane, width, warp_size),
    // CUDA's __shfl_sync(mask, value, lane, width).
    absl::StatusOr<std::vector<std::optional<Arg>>> a =
        BindArgs(b, args, name, {"mask", "value", "lane", "width", "warp_size"}, 4);
    if (!a.ok()) return a.status();
    if ((*a)[4]) {
      absl::StatusOr<int64_t> ws = b.StaticInt((*a)[4]->value, (*a)[4]->loc, "the warp size");
      if (!ws.ok()) return ws.status();
      if (*ws != 32) return b.Err((*a)[4]->loc, Cat(name, ": the warp size is 32, got ", *ws));
    }
    CallArgs sync;
    sync.loc = args.loc;
    sync.positional = {*(*a)[1], *(*a)[2], *(*a)[3], *(*a)[0]};
    return Shuffle(b, "T.shfl_sync", sync);
  }
  if (name == "T.warp_reduce_sum" || name == "T.warp_reduce_max" || name == "T.warp_reduce_min" ||
      name == "T.warp_reduce_bitand" || name == "T.warp_reduce_bitor") {
    return WarpReduce(b, name, args);
  }
  return std::nullopt;
}

}  // namespace tilec::frontend
