#include "compiler/ir/hash.h"

#include <openssl/evp.h>

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tilec::ir {
namespace {

// Tags that open each node and list in the encoding. Values are part of the
// schema: never renumber, only append (and bump kHashSchemaVersion).
enum class Tag : uint8_t {
  kNull = 0,
  kProgram = 1,
  kExprDomain = 2,
  kTensorParam = 3,
  kScalarParam = 4,
  kDynDim = 5,
  kTileParam = 6,
  kList = 7,
  kFastMath = 8,
  kNoWarpSpecialization = 9,
  // Expressions
  kIntImm = 16,
  kFloatImm = 17,
  kVarRef = 18,
  kBinary = 19,
  kUnary = 20,
  kSelect = 21,
  kCast = 22,
  kCall = 23,
  kLoad = 24,
  // Definitions and references
  kVarDef = 32,
  kBufferDef = 33,
  kBufferRef = 34,
  kRegion = 35,
  kLayout = 36,
  // Statements
  kSeq = 48,
  kKernel = 49,
  kAllocate = 50,
  kFor = 51,
  kIf = 52,
  kStore = 53,
  kLet = 54,
  kCopy = 55,
  kGemm = 56,
  kFill = 57,
  kReduce = 58,
  kCumsum = 59,
  kAtomicAdd = 60,
  kAnnotateLayout = 61,
  kUseSwizzle = 62,
  kAtomicMax = 63,
  kAtomicMin = 64,
  kWhile = 65,
  kDisableTma = 66,    // a T.copy that must not use TMA
  kAtomicResult = 67,  // return_prev=True: the variable receiving the old value
};

// How a variable or buffer reference is resolved.
enum class RefClass : uint8_t {
  kLocal = 1,        // bound in the body: index of its binding site
  kScalarParam = 2,  // index in Program.params
  kDynDim = 3,       // index in Program.dyn_dims
  kTileParam = 4,    // index in Program.tile_params
  kTensorParam = 5,  // index in Program.params
  kFree = 6,         // none of the above: order of first use, then name
};

// Fixed codes for the IR's enums.
uint8_t Code(DType t) {
  switch (t) {
    case DType::kBool: return 1;
    case DType::kInt4: return 2;
    case DType::kInt8: return 3;
    case DType::kUInt8: return 4;
    case DType::kInt16: return 5;
    case DType::kInt32: return 6;
    case DType::kInt64: return 7;
    case DType::kFloat8E4M3: return 8;
    case DType::kFloat8E5M2: return 9;
    case DType::kFloat16: return 10;
    case DType::kBFloat16: return 11;
    case DType::kFloat32: return 12;
    case DType::kFloat64: return 13;
    case DType::kUInt16: return 14;
    case DType::kUInt32: return 15;
    case DType::kUInt64: return 16;
    case DType::kFloat8E4M3FNUZ: return 17;
    case DType::kFloat8E5M2FNUZ: return 18;
  }
  return 255;
}

uint8_t Code(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return 1;
    case BinaryOp::kSub: return 2;
    case BinaryOp::kMul: return 3;
    case BinaryOp::kDiv: return 4;
    case BinaryOp::kMod: return 5;
    case BinaryOp::kFloorDiv: return 6;
    case BinaryOp::kFloorMod: return 7;
    case BinaryOp::kMin: return 8;
    case BinaryOp::kMax: return 9;
    case BinaryOp::kEq: return 10;
    case BinaryOp::kNe: return 11;
    case BinaryOp::kLt: return 12;
    case BinaryOp::kLe: return 13;
    case BinaryOp::kGt: return 14;
    case BinaryOp::kGe: return 15;
    case BinaryOp::kAnd: return 16;
    case BinaryOp::kOr: return 17;
    case BinaryOp::kBitAnd: return 18;
    case BinaryOp::kBitOr: return 19;
    case BinaryOp::kBitXor: return 20;
    case BinaryOp::kShl: return 21;
    case BinaryOp::kShr: return 22;
  }
  return 255;
}

uint8_t Code(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNeg: return 1;
    case UnaryOp::kNot: return 2;
    case UnaryOp::kBitNot: return 3;
  }
  return 255;
}

