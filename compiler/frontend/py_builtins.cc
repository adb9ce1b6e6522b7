// Python builtins (and functools.reduce, operator.*, itertools.product) and
// `math`, evaluated with Python semantics. Methods of staging values are in
// py_methods.cc.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"

namespace tilec::frontend {
namespace {

using Args = std::vector<std::optional<Arg>>;

absl::StatusOr<Value> StagingMinMax(Builder& b, bool is_max, const ValueList& items, SourceLoc loc,
                                    std::string_view fn) {
  if (items.empty()) return b.Err(loc, Cat(fn, "() of an empty sequence"));
  Value best = items[0];
  for (size_t k = 1; k < items.size(); ++k) {
    const Value& v = items[k];
    if (IsRuntimeScalar(best) || IsRuntimeScalar(v)) {
      // A runtime value (a symbolic parameter): the IR min/max.
      absl::StatusOr<std::pair<ir::Expr, ir::Expr>> ops = PromoteOperands(best, v);
      if (!ops.ok()) return b.At(ops.status(), loc);
      ParamSet p = best.params;
      p.Merge(v.params);
      best = Value::Runtime(
          FoldBinary(is_max ? ir::BinaryOp::kMax : ir::BinaryOp::kMin, ops->first, ops->second));
      best.params = p;
      continue;
    }
    absl::StatusOr<Value> better =
        b.At(ApplyCompare(is_max ? CmpOpKind::kGt : CmpOpKind::kLt, v, best), loc);
    if (!better.ok()) return better.status();
    if (better->b) best = v;
  }
  return best;
}

// Values whose attributes tilec knows completely, so that a missing one is
// missing in Python too (hasattr() is False, getattr() takes its default).
bool HasExactAttributes(const Value& v) {
  return v.kind == ValueKind::kObject || v.kind == ValueKind::kClass;
}

// isinstance(x, cls) for one class `cls`: Python's builtin types, the
// tensor types T.Tensor / T.Buffer (buffers) and T.dtype (dtypes).
absl::StatusOr<bool> IsInstanceOf(Builder& b, const Value& x, const Value& cls, SourceLoc x_loc,
                                  SourceLoc cls_loc) {
  if (cls.kind == ValueKind::kClass) {
    return x.kind == ValueKind::kObject && x.object->cls->IsSubclassOf(cls.klass.get());
  }
  if (cls.kind != ValueKind::kBuiltin || cls.builtin->self) {
    return b.Err(cls_loc, Cat("isinstance() with a ", DescribeValue(cls),
                              " as the class is not supported"));
  }
  const std::string& n = cls.builtin->name;
  if (x.kind == ValueKind::kExpr && !b.HasRuntimeVars(x.expr) &&
      b.UnboundParamIn(x.expr, false)) {
    // An unbound parameter is an int once bound: the answer depends on it.
    return b.NotStatic(x, x_loc, "the value isinstance() looks at");
  }
  if (n == "int") return x.kind == ValueKind::kInt || x.kind == ValueKind::kBool;
  if (n == "bool") return x.kind == ValueKind::kBool;
  if (n == "float") return x.kind == ValueKind::kFloat;
  if (n == "str") return x.kind == ValueKind::kStr;
  if (n == "tuple") return x.kind == ValueKind::kTuple;
  if (n == "list") return x.kind == ValueKind::kList;
  if (n == "dict") return x.kind == ValueKind::kDict;
  if (n == "set") return x.kind == ValueKind::kSet;
  if (n == "slice") return x.kind == ValueKind::kSlice;
  if (n == "T.Tensor" || n == "T.Buffer") return x.kind == ValueKind::kBuffer;
  if (n == "T.dtype") return x.kind == ValueKind::kDType;
  if (n == "tir.PrimExpr") return IsRuntimeScalar(x);
  return b.Err(cls_loc, Cat("isinstance() with `", n, "` as the class is not supported"));
}

}  // namespace

namespace {
// The items of an iterable for a use that does not depend on their order
// (sum, min, max, any, all): a set's items, else list(x)'s.
absl::StatusOr<Value> ItemsAnyOrder(Builder& b, const Arg& a, SourceLoc loc) {
  if (a.value.kind == ValueKind::kSet) return Value::List(*a.value.list);
  CallArgs inner{loc, {a}, {}};
  return CallPython(b, "list", inner);
}
}  // namespace

absl::StatusOr<Value> CallPython(Builder& b, const std::string& name, CallArgs& args) {
  const SourceLoc loc = args.loc;
  auto pos = [&](size_t k) -> const Value& { return args.positional[k].value; };
  auto pos_loc = [&](size_t k) { return args.positional[k].loc; };
  auto need = [&](size_t lo, size_t hi) -> absl::Status {
    if (!args.keywords.empty() && name != "sorted" && name != "enumerate" && name != "sum" &&
        name != "itertools.product" &&
        name != "print" && name != "dict" && name != "min" && name != "max" && name != "round") {
      return b.Err(args.keywords[0].second.loc, Cat(name, "() takes no keyword arguments here"));
    }
    if (args.positional.size() < lo || args.positional.size() > hi) {
      return b.Err(loc, Cat(name, "() takes ", lo == hi ? Cat(lo) : Cat(lo, " to ", hi),
                            " arguments (", args.positional.size(), " given)"));
    }
    return absl::OkStatus();
  };
  if (name == "range") {
    if (b.KernelSyntax()) {
      // Inside a kernel, TileLang runs `range` as T.serial.
      std::optional<absl::StatusOr<Value>> r =
          CallTlLang(b, "T.serial", args, BuiltinValue{"T.serial", nullptr});
      if (r) return *r;
      return Builder::Internal("T.serial is missing");
    }
    if (absl::Status s = need(1, 3); !s.ok()) return s;
    int64_t v[3] = {0, 0, 1};
    ParamSet params;
    for (size_t k = 0; k < args.positional.size(); ++k) {
      absl::StatusOr<int64_t> x = b.StaticInt(pos(k), pos_loc(k), "range()");
      if (!x.ok()) return x.status();
      params.Merge(pos(k).params);
      v[args.positional.size() == 1 ? 1 : k] = *x;
    }
    if (v[2] == 0) return b.Err(loc, "range() step must not be zero");
    Value r = Value::Range(v[0], v[1], v[2]);
    r.params = params;
    return r;
  }
  if (name == "print") return Value::None();
  if (StartsWith(name, "operator.")) {
    if (absl::Status s = need(2, 2); !s.ok()) return s;
    static const std::pair<std::string_view, BinOpKind> kOps[] = {
        {"add", BinOpKind::kAdd},       {"sub", BinOpKind::kSub},
        {"mul", BinOpKind::kMul},       {"truediv", BinOpKind::kDiv},
        {"floordiv", BinOpKind::kFloorDiv}, {"mod", BinOpKind::kMod},
        {"pow", BinOpKind::kPow},       {"and_", BinOpKind::kBitAnd},
        {"or_", BinOpKind::kBitOr},     {"xor", BinOpKind::kBitXor},
        {"lshift", BinOpKind::kLShift}, {"rshift", BinOpKind::kRShift}};
    std::string_view op = std::string_view(name).substr(9);
    for (const auto& [n, k] : kOps) {
      if (n == op) return b.At(ApplyBinOp(k, pos(0), pos(1)), loc);
    }
    return b.Err(loc, Cat("`", name, "` is not supported"));
  }
  if (name == "functools.reduce") {
    // reduce(fn, iterable[, initial]): fn applied left to right.
    if (absl::Status s = need(2, 3); !s.ok()) return s;
    CallArgs inner{loc, {args.positional[1]}, {}};
    absl::StatusOr<Value> items = CallPython(b, "list", inner);
    if (!items.ok()) return items;
    const ValueList& xs = items->Items();
    size_t k = 0;
    Value acc;
    if (args.positional.size() == 3) {
      acc = pos(2);
    } else {
      if (xs.empty()) return b.Err(loc, "reduce() of an empty sequence with no initial value");
      acc = xs[k++];
    }
    for (; k < xs.size(); ++k) {
      absl::StatusOr<Value> next =
          b.CallValue(pos(0), CallArgs{loc, {Arg{acc, loc}, Arg{xs[k], loc}}, {}});
      if (!next.ok()) return next;
      acc = *next;
    }
    return acc;
  }
  if (name == "itertools.product") {
    // product(*iterables, repeat=1): tuples in lexicographic order.
    int64_t repeat = 1;
    for (const auto& [kw, a] : args.keywords) {
      if (kw != "repeat") return b.Err(a.loc, Cat("product() got an unexpected keyword argument '", kw, "'"));
      absl::StatusOr<int64_t> r = b.StaticInt(a.value, a.loc, "product(repeat=)");
      if (!r.ok()) return r.status();
      repeat = *r;
    }
    std::vector<ValueList> pools;
    for (int64_t r = 0; r < repeat; ++r) {
      for (const Arg& a : args.positional) {
        CallArgs inner{a.loc, {a}, {}};
        absl::StatusOr<Value> items = CallPython(b, "list", inner);
        if (!items.ok()) return items;
        pools.push_back(items->Items());
      }
    }
    std::vector<ValueList> out = {{}};
    for (const ValueList& pool : pools) {
      std::vector<ValueList> next;
      for (const ValueList& prefix : out) {
        for (const Value& v : pool) {
          if (next.size() >= kMaxStagingItems) return b.Err(loc, "product() is too large");
          ValueList t = prefix;
          t.push_back(v);
          next.push_back(std::move(t));
        }
      }
      out = std::move(next);
    }
    ValueList tuples;
    for (ValueList& t : out) tuples.push_back(Value::Tuple(std::move(t)));
    return Value::List(std::move(tuples));
  }
  if (name == "next") {
    // next(generator[, default]): its next item.
    if (absl::Status s = need(1, 2); !s.ok()) return s;
    const Value& g = pos(0);
    if (g.kind != ValueKind::kGenerator) {
      return b.Err(pos_loc(0), Cat("next() needs a generator, got ", DescribeValue(g)));
    }
    if (*g.cursor < g.list->size()) return (*g.list)[(*g.cursor)++];
    if (args.positional.size() == 2) return pos(1);
    return b.Err(loc, "next(): the generator is exhausted (StopIteration)");
  }
  if (name == "super") {
    if (!args.positional.empty() || !args.keywords.empty()) {
      return b.Err(loc, "super() with arguments is not supported; use super() inside a method");
    }
    return b.Super(loc);
  }
  if (name == "set") {
    if (absl::Status s = need(0, 1); !s.ok()) return s;
    ValueList items;
    if (!args.positional.empty()) {
      CallArgs inner{loc, {args.positional[0]}, {}};
      absl::StatusOr<Value> all = CallPython(b, "list", inner);
      if (!all.ok()) return all;
      items = all->Items();
    }
    std::optional<Value> set = Value::Set(items);
    if (!set) return b.Err(loc, "a set of runtime values is not supported");
    return *set;
  }
  if (name == "slice") {
    // slice(stop) / slice(start, stop[, step]): a buffer index (B[s],
    // B[tuple_of_slices]); parts may be None.
    if (absl::Status s = need(1, 3); !s.ok()) return s;
    if (args.positional.size() == 1) return Value::Slice(Value::None(), pos(0), Value::None());
    return Value::Slice(pos(0), pos(1),
                        args.positional.size() == 3 ? pos(2) : Value::None());
  }
  if (name == "isinstance") {
    if (absl::Status s = need(2, 2); !s.ok()) return s;
    const Value& cls = pos(1);
    ValueList classes = cls.kind == ValueKind::kTuple ? cls.Items() : ValueList{cls};
    for (const Value& c : classes) {
      absl::StatusOr<bool> r = IsInstanceOf(b, pos(0), c, pos_loc(0), pos_loc(1));
      if (!r.ok()) return r.status();
      if (*r) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  if (name == "getattr" || name == "hasattr") {
    if (absl::Status s = need(2, name == "getattr" ? 3 : 2); !s.ok()) return s;
    absl::StatusOr<std::string> attr = b.StaticStr(pos(1), pos_loc(1), Cat(name, "() name"));
    if (!attr.ok()) return attr.status();
    absl::StatusOr<Value> v = b.Attribute(pos(0), *attr, pos_loc(1));
    if (v.ok()) return name == "hasattr" ? Value::Bool(true) : *v;
    bool fallback = name == "hasattr" || args.positional.size() == 3;
    if (!fallback || v.status().code() != absl::StatusCode::kInvalidArgument) return v.status();
    if (!HasExactAttributes(pos(0))) {
      // tilec models only part of the attributes of TileLang's and Python's
      // objects: a missing one may exist there, so no default is taken.
      return b.Err(pos_loc(1), Cat(name, "(): tilec cannot tell whether a ", DescribeValue(pos(0)),
                                   " has the attribute `", *attr, "`"));
    }
    return name == "hasattr" ? Value::Bool(false) : pos(2);
  }
  if (name == "len") {
    if (absl::Status s = need(1, 1); !s.ok()) return s;
    const Value& x = pos(0);
    if (x.kind == ValueKind::kSet) return Value::Int(static_cast<int64_t>(x.list->size()));
    if (x.kind == ValueKind::kStr) return Value::Int(static_cast<int64_t>(x.s.size()));
    if (x.IsSequence()) return Value::Int(static_cast<int64_t>(x.Items().size()));
    if (x.kind == ValueKind::kDict) return Value::Int(static_cast<int64_t>(x.dict->size()));
    if (x.kind == ValueKind::kRange) {
      const RangeValue& r = *x.range;
      int64_t n = r.step > 0 ? (r.stop - r.start + r.step - 1) / r.step
                             : (r.start - r.stop - r.step - 1) / (-r.step);
      return Value::Int(std::max<int64_t>(0, n));
    }
    if (x.kind == ValueKind::kBuffer) {
      return b.Err(pos_loc(0), "len() of a buffer is not supported; use buffer.shape[0]");
    }
    return b.Err(pos_loc(0), Cat("len() of a ", DescribeValue(x), " is not supported"));
  }
  if (name == "min" || name == "max") {
    if (args.positional.empty()) return b.Err(loc, Cat(name, "() needs arguments"));
    std::optional<Value> key, dflt;
    for (const auto& [kw, a] : args.keywords) {
      if (kw == "key" && a.value.kind != ValueKind::kNone) {
        key = a.value;
      } else if (kw == "default" && args.positional.size() == 1) {
        dflt = a.value;
      } else if (kw != "key") {
        return b.Err(a.loc, Cat(name, "() got an unexpected keyword argument '", kw, "'"));
      }
    }
    ValueList items;
    if (args.positional.size() == 1) {
      absl::StatusOr<Value> all = ItemsAnyOrder(b, args.positional[0], loc);
      if (!all.ok()) return all;
      items = all->Items();
      if (items.empty() && dflt) return *dflt;
    } else {
      for (const Arg& a : args.positional) items.push_back(a.value);
    }
    if (!key) return StagingMinMax(b, name == "max", items, loc, name);
    // With a key: the first item whose key is the largest (smallest).
    if (items.empty()) return b.Err(loc, Cat(name, "() of an empty sequence"));
    std::optional<size_t> best;
    Value best_key;
    for (size_t k = 0; k < items.size(); ++k) {
      absl::StatusOr<Value> kv = b.CallValue(*key, CallArgs{loc, {Arg{items[k], loc}}, {}});
      if (!kv.ok()) return kv;
      if (best) {
        absl::StatusOr<Value> better =
            b.At(ApplyCompare(name == "max" ? CmpOpKind::kGt : CmpOpKind::kLt, *kv, best_key), loc);
        if (!better.ok()) return better;
        std::optional<bool> t = Truthy(*better);
        if (!t) return b.NotStatic(*kv, loc, Cat("the key of ", name, "()"));
        if (!*t) continue;
      }
      best = k;
      best_key = *kv;
    }
    return items[*best];
  }
  if (name == "abs") {
    if (absl::Status s = need(1, 1); !s.ok()) return s;
    const Value& x = pos(0);
    if (IsRuntimeScalar(x)) {
      absl::StatusOr<ir::Expr> e = b.ExprOf(x, pos_loc(0));
      if (!e.ok()) return e.status();
      return Value::Runtime(ir::Call(ir::CallFn::kAbs, {*e}));
    }
    if (x.kind == ValueKind::kFloat) return Value::Float(std::fabs(x.f), x.params);
    if (x.IsIntLike()) {
      if (x.AsInt() == std::numeric_limits<int64_t>::min()) return b.Err(loc, "integer overflow");
      return Value::Int(std::llabs(x.AsInt()), x.params);
    }
    return b.Err(pos_loc(0), Cat("abs() of a ", DescribeValue(x)));
  }
  if (name == "int") {
    if (absl::Status s = need(1, 1); !s.ok()) return s;
    const Value& x = pos(0);
    if (x.kind == ValueKind::kFloat) {
      if (!std::isfinite(x.f) || std::fabs(x.f) >= 9.2e18) {
        return b.Err(pos_loc(0), Cat("cannot convert ", ValueRepr(x), " to int"));
      }
      return Value::Int(static_cast<int64_t>(x.f), x.params);
    }
    if (x.kind == ValueKind::kStr) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(x.s, &v)) {
        return b.Err(pos_loc(0), Cat("invalid literal for int(): ", ValueRepr(x)));
      }
      return Value::Int(v);
    }
    absl::StatusOr<int64_t> v = b.StaticInt(x, pos_loc(0), "int()");
    if (!v.ok()) return v.status();
    return Value::Int(*v, x.params);
  }
  if (name == "float") {
    if (absl::Status s = need(1, 1); !s.ok()) return s;
    const Value& x = pos(0);
    if (x.IsNumber()) return Value::Float(x.AsFloat(), x.params);
    if (x.kind == ValueKind::kStr) {
      std::string t(absl::StripAsciiWhitespace(x.s));
      if (t == "inf" || t == "+inf" || t == "infinity") {
        return Value::Float(std::numeric_limits<double>::infinity());
      }
      if (t == "-inf" || t == "-infinity") {
        return Value::Float(-std::numeric_limits<double>::infinity());
      }
      if (t == "nan") return Value::Float(std::numeric_limits<double>::quiet_NaN());
      double d = 0;
      if (!absl::SimpleAtod(t, &d)) {
        return b.Err(pos_loc(0), Cat("could not convert string to float: ", ValueRepr(x)));
      }
      return Value::Float(d);
    }
    return b.NotStatic(x, pos_loc(0), "float()");
  }
  if (name == "bool") {
    if (absl::Status s = need(0, 1); !s.ok()) return s;
    if (args.positional.empty()) return Value::Bool(false);
    absl::StatusOr<bool> t = b.StaticBool(pos(0), pos_loc(0), "bool()");
    if (!t.ok()) return t.status();
    return Value::Bool(*t);
  }
  if (name == "str") {
    if (absl::Status s = need(0, 1); !s.ok()) return s;
    if (args.positional.empty()) return Value::Str("");
    const Value& x = pos(0);
    if (x.kind == ValueKind::kStr) return x;
    std::string text = ValueRepr(x);
    if (text.size() > kMaxStagingItems) {
      return b.Err(loc,
                   Cat("str() of a value whose text is over ", kMaxStagingItems, " characters"));
    }
    return Value::Str(std::move(text));
  }
  if (name == "tuple" || name == "list" || name == "reversed" || name == "sorted") {
    if (args.positional.size() > 1 || (name != "sorted" && !args.keywords.empty())) {
      return b.Err(loc, Cat(name, "() takes at most one argument"));
    }
    ValueList items;
    if (!args.positional.empty()) {
      absl::Status s = [&]() -> absl::Status {
        const Value& x = pos(0);
        if (x.IsSequence()) {
          items = x.Items();
          return absl::OkStatus();
        }
        if (x.kind == ValueKind::kGenerator) {
          items = x.TakeRemaining();
          return absl::OkStatus();
        }
        if (x.kind == ValueKind::kSet) {
          // Only an order-independent use (sorted(); the reductions sum,
          // min, max, any and all take a set through ItemsAnyOrder).
          if (name != "sorted") {
            return b.Err(pos_loc(0), Cat(name, "() of a set is not supported: Python's order is "
                                               "the hash order, which tilec does not reproduce; "
                                               "use sorted(...)"));
          }
          items = *x.list;
          return absl::OkStatus();
        }
        if (x.kind == ValueKind::kStr) {
          for (char c : x.s) items.push_back(Value::Str(std::string(1, c)));
          return absl::OkStatus();
        }
        if (x.kind == ValueKind::kDict) {
          for (const auto& kv : *x.dict) items.push_back(kv.first);
          return absl::OkStatus();
        }
        if (x.kind == ValueKind::kRange) {
          const RangeValue& r = *x.range;
          for (int64_t k = r.start; r.step > 0 ? k < r.stop : k > r.stop; k += r.step) {
            if (items.size() >= kMaxStagingItems) return b.Err(loc, "range is too long");
            items.push_back(Value::Int(k, x.params));
          }
          return absl::OkStatus();
        }
        return b.NotStatic(x, pos_loc(0), Cat(name, "()"));
      }();
      if (!s.ok()) return s;
    }
    if (name == "reversed") std::reverse(items.begin(), items.end());
    if (name == "sorted") {
      bool reverse = false;
      std::optional<Value> key;
      for (const auto& [kw, a] : args.keywords) {
        if (kw == "key") {
          if (a.value.kind != ValueKind::kNone) key = a.value;
          continue;
        }
        if (kw != "reverse") {
          return b.Err(a.loc, Cat("sorted() keyword '", kw, "' is not supported"));
        }
        absl::StatusOr<bool> r = b.StaticBool(a.value, a.loc, "sorted(reverse=)");
        if (!r.ok()) return r.status();
        reverse = *r;
      }
      // Sort (key, item) pairs; Python's sort is stable, reverse included.
      std::vector<std::pair<Value, Value>> keyed;
      for (const Value& item : items) {
        if (!key) {
          keyed.emplace_back(item, item);
          continue;
        }
        absl::StatusOr<Value> kv = b.CallValue(*key, CallArgs{loc, {Arg{item, loc}}, {}});
        if (!kv.ok()) return kv;
        keyed.emplace_back(*kv, item);
      }
      absl::Status err = absl::OkStatus();
      std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
        if (!err.ok()) return false;
        absl::StatusOr<Value> lt =
            ApplyCompare(CmpOpKind::kLt, reverse ? y.first : x.first, reverse ? x.first : y.first);
        if (!lt.ok()) {
          err = b.At(lt.status(), loc);
          return false;
        }
        return lt->kind == ValueKind::kBool && lt->b;
      });
      if (!err.ok()) return err;
      items.clear();
      for (auto& [k, item] : keyed) items.push_back(std::move(item));
    }
    return name == "tuple" ? Value::Tuple(std::move(items)) : Value::List(std::move(items));
  }
  if (name == "dict") {
    DictItems items;
    if (args.positional.size() > 1) return b.Err(loc, "dict() takes at most one argument");
    if (!args.positional.empty()) {
      const Value& x = pos(0);
      if (x.kind == ValueKind::kDict) {
        items = *x.dict;
      } else if (x.IsSequence() || x.kind == ValueKind::kGenerator) {
        const ValueList pairs = x.kind == ValueKind::kGenerator ? x.TakeRemaining() : x.Items();
        for (const Value& pair : pairs) {
          if (!pair.IsSequence() || pair.Items().size() != 2) {
            return b.Err(pos_loc(0), "dict() needs a sequence of pairs");
          }
          items.emplace_back(pair.Items()[0], pair.Items()[1]);
        }
      } else {
        return b.Err(pos_loc(0), Cat("dict() of a ", DescribeValue(x)));
      }
    }
    for (const auto& [kw, a] : args.keywords) items.emplace_back(Value::Str(kw), a.value);
    return Value::Dict(std::move(items));
  }
  if (name == "enumerate") {
    absl::StatusOr<Args> a = BindArgs(b, args, "enumerate", {"iterable", "start"}, 1);
    if (!a.ok()) return a.status();
    int64_t start = 0;
    if ((*a)[1]) {
      absl::StatusOr<int64_t> s = b.StaticInt((*a)[1]->value, (*a)[1]->loc, "enumerate(start=)");
      if (!s.ok()) return s.status();
      start = *s;
    }
    CallArgs inner{loc, {*(*a)[0]}, {}};
    absl::StatusOr<Value> items = CallPython(b, "list", inner);
    if (!items.ok()) return items;
    ValueList out;
    for (const Value& v : items->Items()) out.push_back(Value::Tuple({Value::Int(start++), v}));
    return Value::List(std::move(out));
  }
  if (name == "zip") {
    std::vector<ValueList> lists;
    for (const Arg& a : args.positional) {
      CallArgs inner{a.loc, {a}, {}};
      absl::StatusOr<Value> items = CallPython(b, "list", inner);
      if (!items.ok()) return items;
      lists.push_back(items->Items());
    }
    ValueList out;
    size_t n = lists.empty() ? 0 : lists[0].size();
    for (const ValueList& l : lists) n = std::min(n, l.size());
    for (size_t k = 0; k < n; ++k) {
      ValueList t;
      for (const ValueList& l : lists) t.push_back(l[k]);
      out.push_back(Value::Tuple(std::move(t)));
    }
    return Value::List(std::move(out));
  }
  if (name == "sum" || name == "any" || name == "all") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"iterable", "start"}, 1);
    if (!a.ok()) return a.status();
    absl::StatusOr<Value> items = ItemsAnyOrder(b, *(*a)[0], loc);
    if (!items.ok()) return items;
    if (name == "sum") {
      Value acc = (*a)[1] ? (*a)[1]->value : Value::Int(0);
      for (const Value& v : items->Items()) {
        absl::StatusOr<Value> next = b.At(ApplyBinOp(BinOpKind::kAdd, acc, v), loc);
        if (!next.ok()) return next;
        acc = *next;
      }
      return acc;
    }
    bool is_any = name == "any";
    for (const Value& v : items->Items()) {
      absl::StatusOr<bool> t = b.StaticBool(v, loc, Cat(name, "()"));
      if (!t.ok()) return t.status();
      if (*t == is_any) return Value::Bool(is_any);
    }
    return Value::Bool(!is_any);
  }
  if (name == "round") {
    absl::StatusOr<Args> a = BindArgs(b, args, "round", {"number", "ndigits"}, 1);
    if (!a.ok()) return a.status();
    const Value& x = (*a)[0]->value;
    if (!x.IsNumber()) return b.NotStatic(x, (*a)[0]->loc, "round()");
    if (!(*a)[1] || (*a)[1]->value.kind == ValueKind::kNone) {
      double r = std::nearbyint(x.AsFloat());  // banker's rounding, as Python
      if (!std::isfinite(r) || std::fabs(r) >= 9.2e18) return b.Err(loc, "round() overflow");
      return Value::Int(static_cast<int64_t>(r), x.params);
    }
    absl::StatusOr<int64_t> nd = b.StaticInt((*a)[1]->value, (*a)[1]->loc, "round(ndigits)");
    if (!nd.ok()) return nd.status();
    double scale = std::pow(10.0, static_cast<double>(*nd));
    return Value::Float(std::nearbyint(x.AsFloat() * scale) / scale, x.params);
  }
  if (name == "pow") {
    if (absl::Status s = need(2, 2); !s.ok()) return s;
    return b.At(ApplyBinOp(BinOpKind::kPow, pos(0), pos(1)), loc);
  }
  if (name == "divmod") {
    if (absl::Status s = need(2, 2); !s.ok()) return s;
    absl::StatusOr<Value> q = b.At(ApplyBinOp(BinOpKind::kFloorDiv, pos(0), pos(1)), loc);
    if (!q.ok()) return q;
    absl::StatusOr<Value> r = b.At(ApplyBinOp(BinOpKind::kMod, pos(0), pos(1)), loc);
    if (!r.ok()) return r;
    return Value::Tuple({*q, *r});
  }
  return b.Err(loc, Cat("`", name, "` is not supported"));
}

