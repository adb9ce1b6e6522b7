#include "tests/difftest/reducer.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace tilec::difftest {
namespace {

using Path = std::vector<size_t>;

// The statement list a path's prefix leads to, and the statement at it.
std::vector<StmtPtr>* ListAt(std::vector<StmtPtr>& body, const Path& path) {
  std::vector<StmtPtr>* list = &body;
  for (size_t i = 0; i + 1 < path.size(); ++i) list = &(*list)[path[i]]->body;
  return list;
}

void StmtPaths(const std::vector<StmtPtr>& body, Path prefix, std::vector<Path>& out) {
  for (size_t i = 0; i < body.size(); ++i) {
    Path p = prefix;
    p.push_back(i);
    out.push_back(p);
    StmtPaths(body[i]->body, p, out);
  }
}

void ExprPaths(const Expr& e, Path prefix, std::vector<Path>& out) {
  out.push_back(prefix);
  for (size_t i = 0; i < e.args.size(); ++i) {
    Path p = prefix;
    p.push_back(i);
    ExprPaths(*e.args[i], p, out);
  }
}

ExprPtr* ExprAt(ExprPtr* root, const Path& path) {
  ExprPtr* e = root;
  for (size_t i : path) e = &(*e)->args[i];
  return e;
}

// Drops buffers and tensors nothing refers to any more.
void Normalize(Program& p) {
  p.PruneBuffers();
  std::string text = p.Render();
  std::vector<Tensor> kept;
  for (const Tensor& t : p.tensors) {
    if (text.find(t.name + "[") != std::string::npos) kept.push_back(t);
  }
  if (!kept.empty()) p.tensors = std::move(kept);
}

}  // namespace

std::vector<Program> Candidates(const Program& p) {
  std::vector<Program> out;
  std::vector<Path> stmts;
  StmtPaths(p.body, {}, stmts);
  // 1. Remove one statement.
  for (const Path& path : stmts) {
    Program c = p.Clone();
    std::vector<StmtPtr>* list = ListAt(c.body, path);
    list->erase(list->begin() + static_cast<std::ptrdiff_t>(path.back()));
    Normalize(c);
    out.push_back(std::move(c));
  }
  // 2. Simplify an expression: an operand in its place, or a constant.
  for (const Path& path : stmts) {
    const Stmt& s = *(*ListAt(const_cast<Program&>(p).body, path))[path.back()];
    if (!s.value) continue;
    std::vector<Path> exprs;
    ExprPaths(*s.value, {}, exprs);
    for (const Path& ep : exprs) {
      const Expr& e = **ExprAt(const_cast<ExprPtr*>(&s.value), ep);
      std::vector<ExprPtr> replacements;
      for (const ExprPtr& a : e.args) replacements.push_back(a);
      if (e.kind != Expr::Kind::kConst)
        replacements.push_back(Const(IsFloat(e.dtype) ? "1.0" : "1", e.dtype));
      for (size_t k = 0; k < replacements.size(); ++k) {
        Program c = p.Clone();
        Stmt& cs = *(*ListAt(c.body, path))[path.back()];
        ExprPtr* slot = ExprAt(&cs.value, ep);
        if (k < e.args.size()) {
          *slot = (*slot)->args[k];
        } else {
          *slot = replacements[k];
        }
        Normalize(c);
        out.push_back(std::move(c));
      }
    }
  }
  // 3. T.Pipelined -> T.serial.
  for (const Path& path : stmts) {
    const Stmt& s = *(*ListAt(const_cast<Program&>(p).body, path))[path.back()];
    if (s.kind != Stmt::Kind::kPipelined) continue;
    Program c = p.Clone();
    (*ListAt(c.body, path))[path.back()]->kind = Stmt::Kind::kSerial;
    out.push_back(std::move(c));
  }
  // 4. Smaller parameters; dynamic dims bound.
  for (size_t i = 0; i < p.params.size(); ++i) {
    const Param& q = p.params[i];
    if (q.dynamic) {
      Program c = p.Clone();
      c.params[i].dynamic = false;
      out.push_back(std::move(c));
    }
    int64_t m = std::max<int64_t>(q.multiple, 1);
    std::vector<int64_t> values = {q.min, q.value / 2, q.value - m};
    for (int64_t v : values) {
      v = std::max(q.min, v / m * m);
      if (v < q.min || v >= q.value) continue;
      Program c = p.Clone();
      c.params[i].value = v;
      out.push_back(std::move(c));
    }
  }
  return out;
}

