// The staging value model of the TileLang frontend.
//
// tilec has no Python interpreter: the builder evaluates the kernel-building
// function itself, and every Python value it meets is a `Value`. Values split
// into two worlds:
//
// - Staging values, known while the program is built: None, bool, int, float,
//   str, tuple, list, dict, dtypes, functions, modules, layouts, loop and
//   kernel specifications ... They follow Python semantics (int is arbitrary
//   precision in Python; here it is int64, and overflow is a diagnostic).
// - Runtime values: an IR expression (`kExpr`: loop indices, block indices,
//   loads, scalar parameters, dynamic dims and unbound tile parameters, and
//   arithmetic over them), a buffer, one element of a buffer (`kElement`,
//   `A[i, j]`: a load, a store target or a head address for T.copy) or a
//   rectangular region of a buffer (`kRegion`, `A[i, lo:hi]`).
//
// Staging ints and floats remember which function parameters they were
// computed from (`params`, a set of indices into the builder's parameter
// table), so that a bound parameter used as a tile size can be recorded in
// Program.tile_params.
//
// Values are cheap to copy: composite payloads are shared. Lists and dicts are
// shared *mutable* objects, as in Python (`xs.append(1)` is seen by every
// alias); tuples are immutable.
#ifndef TILEC_COMPILER_FRONTEND_VALUE_H_
#define TILEC_COMPILER_FRONTEND_VALUE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/frontend/ast.h"
#include "compiler/ir/ir.h"

namespace tilec::frontend {

// A set of parameter indices (provenance of a staging number).
class ParamSet {
 public:
  void Add(int id);
  void Merge(const ParamSet& other);
  bool empty() const { return ids_.empty(); }
  const std::vector<int>& ids() const { return ids_; }  // sorted, unique

 private:
  std::vector<int> ids_;
};

enum class ValueKind : uint8_t {
  kNone,
  kBool,
  kInt,
  kFloat,
  kStr,
  kTuple,
  kList,
  kDict,
  kDType,       // an element type: T.float16, or a dtype string once parsed
  kExpr,        // a runtime scalar expression
  kBuffer,      // a buffer (parameter, allocation or workspace)
  kElement,     // buffer[i, j, ...] with one scalar index per dimension
  kRegion,      // buffer[lo:hi, j, ...] with at least one slice
  kFunction,    // a `def` or `lambda` of the source file
  kBuiltin,     // a function of TileLang, Python or math, maybe bound to a receiver
  kModule,      // a namespace: T, tilelang, tilelang.layout, math, torch, ...
  kRange,       // a staging-level range(start, stop, step)
  kLoop,        // T.Parallel / T.Pipelined / T.serial / ... awaiting a `for`
  kKernel,      // T.Kernel(...) awaiting a `with`
  kLayout,      // T.Layout(...) or make_swizzled_layout(buf)
  kGemmPolicy,  // T.GemmWarpPolicy.Square, ...
  kTensorType,  // T.Tensor((M, K), dtype): a parameter annotation
  kClass,       // a `class` of the source file
  kObject,      // an instance of such a class
  kSlice,       // slice(start, stop, step): `tuple` holds the three parts (None if absent)
  kGenerator,   // a generator expression: `list` holds its items, `cursor` the next one
  kSet,         // a set of staging values: `list` holds them, each once
  kSuper,       // super() in a method: `klass` the defining class, `tuple` {self}
  kHostTensor,  // a torch tensor of host code: `tensor_type` its shape and dtype (tl_torch.cc)
};

class Env;  // a scope of names (builder.h)
struct Value;
struct FunctionValue;
struct BuiltinValue;
struct LoopSpec;
struct KernelSpec;
struct RangeValue;
struct TensorTypeValue;
struct ElementValue;
struct ClassValue;
struct ObjectValue;
using ValueList = std::vector<Value>;
using DictItems = std::vector<std::pair<Value, Value>>;

struct Value {
  ValueKind kind = ValueKind::kNone;

  // Scalars.
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;                          // kStr; kModule: the module path ("tilelang.language")
  ParamSet params;                        // kInt, kFloat, kBool: parameters the value derives from
  ir::DType dtype = ir::DType::kFloat32;  // kDType (the element type of a vector dtype)
  int lanes = 1;                          // kDType: float16x2 has 2
  ir::GemmPolicy policy = ir::GemmPolicy::kSquare;

  // Runtime values.
  ir::Expr expr;      // kExpr
  ir::Buffer buffer;  // kBuffer
  std::shared_ptr<const ElementValue> element;
  std::shared_ptr<const ir::Region> region;

