#include "compiler/frontend/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

#include "absl/strings/str_join.h"
#include "compiler/frontend/staging_budget.h"
#include "compiler/frontend/str_util.h"
#include "compiler/ir/printer.h"

namespace tilec::frontend {

void ParamSet::Add(int id) {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
  if (it == ids_.end() || *it != id) ids_.insert(it, id);
}

void ParamSet::Merge(const ParamSet& other) {
  for (int id : other.ids_) Add(id);
}

Value Value::None() { return Value(); }

Value Value::Bool(bool v, ParamSet params) {
  Value r;
  r.kind = ValueKind::kBool;
  r.b = v;
  r.params = std::move(params);
  return r;
}

Value Value::Int(int64_t v, ParamSet params) {
  Value r;
  r.kind = ValueKind::kInt;
  r.i = v;
  r.params = std::move(params);
  return r;
}

Value Value::Float(double v, ParamSet params) {
  Value r;
  r.kind = ValueKind::kFloat;
  r.f = v;
  r.params = std::move(params);
  return r;
}

Value Value::Str(std::string v) {
  // Building a value charges the staging budget for its size; a budget spent
  // here fails the builder's next step.
  (void)ChargeStaging(static_cast<int64_t>(v.size() / 16));
  Value r;
  r.kind = ValueKind::kStr;
  r.s = std::move(v);
  return r;
}

Value Value::Tuple(ValueList items) {
  (void)ChargeStaging(kStepsPerItemBuilt * static_cast<int64_t>(items.size()));
  Value r;
  r.kind = ValueKind::kTuple;
  r.tuple = std::make_shared<const ValueList>(std::move(items));
  return r;
}

Value Value::List(ValueList items) {
  (void)ChargeStaging(kStepsPerItemBuilt * static_cast<int64_t>(items.size()));
  Value r;
  r.kind = ValueKind::kList;
  r.list = std::make_shared<ValueList>(std::move(items));
  return r;
}

Value Value::Dict(DictItems items) {
  (void)ChargeStaging(kStepsPerItemBuilt * static_cast<int64_t>(items.size()));
  Value r;
  r.kind = ValueKind::kDict;
  r.dict = std::make_shared<DictItems>(std::move(items));
  return r;
}

Value Value::DType(ir::DType t, int lanes) {
  Value r;
  r.kind = ValueKind::kDType;
  r.dtype = t;
  r.lanes = lanes;
  return r;
}

Value Value::Runtime(ir::Expr e) {
  Value r;
  r.kind = ValueKind::kExpr;
  r.expr = std::move(e);
  return r;
}

Value Value::BufferRef(ir::Buffer b) {
  Value r;
  r.kind = ValueKind::kBuffer;
  r.buffer = std::move(b);
  return r;
}

Value Value::Element(ir::Buffer b, std::vector<ir::Expr> indices) {
  Value r;
  r.kind = ValueKind::kElement;
  r.element = std::make_shared<const ElementValue>(ElementValue{std::move(b), std::move(indices)});
  return r;
}

Value Value::RegionRef(ir::Region reg) {
  Value r;
  r.kind = ValueKind::kRegion;
  r.region = std::make_shared<const ir::Region>(std::move(reg));
  return r;
}

Value Value::Function(FunctionValue fn) {
  Value r;
  r.kind = ValueKind::kFunction;
  r.function = std::make_shared<const FunctionValue>(std::move(fn));
  return r;
}

Value Value::Slice(Value start, Value stop, Value step) {
  Value r = Tuple({std::move(start), std::move(stop), std::move(step)});
  r.kind = ValueKind::kSlice;
  return r;
}

std::optional<Value> Value::Set(const ValueList& items) {
  ValueList unique;
  for (const Value& v : items) {
    bool seen = false;
    for (const Value& u : unique) {
      std::optional<bool> eq = StagingEquals(v, u);
      if (!eq) return std::nullopt;
      seen = seen || *eq;
    }
    if (unique.empty() && !StagingEquals(v, v)) return std::nullopt;
    if (!seen) unique.push_back(v);
  }
  Value r = List(std::move(unique));
  r.kind = ValueKind::kSet;
  return r;
}

Value Value::Generator(ValueList items) {
  Value r = List(std::move(items));
  r.kind = ValueKind::kGenerator;
  r.cursor = std::make_shared<size_t>(0);
  return r;
}

ValueList Value::TakeRemaining() const {
  if (kind != ValueKind::kGenerator || !list || !cursor) return {};
  size_t from = std::min(*cursor, list->size());
  *cursor = list->size();
  return ValueList(list->begin() + static_cast<std::ptrdiff_t>(from), list->end());
}

Value Value::Class(std::shared_ptr<ClassValue> c) {
  Value r;
  r.kind = ValueKind::kClass;
  r.klass = std::move(c);
  return r;
}

Value Value::Object(std::shared_ptr<ObjectValue> o) {
  Value r;
  r.kind = ValueKind::kObject;
  r.object = std::move(o);
  return r;
}

void SetAttr(AttrList& attrs, const std::string& name, Value v) {
  for (auto& [n, value] : attrs) {
    if (n == name) {
      value = std::move(v);
      return;
    }
  }
  attrs.emplace_back(name, std::move(v));
}

const Value* FindAttr(const AttrList& attrs, const std::string& name) {
  for (const auto& [n, value] : attrs) {
    if (n == name) return &value;
  }
  return nullptr;
}

const Value* ClassValue::Find(const std::string& name) const {
  if (const Value* v = FindAttr(attrs, name)) return v;
  for (const auto& base : bases) {
    if (const Value* v = base->Find(name)) return v;
  }
  return nullptr;
}

bool ClassValue::IsSubclassOf(const ClassValue* other) const {
  if (this == other) return true;
  for (const auto& base : bases) {
    if (base->IsSubclassOf(other)) return true;
  }
  return false;
}

Value Value::Builtin(std::string name, std::shared_ptr<const Value> self) {
  Value r;
  r.kind = ValueKind::kBuiltin;
  r.builtin = std::make_shared<const BuiltinValue>(BuiltinValue{std::move(name), std::move(self)});
  return r;
}

Value Value::Module(std::string path) {
  // TileLang's per-target spelling of the language module is the module.
  if (path == "tilelang.cuda.language") path = "tilelang.language";
  Value r;
  r.kind = ValueKind::kModule;
  r.s = std::move(path);
  return r;
}

Value Value::Range(int64_t start, int64_t stop, int64_t step) {
  Value r;
  r.kind = ValueKind::kRange;
  r.range = std::make_shared<const RangeValue>(RangeValue{start, stop, step});
  return r;
}

Value Value::Loop(LoopSpec spec) {
  Value r;
  r.kind = ValueKind::kLoop;
  r.loop = std::make_shared<const LoopSpec>(std::move(spec));
  return r;
}

Value Value::Kernel(KernelSpec spec) {
  Value r;
  r.kind = ValueKind::kKernel;
  r.kernel = std::make_shared<const KernelSpec>(std::move(spec));
  return r;
}

Value Value::Layout(ir::Layout layout) {
  Value r;
  r.kind = ValueKind::kLayout;
  r.layout = std::make_shared<const ir::Layout>(std::move(layout));
  return r;
}

Value Value::Policy(ir::GemmPolicy p) {
  Value r;
  r.kind = ValueKind::kGemmPolicy;
  r.policy = p;
  return r;
}

Value Value::TensorType(std::vector<Value> shape, ir::DType dtype, std::vector<Value> strides,
                        bool any_dtype) {
  Value r;
  r.kind = ValueKind::kTensorType;
  r.tensor_type = std::make_shared<const TensorTypeValue>(
      TensorTypeValue{std::move(shape), dtype, std::move(strides), any_dtype});
  return r;
}

bool Value::IsNumber() const {
  return kind == ValueKind::kBool || kind == ValueKind::kInt || kind == ValueKind::kFloat;
}

const ValueList& Value::Items() const {
  static const ValueList kEmpty;
  if (kind == ValueKind::kTuple && tuple) return *tuple;
  if (kind == ValueKind::kList && list) return *list;
  return kEmpty;
}

double Value::AsFloat() const {
  if (kind == ValueKind::kFloat) return f;
  return static_cast<double>(AsInt());
}

namespace {

std::string FloatRepr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string StrRepr(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "'";
}

// Reprs stop growing past this many characters: a nested value can stand
// for billions of items (a list of one list, repeated). ValueRepr marks the
// cut with "...".
constexpr size_t kReprCap = (size_t{1} << 16) + 16;

void AppendRepr(const Value& v, std::string& out);
std::string ScalarRepr(const Value& v);

void AppendItems(const ValueList& items, std::string& out) {
  for (size_t k = 0; k < items.size() && out.size() <= kReprCap; ++k) {
    if (k) out += ", ";
    AppendRepr(items[k], out);
  }
}

void AppendRepr(const Value& v, std::string& out) {
  if (out.size() > kReprCap) return;
  switch (v.kind) {
    case ValueKind::kTuple: {
      const ValueList& items = v.Items();
      out += "(";
      AppendItems(items, out);
      out += items.size() == 1 ? ",)" : ")";
      return;
    }
    case ValueKind::kList:
      out += "[";
      AppendItems(v.Items(), out);
      out += "]";
      return;
    case ValueKind::kDict:
      out += "{";
      if (v.dict) {
        for (size_t k = 0; k < v.dict->size() && out.size() <= kReprCap; ++k) {
          if (k) out += ", ";
          AppendRepr((*v.dict)[k].first, out);
          out += ": ";
          AppendRepr((*v.dict)[k].second, out);
        }
      }
      out += "}";
      return;
    default: out += ScalarRepr(v); return;
  }
}

}  // namespace

std::string DescribeValue(const Value& v) {
  switch (v.kind) {
    case ValueKind::kNone: return "None";
    case ValueKind::kBool: return "bool";
    case ValueKind::kInt: return "int";
    case ValueKind::kFloat: return "float";
    case ValueKind::kStr: return "str";
    case ValueKind::kTuple: return "tuple";
    case ValueKind::kList: return "list";
    case ValueKind::kDict: return "dict";
    case ValueKind::kDType: return "dtype";
    case ValueKind::kExpr: return "runtime expression";
    case ValueKind::kBuffer: return Cat("buffer `", v.buffer ? v.buffer->name : "?", "`");
    case ValueKind::kElement:
      return Cat("element of buffer `",
                 v.element && v.element->buffer ? v.element->buffer->name : "?", "`");
    case ValueKind::kRegion:
      return Cat("region of buffer `", v.region && v.region->buffer ? v.region->buffer->name : "?",
                 "`");
    case ValueKind::kFunction: return Cat("function `", v.function ? v.function->name : "?", "`");
    case ValueKind::kBuiltin: return Cat("function `", v.builtin ? v.builtin->name : "?", "`");
    case ValueKind::kModule: return Cat("module `", v.s, "`");
    case ValueKind::kRange: return "range";
    case ValueKind::kLoop: return "loop";
    case ValueKind::kKernel: return "T.Kernel";
    case ValueKind::kLayout: return "layout";
    case ValueKind::kGemmPolicy: return "T.GemmWarpPolicy";
    case ValueKind::kTensorType: return "tensor type";
    case ValueKind::kClass: return Cat("class `", v.klass ? v.klass->name : "?", "`");
    case ValueKind::kSlice: return "slice";
    case ValueKind::kGenerator: return "generator";
    case ValueKind::kSet: return "set";
    case ValueKind::kSuper: return "super()";
    case ValueKind::kHostTensor: {
      std::vector<std::string> dims;
      if (v.tensor_type) {
        for (const Value& d : v.tensor_type->shape) dims.push_back(Cat(d.i));
      }
      return Cat("torch tensor of shape (", absl::StrJoin(dims, ", "),
                 dims.size() == 1 ? ",)" : ")",
                 v.tensor_type ? Cat(", ", ir::DTypeName(v.tensor_type->dtype)) : "");
    }
    case ValueKind::kObject:
      return Cat("`", v.object && v.object->cls ? v.object->cls->name : "?", "` object");
  }
  return "value";
}

std::string ValueRepr(const Value& v) {
  std::string out;
  AppendRepr(v, out);
  if (out.size() > kReprCap) {
    out.resize(kReprCap);
    out += "...";
  }
  return out;
}

namespace {

std::string ScalarRepr(const Value& v) {
  switch (v.kind) {
    case ValueKind::kNone: return "None";
    case ValueKind::kBool: return v.b ? "True" : "False";
    case ValueKind::kInt: return Cat(v.i);
    case ValueKind::kFloat: return FloatRepr(v.f);
    case ValueKind::kStr: return StrRepr(v.s);
    case ValueKind::kDType: return std::string(ir::DTypeName(v.dtype));
    case ValueKind::kExpr: return v.expr ? ir::PrintExpr(v.expr) : "<null>";
    case ValueKind::kRange:
      if (!v.range) return "range()";
      return Cat("range(", v.range->start, ", ", v.range->stop,
                 v.range->step == 1 ? "" : Cat(", ", v.range->step), ")");
    case ValueKind::kGemmPolicy: return Cat("T.GemmWarpPolicy.", ir::GemmPolicyName(v.policy));
    default: return DescribeValue(v);
  }
}

}  // namespace

std::optional<bool> Truthy(const Value& v) {
  switch (v.kind) {
    case ValueKind::kNone: return false;
    case ValueKind::kBool: return v.b;
    case ValueKind::kInt: return v.i != 0;
    case ValueKind::kFloat: return v.f != 0;
    case ValueKind::kStr: return !v.s.empty();
    case ValueKind::kTuple:
    case ValueKind::kList: return !v.Items().empty();
    case ValueKind::kDict: return v.dict && !v.dict->empty();
    case ValueKind::kSet: return v.list && !v.list->empty();
    case ValueKind::kRange: {
      if (!v.range) return false;
      const RangeValue& r = *v.range;
      return r.step > 0 ? r.start < r.stop : r.start > r.stop;
    }
    case ValueKind::kExpr: {
      if (auto c = ir::AsConstInt(v.expr)) return *c != 0;
      return std::nullopt;
    }
    case ValueKind::kElement:
    case ValueKind::kRegion: return std::nullopt;
    case ValueKind::kBuffer:
      // A T.alloc_var variable reads as its element: a runtime value (`if
      // flag:` tests the flag, as in TileLang); other buffers are objects.
      if (v.buffer && v.buffer->scope == ir::Scope::kVar) return std::nullopt;
      return true;
    default: return true;  // functions, modules, dtypes ... are truthy
  }
}

std::optional<std::pair<ir::DType, int>> ParseVectorDType(std::string_view name) {
  for (std::string_view prefix : {"torch.", "T.", "tl."}) {
    if (name.substr(0, prefix.size()) == prefix) {
      name.remove_prefix(prefix.size());
      break;
    }
  }
  const size_t x = name.rfind('x');
  if (x == std::string_view::npos || x + 1 >= name.size()) return std::nullopt;
  int lanes = 0;
  for (char c : name.substr(x + 1)) {
    if (c < '0' || c > '9' || lanes > 64) return std::nullopt;
    lanes = lanes * 10 + (c - '0');
  }
  std::optional<ir::DType> t = ir::ParseDType(name.substr(0, x));
  if (!t || *t == ir::DType::kBool || ir::DTypeBits(*t) < 8) return std::nullopt;
  if (lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16 && lanes != 32) return std::nullopt;
  return std::make_pair(*t, lanes);
}

std::optional<ir::DType> AsDType(const Value& v) {
  if (v.kind == ValueKind::kDType) {
    if (v.lanes != 1) return std::nullopt;
    return v.dtype;
  }
  if (v.kind != ValueKind::kStr) return std::nullopt;
  std::string_view name = v.s;
  for (std::string_view prefix : {"torch.", "T.", "tl."}) {
    if (name.substr(0, prefix.size()) == prefix) {
      name.remove_prefix(prefix.size());
      break;
    }
  }
  return ir::ParseDType(name);
}

std::optional<bool> StagingEquals(const Value& a, const Value& b) {
  // One step per pair compared; once the budget is spent the answer is
  // unknown and the caller's budget check reports why (ApplyCompare).
  if (!ChargeStaging(1).ok()) return std::nullopt;
  if (a.IsNumber() && b.IsNumber()) {
    if (a.kind == ValueKind::kFloat || b.kind == ValueKind::kFloat) {
      return a.AsFloat() == b.AsFloat();
    }
    return a.AsInt() == b.AsInt();
  }
  auto runtime = [](const Value& v) {
    return v.kind == ValueKind::kExpr || v.kind == ValueKind::kElement ||
           v.kind == ValueKind::kRegion;
  };
  if (runtime(a) || runtime(b)) return std::nullopt;
  bool a_dtype = a.kind == ValueKind::kDType;
  bool b_dtype = b.kind == ValueKind::kDType;
  if (a_dtype || b_dtype) {
    // TileLang dtypes compare equal to their names: T.float16 == "float16".
    std::optional<ir::DType> x = AsDType(a), y = AsDType(b);
    return x && y && *x == *y;
  }
  // A tuple and a list compare item by item: a tensor's shape (a tuple
  // here, TVM's Array in TileLang) equals the list of its dimensions.
  if (a.kind != b.kind && !(a.IsSequence() && b.IsSequence())) return false;
  switch (a.kind) {
    case ValueKind::kNone: return true;
    case ValueKind::kStr: return a.s == b.s;
    case ValueKind::kModule: return a.s == b.s;
    case ValueKind::kGemmPolicy: return a.policy == b.policy;
    case ValueKind::kTuple:
    case ValueKind::kList: {
      const ValueList& x = a.Items();
      const ValueList& y = b.Items();
      if (x.size() != y.size()) return false;
      bool unknown = false;
      for (size_t k = 0; k < x.size(); ++k) {
        std::optional<bool> eq = StagingEquals(x[k], y[k]);
        if (eq && !*eq) return false;
        unknown |= !eq;
      }
      if (unknown) return std::nullopt;
      return true;
    }
    case ValueKind::kBuffer: return a.buffer == b.buffer;
    case ValueKind::kFunction: return a.function == b.function;
    case ValueKind::kBuiltin:
      return a.builtin && b.builtin && a.builtin->name == b.builtin->name &&
             a.builtin->self == b.builtin->self;
    case ValueKind::kDict: return a.dict == b.dict;
    case ValueKind::kSet: {
      // Equal when each holds the other's items, in any order.
      if (a.list->size() != b.list->size()) return false;
      for (const Value& x : *a.list) {
        bool found = false;
        for (const Value& y : *b.list) found = found || StagingEquals(x, y).value_or(false);
        if (!found) return false;
      }
      return true;
    }
    case ValueKind::kClass: return a.klass == b.klass;
    case ValueKind::kObject: return a.object == b.object;
    default: return false;
  }
}

}  // namespace tilec::frontend