FailurePredicate SameFailure(const std::string& target, Outcome outcome,
                             const RunnerOptions& options) {
  RunnerOptions o = options;
  o.only = {target};
  return [o, outcome](const Program& p, TargetResult* result) {
    CaseResult r = RunIsolated(CaseOf(p), o);
    if (r.targets.size() != 1) return false;
    *result = r.targets[0];
    return r.targets[0].outcome == outcome;
  };
}

Reduced Reduce(const Program& p, const TargetResult& failure, const FailurePredicate& fails,
               int max_checks) {
  Reduced r{p.Clone(), failure, 0};
  bool progress = true;
  while (progress && r.checks < max_checks) {
    progress = false;
    std::string current = r.program.Render();
    for (Program& c : Candidates(r.program)) {
      if (r.checks >= max_checks) break;
      if (!c.DefinedBeforeUse() || c.Render() == current) continue;
      ++r.checks;
      TargetResult result;
      if (fails(c, &result)) {
        r.program = std::move(c);
        r.result = result;
        progress = true;
        break;
      }
    }
  }
  return r;
}

std::string RegressionFile(const Reduced& r, const std::string& status) {
  Case c = CaseOf(r.program);
  std::string arch = r.result.target.substr(0, r.result.target.find('+'));
  bool alt = r.result.target.find("+alt") != std::string::npos;
  std::vector<std::string> cmd = {"tilec run THIS_FILE --fn", kFunctionName, "--seed",
                                  std::to_string(c.seed)};
  std::vector<std::string> dims, alts;
  for (const auto& [k, v] : c.dims) {
    cmd.push_back(absl::StrCat("--dim ", k, "=", v));
    dims.push_back(absl::StrCat(k, "=", v));
  }
  for (const auto& [k, v] : c.alt_bindings) {
    if (alt) cmd.push_back(absl::StrCat("-D ", k, "=", v));
    alts.push_back(absl::StrCat(k, "=", v));
  }
  cmd.push_back("--compare --target " + arch);
  std::string detail = r.result.detail.substr(0, 300);
  for (char& ch : detail) {
    if (ch == '\n') ch = ' ';
  }
  std::string out = absl::StrCat(
      "# tilec difftest regression, reduced from generator seed ", c.seed, " (", r.checks,
      " reduction checks).\n", "# outcome: ", OutcomeName(r.result.outcome), " on ",
      r.result.target, "\n", "# category: ", r.result.category, "\n", "# detail: ", detail, "\n",
      "# status: ", status, "\n", "# reproduce: ", absl::StrJoin(cmd, " "), "\n",
      "# case: seed=", c.seed, " tolerance=", c.tolerance_dtype, " depth=", c.accum_depth,
      " atomics=", c.unordered_atomics ? 1 : 0, " dims=", absl::StrJoin(dims, ","),
      " alt=", absl::StrJoin(alts, ","), "\n", c.source);
  return out;
}

bool ParseRegression(const std::string& text, Regression* out) {
  Regression r;
  r.c.source = text;
  bool have_case = false, have_outcome = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, "# outcome: ")) {
      std::vector<std::string> f = absl::StrSplit(line, " on ");
      if (f.size() != 2) return false;
      r.outcome = f[0];
      r.target = f[1];
      have_outcome = true;
    } else if (absl::ConsumePrefix(&line, "# status: ")) {
      r.status = std::string(line);
    } else if (absl::ConsumePrefix(&line, "# case: ")) {
      for (absl::string_view field : absl::StrSplit(line, ' ')) {
        std::pair<std::string, std::string> kv = absl::StrSplit(field, absl::MaxSplits('=', 1));
        if (kv.first == "seed" && !absl::SimpleAtoi(kv.second, &r.c.seed)) return false;
        if (kv.first == "tolerance") r.c.tolerance_dtype = kv.second;
        if (kv.first == "depth" && !absl::SimpleAtoi(kv.second, &r.c.accum_depth)) return false;
        if (kv.first == "atomics") r.c.unordered_atomics = kv.second == "1";
        if (kv.first == "dims" || kv.first == "alt") {
          for (absl::string_view d : absl::StrSplit(kv.second, ',', absl::SkipEmpty())) {
            std::pair<std::string, std::string> nv = absl::StrSplit(d, '=');
            int64_t v = 0;
            if (!absl::SimpleAtoi(nv.second, &v)) return false;
            if (kv.first == "dims") {
              r.c.dims[nv.first] = v;
            } else {
              r.c.alt_bindings.push_back({nv.first, v});
            }
          }
        }
      }
      have_case = true;
    }
  }
  if (!have_case || !have_outcome) return false;
  *out = std::move(r);
  return true;
}

}  // namespace tilec::difftest