uint8_t Code(CallFn fn) {
  switch (fn) {
    case CallFn::kAbs: return 1;
    case CallFn::kCeilDiv: return 2;
    case CallFn::kExp: return 3;
    case CallFn::kExp2: return 4;
    case CallFn::kLog: return 5;
    case CallFn::kLog2: return 6;
    case CallFn::kSqrt: return 7;
    case CallFn::kRsqrt: return 8;
    case CallFn::kTanh: return 9;
    case CallFn::kSigmoid: return 10;
    case CallFn::kSin: return 11;
    case CallFn::kCos: return 12;
    case CallFn::kErf: return 13;
    case CallFn::kFloor: return 14;
    case CallFn::kCeil: return 15;
    case CallFn::kRound: return 16;
    case CallFn::kPow: return 17;
    case CallFn::kThreadIndex: return 18;
    case CallFn::kReinterpret: return 19;
    case CallFn::kTan: return 20;
    case CallFn::kAsin: return 21;
    case CallFn::kAcos: return 22;
    case CallFn::kAtan: return 23;
    case CallFn::kSinh: return 24;
    case CallFn::kCosh: return 25;
    case CallFn::kAsinh: return 26;
    case CallFn::kAcosh: return 27;
    case CallFn::kAtanh: return 28;
    case CallFn::kLog10: return 29;
    case CallFn::kLog1p: return 30;
    case CallFn::kExp10: return 31;
    case CallFn::kExpm1: return 32;
    case CallFn::kTrunc: return 33;
    case CallFn::kAtan2: return 34;
    case CallFn::kFmod: return 35;
    case CallFn::kHypot: return 36;
    case CallFn::kCopysign: return 37;
    case CallFn::kPopcount: return 38;
    case CallFn::kClz: return 39;
  }
  return 255;
}

uint8_t Code(Scope s) {
  switch (s) {
    case Scope::kGlobal: return 1;
    case Scope::kShared: return 2;
    case Scope::kFragment: return 3;
    case Scope::kLocal: return 4;
    case Scope::kVar: return 5;
  }
  return 255;
}

uint8_t Code(ForKind k) {
  switch (k) {
    case ForKind::kSerial: return 1;
    case ForKind::kParallel: return 2;
    case ForKind::kPipelined: return 3;
    case ForKind::kUnrolled: return 4;
    case ForKind::kVectorized: return 5;
  }
  return 255;
}

uint8_t Code(GemmPolicy p) {
  switch (p) {
    case GemmPolicy::kSquare: return 1;
    case GemmPolicy::kFullRow: return 2;
    case GemmPolicy::kFullCol: return 3;
  }
  return 255;
}

uint8_t Code(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum: return 1;
    case ReduceKind::kMax: return 2;
    case ReduceKind::kMin: return 3;
    case ReduceKind::kAbsSum: return 4;
    case ReduceKind::kAbsMax: return 5;
  }
  return 255;
}

uint8_t Code(Layout::Kind k) {
  switch (k) {
    case Layout::Kind::kSwizzled: return 1;
    case Layout::Kind::kCustom: return 2;
  }
  return 255;
}

class Encoder {
 public:
  // Fresh state: nothing bound, no interface.
  Encoder() = default;

