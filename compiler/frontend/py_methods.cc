// Methods of staging values, with Python semantics: list.append/extend/
// insert/pop/copy/index/count, tuple.index/count, dict.get/pop/items/keys/
// values/copy/update, str.split/join/strip/lstrip/rstrip/lower/upper/
// replace/startswith/endswith/format/find/count/isdigit/isalpha/isalnum,
// int.bit_length, float.is_integer, and expr.astype on runtime values.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "compiler/frontend/staging_budget.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"

namespace tilec::frontend {

absl::StatusOr<Value> CallMethod(Builder& b, std::string_view name, const Value& self,
                                 CallArgs& args) {
  if (StartsWith(name, "torch_tensor.")) {
    return CallHostTensorMethod(b, name.substr(13), self, args);
  }
  const SourceLoc loc = args.loc;
  auto arg = [&](size_t k) -> const Value& { return args.positional[k].value; };
  auto argc = [&](size_t lo, size_t hi) -> absl::Status {
    if (!args.keywords.empty()) {
      return b.Err(args.keywords[0].second.loc, Cat(name, "() takes no keyword arguments"));
    }
    if (args.positional.size() < lo || args.positional.size() > hi) {
      return b.Err(loc, Cat(name, "() takes ", lo, lo == hi ? "" : Cat(" to ", hi), " arguments (",
                            args.positional.size(), " given)"));
    }
    return absl::OkStatus();
  };
  if (name == "int.bit_length") {
    if (absl::Status s = argc(0, 0); !s.ok()) return s;
    int64_t v = self.AsInt();
    uint64_t mag = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    int64_t bits = 0;
    for (; mag != 0; mag >>= 1) ++bits;
    return Value::Int(bits, self.params);
  }
  if (name == "float.is_integer") {
    if (absl::Status s = argc(0, 0); !s.ok()) return s;
    return Value::Bool(std::isfinite(self.f) && std::trunc(self.f) == self.f);
  }
  if (name == "expr.astype") {
    if (absl::Status s = argc(1, 1); !s.ok()) return s;
    absl::StatusOr<ir::DType> t = b.StaticDType(arg(0), args.positional[0].loc, "astype()");
    if (!t.ok()) return t.status();
    absl::StatusOr<ir::Expr> e = b.ExprOf(self, loc);
    if (!e.ok()) return e.status();
    return Value::Runtime(CastTo(*t, *e));
  }
  if ((name == "list.append" || name == "list.extend" || name == "list.insert") &&
      self.list->size() >= kMaxStagingItems) {
    return b.Err(loc, "the list is too large");
  }
  if (name == "list.append") {
    if (absl::Status s = argc(1, 1); !s.ok()) return s;
    self.list->push_back(arg(0));
    return Value::None();
  }
  if (name == "list.extend") {
    if (absl::Status s = argc(1, 1); !s.ok()) return s;
    CallArgs inner{loc, {args.positional[0]}, {}};
    absl::StatusOr<Value> items = CallPython(b, "list", inner);
    if (!items.ok()) return items;
    if (self.list->size() + items->Items().size() > kMaxStagingItems) {
      return b.Err(loc, "the list is too large");
    }
    self.list->insert(self.list->end(), items->Items().begin(), items->Items().end());
    return Value::None();
  }
  if (name == "list.insert") {
    if (absl::Status s = argc(2, 2); !s.ok()) return s;
    absl::StatusOr<int64_t> k = b.StaticInt(arg(0), args.positional[0].loc, "list.insert index");
    if (!k.ok()) return k.status();
    int64_t n = static_cast<int64_t>(self.list->size());
    int64_t at = std::clamp<int64_t>(*k < 0 ? *k + n : *k, 0, n);
    self.list->insert(self.list->begin() + at, arg(1));
    return Value::None();
  }
  if (name == "list.pop") {
    if (absl::Status s = argc(0, 1); !s.ok()) return s;
    int64_t n = static_cast<int64_t>(self.list->size());
    int64_t k = n - 1;
    if (!args.positional.empty()) {
      absl::StatusOr<int64_t> x = b.StaticInt(arg(0), args.positional[0].loc, "list.pop index");
      if (!x.ok()) return x.status();
      k = *x < 0 ? *x + n : *x;
    }
    if (k < 0 || k >= n) return b.Err(loc, "pop index out of range");
    Value v = (*self.list)[k];
    self.list->erase(self.list->begin() + k);
    return v;
  }
  if (name == "list.copy") {
    if (absl::Status s = argc(0, 0); !s.ok()) return s;
    return Value::List(*self.list);
  }
  if (name == "list.index" || name == "tuple.index" || name == "list.count" ||
      name == "tuple.count") {
    if (absl::Status s = argc(1, 1); !s.ok()) return s;
    const ValueList& items = self.Items();
    int64_t count = 0;
    for (size_t k = 0; k < items.size(); ++k) {
      if (StagingEquals(items[k], arg(0)).value_or(false)) {
        if (EndsWith(name, "index")) return Value::Int(static_cast<int64_t>(k));
        ++count;
      }
    }
    if (EndsWith(name, "index")) {
      return b.Err(loc, Cat(ValueRepr(arg(0)), " is not in the ", DescribeValue(self)));
    }
    return Value::Int(count);
  }
  if (name == "dict.get") {
    if (absl::Status s = argc(1, 2); !s.ok()) return s;
    for (const auto& [k, v] : *self.dict) {
      if (StagingEquals(k, arg(0)).value_or(false)) return v;
    }
    return args.positional.size() == 2 ? arg(1) : Value::None();
  }
  if (name == "dict.pop") {
    if (absl::Status s = argc(1, 2); !s.ok()) return s;
    for (auto it = self.dict->begin(); it != self.dict->end(); ++it) {
      if (StagingEquals(it->first, arg(0)).value_or(false)) {
        Value v = it->second;
        self.dict->erase(it);
        return v;
      }
    }
    if (args.positional.size() == 2) return arg(1);
    return b.Err(loc, Cat("key ", ValueRepr(arg(0)), " is not in the dict"));
  }
  if (name == "dict.items" || name == "dict.keys" || name == "dict.values") {
    if (absl::Status s = argc(0, 0); !s.ok()) return s;
    ValueList out;
    for (const auto& [k, v] : *self.dict) {
      if (name == "dict.items") out.push_back(Value::Tuple({k, v}));
      if (name == "dict.keys") out.push_back(k);
      if (name == "dict.values") out.push_back(v);
    }
    return Value::List(std::move(out));
  }
  if (name == "dict.copy") {
    if (absl::Status s = argc(0, 0); !s.ok()) return s;
    return Value::Dict(*self.dict);
  }
  if (name == "dict.update") {
    if (args.positional.size() > 1) return b.Err(loc, "dict.update() takes at most 1 argument");
    DictItems add;
    if (!args.positional.empty()) {
      if (arg(0).kind != ValueKind::kDict) return b.Err(loc, "dict.update() needs a dict");
      add = *arg(0).dict;
    }
    for (const auto& [kw, a] : args.keywords) add.emplace_back(Value::Str(kw), a.value);
    for (const auto& [k, v] : add) {
      bool found = false;
      for (auto& item : *self.dict) {
        if (StagingEquals(item.first, k).value_or(false)) {
          item.second = v;
          found = true;
        }
      }
      if (!found) {
        if (self.dict->size() >= kMaxDictItems) return b.Err(loc, "the dict is too large");
        self.dict->emplace_back(k, v);
      }
    }
    return Value::None();
  }
  // str methods
  auto str_arg = [&](size_t k, std::string_view what) -> absl::StatusOr<std::string> {
    return b.StaticStr(arg(k), args.positional[k].loc, what);
  };
  if (name == "str.split") {
    if (absl::Status s = argc(0, 1); !s.ok()) return s;
    ValueList out;
    if (args.positional.empty() || arg(0).kind == ValueKind::kNone) {
      for (const std::string& part : SplitAny(self.s, " \t\n")) out.push_back(Value::Str(part));
    } else {
      absl::StatusOr<std::string> sep = str_arg(0, "str.split separator");
      if (!sep.ok()) return sep.status();
      if (sep->empty()) return b.Err(loc, "empty separator");
      if (absl::Status c = b.At(ChargeSearch(self.s.size(), sep->size()), loc); !c.ok()) return c;
      size_t pos = 0;
      for (size_t at; (at = self.s.find(*sep, pos)) != std::string::npos; pos = at + sep->size()) {
        out.push_back(Value::Str(self.s.substr(pos, at - pos)));
      }
      out.push_back(Value::Str(self.s.substr(pos)));
    }
    return Value::List(std::move(out));
  }
  if (name == "str.join") {
    if (absl::Status s = argc(1, 1); !s.ok()) return s;
    CallArgs inner{loc, {args.positional[0]}, {}};
    absl::StatusOr<Value> items = CallPython(b, "list", inner);
    if (!items.ok()) return items;
    std::string out;
    for (size_t k = 0; k < items->Items().size(); ++k) {
      const Value& v = items->Items()[k];
      if (v.kind != ValueKind::kStr) return b.Err(loc, "str.join() needs strings");
      if (k) out += self.s;
      out += v.s;
      if (out.size() > kMaxStagingItems) return b.Err(loc, "the string is too large");
    }
    return Value::Str(out);
  }
  if (name == "str.strip" || name == "str.lstrip" || name == "str.rstrip") {
    if (absl::Status s = argc(0, 0); !s.ok()) return s;
    if (name == "str.lstrip")
      return Value::Str(std::string(absl::StripLeadingAsciiWhitespace(self.s)));
    if (name == "str.rstrip") {
      return Value::Str(std::string(absl::StripTrailingAsciiWhitespace(self.s)));
    }
    return Value::Str(std::string(absl::StripAsciiWhitespace(self.s)));
  }
  if (name == "str.isdigit" || name == "str.isalpha" || name == "str.isalnum") {
    if (absl::Status s = argc(0, 0); !s.ok()) return s;
    bool all = !self.s.empty();
    for (unsigned char c : self.s) {
      bool ok = name == "str.isdigit"   ? std::isdigit(c) != 0
                : name == "str.isalpha" ? std::isalpha(c) != 0
                                        : std::isalnum(c) != 0;
      all = all && ok;
    }
    return Value::Bool(all);
  }
  if (name == "str.find" || name == "str.count") {
    if (absl::Status s = argc(1, 1); !s.ok()) return s;
    absl::StatusOr<std::string> sub = str_arg(0, name);
    if (!sub.ok()) return sub.status();
    if (absl::Status c = b.At(ChargeSearch(self.s.size(), sub->size()), loc); !c.ok()) return c;
    if (name == "str.find") {
      size_t at = self.s.find(*sub);
      return Value::Int(at == std::string::npos ? -1 : static_cast<int64_t>(at));
    }
    if (sub->empty()) return Value::Int(static_cast<int64_t>(self.s.size()) + 1);
    int64_t n = 0;
    for (size_t at = self.s.find(*sub); at != std::string::npos;
         at = self.s.find(*sub, at + sub->size())) {
      ++n;
    }
    return Value::Int(n);
  }
  if (name == "str.lower" || name == "str.upper") {
    if (absl::Status s = argc(0, 0); !s.ok()) return s;
    std::string out = self.s;
    for (char& c : out) c = name == "str.lower" ? std::tolower(c) : std::toupper(c);
    return Value::Str(out);
  }
  if (name == "str.replace") {
    if (absl::Status s = argc(2, 2); !s.ok()) return s;
    absl::StatusOr<std::string> from = str_arg(0, "str.replace()");
    if (!from.ok()) return from.status();
    absl::StatusOr<std::string> to = str_arg(1, "str.replace()");
    if (!to.ok()) return to.status();
    if (from->empty()) return b.Err(loc, "str.replace() with an empty pattern is not supported");
    if (absl::Status c = b.At(ChargeSearch(self.s.size(), from->size()), loc); !c.ok()) return c;
    std::string out;
    size_t pos = 0;
    for (size_t at; (at = self.s.find(*from, pos)) != std::string::npos; pos = at + from->size()) {
      out += self.s.substr(pos, at - pos) + *to;
      if (out.size() > kMaxStagingItems) return b.Err(loc, "the string is too large");
    }
    return Value::Str(out + self.s.substr(pos));
  }
  if (name == "str.startswith" || name == "str.endswith") {
    if (absl::Status s = argc(1, 1); !s.ok()) return s;
    absl::StatusOr<std::string> x = str_arg(0, name);
    if (!x.ok()) return x.status();
    return Value::Bool(name == "str.startswith" ? StartsWith(self.s, *x) : EndsWith(self.s, *x));
  }
  if (name == "str.format") {
    // "{}" and "{0}" / "{name}" fields, without format specs.
    std::string out;
    size_t next = 0;
    for (size_t k = 0; k < self.s.size(); ++k) {
      char c = self.s[k];
      if ((c == '{' || c == '}') && k + 1 < self.s.size() && self.s[k + 1] == c) {
        out += c;
        ++k;
        continue;
      }
      if (c != '{') {
        out += c;
        continue;
      }
      size_t end = self.s.find('}', k);
      if (end == std::string::npos) return b.Err(loc, "str.format(): unmatched '{'");
      std::string field = self.s.substr(k + 1, end - k - 1);
      const Value* v = nullptr;
      size_t index = 0;
      if (field.empty()) {
        index = next++;
        if (index < args.positional.size()) v = &args.positional[index].value;
      } else if (absl::SimpleAtoi(field, &index)) {
        if (index < args.positional.size()) v = &args.positional[index].value;
      } else {
        for (const auto& [kw, a] : args.keywords) {
          if (kw == field) v = &a.value;
        }
      }
      if (!v) return b.Err(loc, Cat("str.format(): no argument for {", field, "}"));
      out += v->kind == ValueKind::kStr ? v->s : ValueRepr(*v);
      k = end;
    }
    return Value::Str(out);
  }
  return b.Err(loc, Cat("`", name, "` is not supported"));
}

}  // namespace tilec::frontend
