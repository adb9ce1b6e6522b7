#include "compiler/inference/shared_plan.h"

#include <algorithm>
#include <numeric>

#include "compiler/ir/visitor.h"

namespace tilec::inference {
namespace {

void Flatten(const ir::Stmt& s, std::vector<ir::Stmt>& out) {
  if (!s) return;
  if (const auto* q = s->as<ir::SeqNode>()) {
    for (const ir::Stmt& x : q->stmts) Flatten(x, out);
  } else {
    out.push_back(s);
  }
}

// The shared buffers a statement reads or writes, at any depth.
class SharedUses : public ir::IRVisitor {
 public:
  explicit SharedUses(std::map<const ir::BufferNode*, LiveRange>& live) : live_(live) {}

  void At(const ir::Stmt& s, int index) {
    index_ = index;
    Visit(s);
  }

  void Visit(const ir::Stmt& s) override {
    if (!s) return;
    if (const auto* a = s->as<ir::AllocateNode>()) {
      if (a->buffer->scope == ir::Scope::kShared) live_.try_emplace(a->buffer.get());
      Visit(a->init);  // an initialiser may load
      return;
    }
    if (s->kind == ir::StmtKind::kAnnotateLayout) return;  // names a buffer, touches nothing
    IRVisitor::Visit(s);
  }
  using IRVisitor::Visit;

  void VisitBuffer(const ir::Buffer& b) override {
    if (b && b->scope == ir::Scope::kShared) {
      LiveRange& r = live_[b.get()];
      if (r.first < 0) r.first = index_;
      r.last = index_;
    }
    IRVisitor::VisitBuffer(b);
  }

 private:
  std::map<const ir::BufferNode*, LiveRange>& live_;
  int index_ = 0;
};

int64_t AlignUp(int64_t x, int64_t a) { return a > 1 ? (x + a - 1) / a * a : x; }

}  // namespace

std::map<const ir::BufferNode*, LiveRange> SharedLiveRanges(const ir::Stmt& kernel_body) {
  std::vector<ir::Stmt> top;
  Flatten(kernel_body, top);
  std::map<const ir::BufferNode*, LiveRange> live;
  SharedUses uses(live);
  for (size_t i = 0; i < top.size(); ++i) uses.At(top[i], static_cast<int>(i));
  return live;
}

const SharedSlot* SharedPlan::Find(const ir::BufferNode* b) const {
  for (const SharedSlot& s : slots) {
    if (s.buffer == b) return &s;
  }
  return nullptr;
}

bool SharedPlan::Overlap(const ir::BufferNode* a, const ir::BufferNode* b) const {
  if (a == b) return true;
  const SharedSlot* x = Find(a);
  const SharedSlot* y = Find(b);
  if (!x || !y || x->bytes == 0 || y->bytes == 0) return false;
  return x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes;
}

SharedPlan PlanShared(const std::vector<SharedRequest>& requests,
                      const std::map<const ir::BufferNode*, LiveRange>& live, int64_t align) {
  SharedPlan plan;
  plan.slots.resize(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    SharedSlot& s = plan.slots[i];
    s.buffer = requests[i].buffer;
    s.bytes = requests[i].bytes;
    auto it = live.find(s.buffer);
    if (it != live.end()) s.live = it->second;
    plan.unshared_bytes = AlignUp(plan.unshared_bytes + s.bytes, align);
  }
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const SharedSlot& x = plan.slots[a];
    const SharedSlot& y = plan.slots[b];
    if (x.bytes != y.bytes) return x.bytes > y.bytes;
    if (x.live.first != y.live.first) return x.live.first < y.live.first;
    return x.live.last < y.live.last;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    SharedSlot& s = plan.slots[i];
    if (!s.live.accessed()) {
      s.offset = 0;
      plan.total_bytes = std::max(plan.total_bytes, AlignUp(s.bytes, align));
      continue;
    }
    // Candidate offsets: 0 and the aligned end of every live-overlapping slot.
    std::vector<const SharedSlot*> conflicts;
    std::vector<int64_t> candidates = {0};
    for (size_t j : placed) {
      const SharedSlot& o = plan.slots[j];
      if (!o.live.Overlaps(s.live)) continue;
      conflicts.push_back(&o);
      candidates.push_back(AlignUp(o.offset + o.bytes, align));
    }
    std::sort(candidates.begin(), candidates.end());
    for (int64_t c : candidates) {
      bool fits = std::none_of(conflicts.begin(), conflicts.end(), [&](const SharedSlot* o) {
        return c < o->offset + o->bytes && o->offset < c + s.bytes;
      });
      if (fits) {
        s.offset = c;
        break;
      }
    }
    placed.push_back(i);
    plan.total_bytes = std::max(plan.total_bytes, AlignUp(s.offset + s.bytes, align));
  }
  return plan;
}

}  // namespace tilec::inference