  const std::string& bytes() const { return out_; }

  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void T(Tag t) { U8(static_cast<uint8_t>(t)); }
  void Bool(bool b) { U8(b ? 1 : 0); }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double v) { U64(std::bit_cast<uint64_t>(v)); }
  void Str(std::string_view s) {
    U64(s.size());
    out_.append(s);
  }
  void Count(size_t n) {
    T(Tag::kList);
    U64(n);
  }

  // The interface of a program; references to these resolve by position.
  void DeclareInterface(const Program& p) {
    for (size_t i = 0; i < p.params.size(); ++i) {
      if (p.params[i].tensor) {
        buffer_iface_.try_emplace(p.params[i].tensor.get(), RefClass::kTensorParam, i);
      } else if (p.params[i].scalar) {
        var_iface_.try_emplace(p.params[i].scalar.get(), RefClass::kScalarParam, i);
      }
    }
    for (size_t i = 0; i < p.dyn_dims.size(); ++i) {
      var_iface_.try_emplace(p.dyn_dims[i].get(), RefClass::kDynDim, i);
    }
    for (size_t i = 0; i < p.tile_params.size(); ++i) {
      var_iface_.try_emplace(p.tile_params[i].var.get(), RefClass::kTileParam, i);
    }
  }

  void Shape(const std::vector<Expr>& shape) { Exprs(shape); }

  void Exprs(const std::vector<Expr>& es) {
    Count(es.size());
    for (const Expr& e : es) E(e);
  }

  void Ints(const std::vector<int64_t>& vs) {
    Count(vs.size());
    for (int64_t v : vs) I64(v);
  }

  void E(const Expr& e) {
    if (!e) return T(Tag::kNull);
    switch (e->kind) {
      case ExprKind::kIntImm:
        T(Tag::kIntImm);
        U8(Code(e->dtype));
        I64(e->as<IntImmNode>()->value);
        return;
      case ExprKind::kFloatImm:
        T(Tag::kFloatImm);
        U8(Code(e->dtype));
        F64(e->as<FloatImmNode>()->value);
        return;
      case ExprKind::kVar: return VarRef(e->as<VarNode>());
      case ExprKind::kBinary: {
        const auto* n = e->as<BinaryNode>();
        T(Tag::kBinary);
        U8(Code(e->dtype));
        U8(Code(n->op));
        E(n->a);
        E(n->b);
        return;
      }
      case ExprKind::kUnary: {
        const auto* n = e->as<UnaryNode>();
        T(Tag::kUnary);
        U8(Code(e->dtype));
        U8(Code(n->op));
        E(n->a);
        return;
      }
      case ExprKind::kSelect: {
        const auto* n = e->as<SelectNode>();
        T(Tag::kSelect);
        U8(Code(e->dtype));
        E(n->cond);
        E(n->t);
        E(n->f);
        return;
      }
      case ExprKind::kCast:
        T(Tag::kCast);
        U8(Code(e->dtype));
        E(e->as<CastNode>()->value);
        return;
      case ExprKind::kCall: {
        const auto* n = e->as<CallNode>();
        T(Tag::kCall);
        U8(Code(e->dtype));
        U8(Code(n->fn));
        Exprs(n->args);
        return;
      }
      case ExprKind::kLoad: {
        const auto* n = e->as<LoadNode>();
        T(Tag::kLoad);
        U8(Code(e->dtype));
        BufferRef(n->buffer);
        Exprs(n->indices);
        return;
      }
    }
  }

  void S(const Stmt& s) {
    if (!s) return T(Tag::kNull);
    switch (s->kind) {
      case StmtKind::kSeq: {
        const auto& stmts = s->as<SeqNode>()->stmts;
        T(Tag::kSeq);
        Count(stmts.size());
        Frame frame(this);
        for (const Stmt& c : stmts) S(c);
        return;
      }
      case StmtKind::kKernel: {
        const auto* n = s->as<KernelNode>();
        T(Tag::kKernel);
        Exprs(n->grid);
        E(n->threads);
        Str(n->prelude);
        Frame frame(this);
        Count(n->block_vars.size());
        for (const Var& v : n->block_vars) BindVar(v);
        Body(n->body);
        return;
      }
      case StmtKind::kAllocate: {
        const auto* n = s->as<AllocateNode>();
        T(Tag::kAllocate);
        E(n->init);
        BindBuffer(n->buffer);
        return;
      }
      case StmtKind::kFor: {
        const auto* n = s->as<ForNode>();
        T(Tag::kFor);
        U8(Code(n->kind));
        E(n->min);
        E(n->extent);
        E(n->num_stages);
        Ints(n->order);
        Ints(n->stage);
        Frame frame(this);
        BindVar(n->var);
        Body(n->body);
        return;
      }
      case StmtKind::kIf: {
        const auto* n = s->as<IfNode>();
        T(Tag::kIf);
        E(n->cond);
        Body(n->then_case);
        Body(n->else_case);
        return;
      }
      case StmtKind::kWhile: {
        const auto* n = s->as<WhileNode>();
        T(Tag::kWhile);
        E(n->cond);
        Body(n->body);
        return;
      }
      case StmtKind::kStore: {
        const auto* n = s->as<StoreNode>();
        T(Tag::kStore);
        BufferRef(n->buffer);
        Exprs(n->indices);
        E(n->value);
        return;
      }
      case StmtKind::kLet: {
        const auto* n = s->as<LetNode>();
        T(Tag::kLet);
        E(n->value);
        BindVar(n->var);
        return;
      }
      case StmtKind::kCopy: {
        const auto* n = s->as<CopyNode>();
        T(Tag::kCopy);
        R(n->src);
        R(n->dst);
        // Only when set, so every program hashed before the flag keeps its hash.
        if (n->disable_tma) T(Tag::kDisableTma);
        return;
      }
      case StmtKind::kGemm: {
        const auto* n = s->as<GemmNode>();
        T(Tag::kGemm);
        R(n->a);
        R(n->b);
        R(n->c);
        Bool(n->transpose_a);
        Bool(n->transpose_b);
        U8(Code(n->policy));
        Bool(n->clear_accum);
        return;
      }
      case StmtKind::kFill: {
        const auto* n = s->as<FillNode>();
        T(Tag::kFill);
        R(n->dst);
        E(n->value);
        return;
      }
      case StmtKind::kReduce: {
        const auto* n = s->as<ReduceNode>();
        T(Tag::kReduce);
        U8(Code(n->reduce_kind));
        BufferRef(n->src);
        BufferRef(n->dst);
        I64(n->dim);
        Bool(n->clear);
        return;
      }
      case StmtKind::kCumsum: {
        const auto* n = s->as<CumsumNode>();
        T(Tag::kCumsum);
        BufferRef(n->src);
        BufferRef(n->dst);
        I64(n->dim);
        Bool(n->reverse);
        return;
      }
      case StmtKind::kAtomicAdd: {
        const auto* n = s->as<AtomicAddNode>();
        T(Tag::kAtomicAdd);
        // An add hashes as before atomic max/min existed.
        if (n->op != AtomicOp::kAdd) T(n->op == AtomicOp::kMax ? Tag::kAtomicMax : Tag::kAtomicMin);
        R(n->dst);
        if (n->src) {
          R(*n->src);
        } else {
          T(Tag::kNull);
        }
        E(n->value);
        if (n->result) {
          T(Tag::kAtomicResult);
          BufferRef(n->result);
        }
        return;
      }
      case StmtKind::kAnnotateLayout: {
        const auto* n = s->as<AnnotateLayoutNode>();
        T(Tag::kAnnotateLayout);
        BufferRef(n->buffer);
        T(Tag::kLayout);
        U8(Code(n->layout.kind));
        Frame frame(this);
        Count(n->layout.vars.size());
        for (const Var& v : n->layout.vars) BindVar(v);
        Exprs(n->layout.indices);
        return;
      }
      case StmtKind::kUseSwizzle: {
        const auto* n = s->as<UseSwizzleNode>();
        T(Tag::kUseSwizzle);
        E(n->panel_size);
        Bool(n->column_major);
        Bool(n->enable);
        return;
      }
    }
  }

  // A statement in a scope of its own: a Let or Allocate directly under a
  // loop or branch is not visible after it.
  void Body(const Stmt& s) {
    Frame frame(this);
    S(s);
  }

 private:
  // Bindings made since the frame opened are undone when it closes.
  class Frame {
   public:
    explicit Frame(Encoder* e) : e_(e) { e_->frames_.emplace_back(); }
    ~Frame() {
      for (const VarNode* v : e_->frames_.back().vars) e_->var_bindings_[v].pop_back();
      for (const BufferNode* b : e_->frames_.back().buffers) e_->buffer_bindings_[b].pop_back();
      e_->frames_.pop_back();
    }
    Frame(const Frame&) = delete;
    Frame& operator=(const Frame&) = delete;

   private:
    Encoder* e_;
  };
  struct FrameBindings {
    std::vector<const VarNode*> vars;
    std::vector<const BufferNode*> buffers;
  };

  void BindVar(const Var& v) {
    if (!v) return T(Tag::kNull);
    T(Tag::kVarDef);
    U8(Code(v->dtype));
    var_bindings_[v.get()].push_back(next_var_++);
    frames_.back().vars.push_back(v.get());
  }

  void BindBuffer(const Buffer& b) {
    if (!b) return T(Tag::kNull);
    T(Tag::kBufferDef);
    U8(Code(b->dtype));
    U8(Code(b->scope));
    Shape(b->shape);
    buffer_bindings_[b.get()].push_back(next_buffer_++);
    frames_.back().buffers.push_back(b.get());
  }

  void VarRef(const VarNode* v) {
    T(Tag::kVarRef);
    if (auto it = var_bindings_.find(v); it != var_bindings_.end() && !it->second.empty()) {
      U8(static_cast<uint8_t>(RefClass::kLocal));
      U64(it->second.back());
      return;
    }
    if (auto it = var_iface_.find(v); it != var_iface_.end()) {
      U8(static_cast<uint8_t>(it->second.first));
      U64(it->second.second);
      return;
    }
    auto [it, inserted] = free_vars_.try_emplace(v, free_vars_.size());
    U8(static_cast<uint8_t>(RefClass::kFree));
    U64(it->second);
    Str(v->name);
    U8(Code(v->dtype));
  }

  void BufferRef(const Buffer& b) {
    if (!b) return T(Tag::kNull);
    T(Tag::kBufferRef);
    if (auto it = buffer_bindings_.find(b.get());
        it != buffer_bindings_.end() && !it->second.empty()) {
      U8(static_cast<uint8_t>(RefClass::kLocal));
      U64(it->second.back());
      return;
    }
    if (auto it = buffer_iface_.find(b.get()); it != buffer_iface_.end()) {
      U8(static_cast<uint8_t>(it->second.first));
      U64(it->second.second);
      return;
    }
    auto [it, inserted] = free_buffers_.try_emplace(b.get(), free_buffers_.size());
    U8(static_cast<uint8_t>(RefClass::kFree));
    U64(it->second);
    Str(b->name);
    U8(Code(b->dtype));
    U8(Code(b->scope));
    Shape(b->shape);
  }

  void R(const Region& r) {
    T(Tag::kRegion);
    BufferRef(r.buffer);
    Exprs(r.mins);
    Exprs(r.extents);
  }

  std::string out_;
  std::vector<FrameBindings> frames_ = std::vector<FrameBindings>(1);
  uint64_t next_var_ = 0;
  uint64_t next_buffer_ = 0;
  std::unordered_map<const VarNode*, std::vector<uint64_t>> var_bindings_;
  std::unordered_map<const BufferNode*, std::vector<uint64_t>> buffer_bindings_;
  std::unordered_map<const VarNode*, std::pair<RefClass, uint64_t>> var_iface_;
  std::unordered_map<const BufferNode*, std::pair<RefClass, uint64_t>> buffer_iface_;
  std::unordered_map<const VarNode*, uint64_t> free_vars_;
  std::unordered_map<const BufferNode*, uint64_t> free_buffers_;
};