absl::StatusOr<Value> CallMath(Builder& b, std::string_view fn, CallArgs& args) {
  std::string name = Cat("math.", fn);
  ValueList xs;
  ParamSet params;
  if (!args.keywords.empty()) {
    return b.Err(args.keywords[0].second.loc, Cat(name, "() takes no keyword arguments"));
  }
  for (const Arg& a : args.positional) {
    if (!a.value.IsNumber()) {
      if (IsRuntimeScalar(a.value)) {
        return b.Err(a.loc, Cat(name, "() needs a value known at staging time; use the T.", fn,
                                " family in kernel code"));
      }
      return b.Err(a.loc, Cat(name, "() of a ", DescribeValue(a.value)));
    }
    params.Merge(a.value.params);
    xs.push_back(a.value);
  }
  auto arity = [&](size_t lo, size_t hi) -> absl::Status {
    if (xs.size() < lo || xs.size() > hi) {
      return b.Err(args.loc,
                   Cat(name, "() takes ", lo, lo == hi ? "" : Cat(" to ", hi), " arguments"));
    }
    return absl::OkStatus();
  };
  auto to_int = [&](double d) -> absl::StatusOr<Value> {
    if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) {
      return b.Err(args.loc, Cat(name, "() result is not a finite integer"));
    }
    return Value::Int(static_cast<int64_t>(d), params);
  };
  auto f = [&](double d) { return Value::Float(d, params); };
  auto domain = [&]() { return b.Err(args.loc, Cat(name, "(): math domain error")); };
  if (fn == "gcd" || fn == "lcm" || fn == "prod") {
    if (fn == "prod") {
      if (absl::Status s = arity(1, 1); !s.ok()) return s;
    }
    int64_t acc = fn == "gcd" ? 0 : 1;
    for (const Value& x : xs) {
      if (!x.IsIntLike()) return b.Err(args.loc, Cat(name, "() needs integers"));
      int64_t v = x.AsInt();
      if (fn == "gcd") acc = std::gcd(acc, v);
      if (fn == "lcm") acc = (acc == 0 || v == 0) ? 0 : std::lcm(acc, v);
    }
    return Value::Int(acc, params);
  }
  if (fn == "log") {
    if (absl::Status s = arity(1, 2); !s.ok()) return s;
    if (xs[0].AsFloat() <= 0) return domain();
    double r = std::log(xs[0].AsFloat());
    if (xs.size() == 2) {
      if (xs[1].AsFloat() <= 0 || xs[1].AsFloat() == 1) return domain();
      r /= std::log(xs[1].AsFloat());
    }
    return f(r);
  }
  if (fn == "pow") {
    if (absl::Status s = arity(2, 2); !s.ok()) return s;
    return f(std::pow(xs[0].AsFloat(), xs[1].AsFloat()));
  }
  if (absl::Status s = arity(1, 1); !s.ok()) return s;
  double x = xs[0].AsFloat();
  if (fn == "sqrt") return x < 0 ? domain() : absl::StatusOr<Value>(f(std::sqrt(x)));
  if (fn == "log2") return x <= 0 ? domain() : absl::StatusOr<Value>(f(std::log2(x)));
  if (fn == "log10") return x <= 0 ? domain() : absl::StatusOr<Value>(f(std::log10(x)));
  if (fn == "exp") return f(std::exp(x));
  if (fn == "exp2") return f(std::exp2(x));
  if (fn == "fabs") return f(std::fabs(x));
  if (fn == "sin") return f(std::sin(x));
  if (fn == "cos") return f(std::cos(x));
  if (fn == "tanh") return f(std::tanh(x));
  if (fn == "isinf") return Value::Bool(std::isinf(x));
  if (fn == "isnan") return Value::Bool(std::isnan(x));
  if (fn == "isfinite") return Value::Bool(std::isfinite(x));
  if (fn == "ceil")
    return xs[0].IsIntLike() ? Value::Int(xs[0].AsInt(), params) : to_int(std::ceil(x));
  if (fn == "floor") {
    return xs[0].IsIntLike() ? Value::Int(xs[0].AsInt(), params) : to_int(std::floor(x));
  }
  if (fn == "trunc") {
    return xs[0].IsIntLike() ? Value::Int(xs[0].AsInt(), params) : to_int(std::trunc(x));
  }
  if (fn == "isqrt") {
    if (!xs[0].IsIntLike() || xs[0].AsInt() < 0) return domain();
    int64_t v = xs[0].AsInt();
    int64_t r = static_cast<int64_t>(std::sqrt(static_cast<double>(v)));
    while (r > 0 && r * r > v) --r;
    while ((r + 1) * (r + 1) <= v) ++r;
    return Value::Int(r, params);
  }
  return b.Err(args.loc, Cat("`", name, "` is not supported"));
}

}  // namespace tilec::frontend