  // Composites.
  std::shared_ptr<const ValueList> tuple;
  std::shared_ptr<ValueList> list;
  std::shared_ptr<DictItems> dict;
  std::shared_ptr<const FunctionValue> function;
  std::shared_ptr<const BuiltinValue> builtin;
  std::shared_ptr<const RangeValue> range;
  std::shared_ptr<const LoopSpec> loop;
  std::shared_ptr<const KernelSpec> kernel;
  std::shared_ptr<const ir::Layout> layout;
  std::shared_ptr<const TensorTypeValue> tensor_type;
  // Classes and instances are shared mutable objects, as in Python
  // (`self.x = 1` is seen through every alias; so is `Cls.x = 1`).
  std::shared_ptr<ClassValue> klass;
  std::shared_ptr<ObjectValue> object;
  // kGenerator: index of the next item; shared, so that a generator is
  // consumed once whatever aliases it.
  std::shared_ptr<size_t> cursor;

  // Constructors.
  static Value None();
  static Value Bool(bool v, ParamSet params = {});
  static Value Int(int64_t v, ParamSet params = {});
  static Value Float(double v, ParamSet params = {});
  static Value Str(std::string v);
  static Value Tuple(ValueList items);
  static Value List(ValueList items);
  static Value Dict(DictItems items);
  static Value DType(ir::DType t, int lanes = 1);
  static Value Runtime(ir::Expr e);
  static Value BufferRef(ir::Buffer b);
  static Value Element(ir::Buffer b, std::vector<ir::Expr> indices);
  static Value RegionRef(ir::Region r);
  static Value Function(FunctionValue fn);
  static Value Builtin(std::string name, std::shared_ptr<const Value> self = nullptr);
  static Value Module(std::string path);
  static Value Range(int64_t start, int64_t stop, int64_t step);
  static Value Loop(LoopSpec spec);
  static Value Kernel(KernelSpec spec);
  static Value Layout(ir::Layout layout);
  static Value Policy(ir::GemmPolicy p);
  static Value TensorType(std::vector<Value> shape, ir::DType dtype,
                          std::vector<Value> strides = {}, bool any_dtype = false);
  static Value Class(std::shared_ptr<ClassValue> c);
  static Value Object(std::shared_ptr<ObjectValue> o);
  static Value Slice(Value start, Value stop, Value step);
  // A generator over `items` (evaluated eagerly, consumed once).
  static Value Generator(ValueList items);
  // A set of `items` (duplicates dropped); nullopt when an item is a runtime
  // value, whose equality is unknown at staging time.
  static std::optional<Value> Set(const ValueList& items);
  // kGenerator: the items not consumed yet, which are then consumed.
  ValueList TakeRemaining() const;