std::string Sha256Hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr) != 1 ||
      len != 32) {
    // OpenSSL without SHA-256 cannot produce a cache key at all; there is no
    // meaningful fallback value.
    std::fprintf(stderr, "tilec: internal error (compiler bug): SHA-256 unavailable in OpenSSL\n");
    std::abort();
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 15]);
  }
  return hex;
}

}  // namespace

std::string ProgramHash(const Program& program) {
  Encoder enc;
  enc.T(Tag::kProgram);
  enc.U64(kHashSchemaVersion);
  enc.DeclareInterface(program);
  enc.Str(program.name);
  enc.Count(program.params.size());
  for (const Param& p : program.params) {
    if (p.tensor) {
      enc.T(Tag::kTensorParam);
      enc.Str(p.tensor->name);
      enc.U8(Code(p.tensor->dtype));
      enc.U8(Code(p.tensor->scope));
      enc.Shape(p.tensor->shape);
      enc.Bool(p.view.has_value());
      if (p.view) {
        enc.Shape(p.view->shape);
        enc.Count(p.view->axes.size());
        for (int32_t a : p.view->axes) enc.I64(a);
      }
    } else if (p.scalar) {
      enc.T(Tag::kScalarParam);
      enc.Str(p.scalar->name);
      enc.U8(Code(p.scalar->dtype));
    } else {
      enc.T(Tag::kNull);
    }
  }
  enc.Count(program.dyn_dims.size());
  for (const Var& d : program.dyn_dims) {
    enc.T(Tag::kDynDim);
    enc.Str(d ? d->name : "");
    enc.U8(d ? Code(d->dtype) : 0);
  }
  enc.Count(program.tile_params.size());
  for (const TileParam& t : program.tile_params) {
    enc.T(Tag::kTileParam);
    enc.Str(t.var ? t.var->name : "");
    enc.U8(t.var ? Code(t.var->dtype) : 0);
    enc.Bool(t.value.has_value());
    enc.I64(t.value.value_or(0));
    enc.Ints(t.candidates);
  }
  enc.Body(program.body);
  enc.Count(program.device_queries.size());
  for (const std::string& q : program.device_queries) enc.Str(q);
  // Last, and only when there are any: programs without them hash as before.
  if (!program.requirements.empty()) {
    enc.Count(program.requirements.size());
    for (const Requirement& r : program.requirements) {
      enc.E(r.cond);
      enc.Str(r.message);
    }
  }
  // Likewise: programs without fast math hash as before.
  if (program.fast_math) enc.T(Tag::kFastMath);
  if (program.disable_warp_specialized) enc.T(Tag::kNoWarpSpecialization);
  return Sha256Hex(enc.bytes());
}

std::string ExprHash(const Expr& expr) {
  Encoder enc;
  enc.T(Tag::kExprDomain);
  enc.U64(kHashSchemaVersion);
  enc.E(expr);
  return Sha256Hex(enc.bytes());
}

}  // namespace tilec::ir