  bool is(ValueKind k) const { return kind == k; }
  // bool, int or float (Python's numbers; bool counts as an int).
  bool IsNumber() const;
  // A staging value that converts to an integer (bool or int).
  bool IsIntLike() const { return kind == ValueKind::kInt || kind == ValueKind::kBool; }
  // A tuple or a list.
  bool IsSequence() const { return kind == ValueKind::kTuple || kind == ValueKind::kList; }
  // The items of a tuple or list; empty for anything else.
  const ValueList& Items() const;
  // Int value of a bool or int.
  int64_t AsInt() const { return kind == ValueKind::kBool ? (b ? 1 : 0) : i; }
  // Float value of a bool, int or float.
  double AsFloat() const;
};

// How a `def` is meant to be run.
enum class FunctionFlavor : uint8_t {
  kPython,    // plain Python: evaluated at staging level when called
  kMacro,     // @T.macro: inlined into the kernel with TileLang statement semantics
  kPrimFunc,  // @T.prim_func: the kernel itself
  kLambda,    // lambda: runs in the syntax of the code that calls it
};

// How a `def` in a class body is bound when read through the class or an
// instance.
enum class MethodKind : uint8_t {
  kPlain,     // bound to the instance (or unbound when read from the class)
  kStatic,    // @staticmethod: never bound
  kClass,     // @classmethod: bound to the class
  kProperty,  // @property: called with the instance when read
};

struct FunctionValue {
  FunctionFlavor flavor = FunctionFlavor::kPython;
  MethodKind method = MethodKind::kPlain;
  // The receiver of a bound method (an instance or a class), passed as the
  // first argument; null otherwise.
  std::shared_ptr<const Value> bound_self;
  // The class whose body defined this method (for super()); null otherwise.
  std::shared_ptr<ClassValue> owner;
  const FunctionDefStmt* def = nullptr;  // set unless a lambda
  const LambdaExpr* lambda = nullptr;    // set for lambdas
  Env* closure = nullptr;  // the scope the function was defined in (owned by the builder)
  // Default values evaluated where the function was defined, one per
  // parameter (nullopt where the parameter has no default).
  std::vector<std::optional<Value>> defaults;
  std::string name;  // def name, or "<lambda>"
};

struct BuiltinValue {
  std::string name;                   // "T.copy", "range", "math.sqrt", "list.append", ...
  std::shared_ptr<const Value> self;  // receiver of a bound method, or null
};

struct LoopSpec {
  ir::ForKind kind = ir::ForKind::kSerial;
  // One entry per loop of the nest (T.Parallel(M, N) is two loops; T.grid too).
  std::vector<ir::Expr> mins;
  std::vector<ir::Expr> extents;
  ir::Expr step;        // serial/unroll with a step other than 1 (single loop); else null
  ir::Expr num_stages;  // T.Pipelined only; null when not given
  std::vector<int64_t> order, stage;
  // group=: the statements each order/stage entry stands for; empty when
  // there is one entry per statement.
  std::vector<std::vector<int64_t>> group;
  // T.Persistent(domain, wave_size, index, group_size): the tiles of
  // `domain` this block visits, one per wave (`extents` holds the domain).
  bool persistent = false;
  ir::Expr wave_size, index;
  int64_t group_size = 8;
};

struct KernelSpec {
  std::vector<ir::Expr> grid;
  // T.Kernel(threads=...) without grid extents: one block, no block index.
  bool no_grid = false;
  ir::Expr threads;
  // threads=(x, y, z): the extents of the thread index's dimensions, x
  // fastest (threads is their product); empty for threads=n.
  std::vector<int64_t> thread_dims;
  std::string prelude;
};

struct RangeValue {
  int64_t start = 0, stop = 0, step = 1;
};

struct TensorTypeValue {
  // Staging ints or runtime expressions; in a @tilelang.lazy_jit signature
  // also the builtins `int` (given by the call) and `T.dyn` (dynamic).
  std::vector<Value> shape;
  ir::DType dtype = ir::DType::kFloat32;
  std::vector<Value> strides;  // in elements; empty: contiguous row-major
  bool any_dtype = false;      // `Any` in a lazy_jit signature: given by the call
};

struct ElementValue {
  ir::Buffer buffer;
  std::vector<ir::Expr> indices;
};

// Attributes of a class or an instance, in definition order.
using AttrList = std::vector<std::pair<std::string, Value>>;

struct ClassValue {
  std::string name;
  std::vector<std::shared_ptr<ClassValue>> bases;  // classes of the source file
  AttrList attrs;                                  // class body names
  // @dataclass: the fields, in order (inherited ones first); their defaults
  // are the class attributes of the same names.
  bool dataclass = false;
  std::vector<std::string> fields;

  // The attribute `name` of this class or its bases (in Python's order for
  // single inheritance, depth first for several bases); null when none.
  const Value* Find(const std::string& name) const;
  // True when this class is `other` or derives from it.
  bool IsSubclassOf(const ClassValue* other) const;
};

struct ObjectValue {
  std::shared_ptr<ClassValue> cls;
  AttrList attrs;  // instance attributes (`self.x = ...`)
};

// Sets `name` in `attrs`, replacing an earlier value.
void SetAttr(AttrList& attrs, const std::string& name, Value v);
// The value of `name` in `attrs`, or null.
const Value* FindAttr(const AttrList& attrs, const std::string& name);

// Short description for diagnostics: "int", "str", "buffer `A_shared`",
// "runtime expression", "function `f`", "module `math`", ...
std::string DescribeValue(const Value& v);

// Python repr for messages and str(): 1, 2.5, 'abc', (1, 2), [1], None, True,
// float16 ...; runtime values print as IR text.
std::string ValueRepr(const Value& v);

// Python truthiness of a staging value; nullopt for runtime values.
std::optional<bool> Truthy(const Value& v);

// Python equality of two staging values (1 == 1.0, "float16" == T.float16);
// nullopt when either side is a runtime value.
std::optional<bool> StagingEquals(const Value& a, const Value& b);

// The dtype a value denotes: a kDType, or a str naming a dtype
// under a TileLang or PyTorch spelling ("float16", "float", "torch.float16",
// "T.float16").
std::optional<ir::DType> AsDType(const Value& v);
// A vector dtype name, "float16x2": its element type and lanes (2 to 32, of
// byte-wide or wider elements); nullopt for anything else.
std::optional<std::pair<ir::DType, int>> ParseVectorDType(std::string_view name);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_VALUE_H_
