// The shared-memory plan of a kernel: where each shared buffer lives in the
// block's dynamic shared memory, reusing the bytes of buffers whose lifetimes
// do not overlap.
//
// Live ranges are counted in the kernel body's top-level statements (nested
// sequences flattened; a `Let` binds for the rest of its sequence, so the
// body stays flat). A buffer is live from the first top-level statement that
// reads or writes it to the last; an access anywhere inside a statement (a
// loop, a branch) makes the whole statement part of the range, so values a
// loop carries from one iteration to the next are never overwritten.
// Allocations and layout annotations are not accesses. Two buffers whose
// ranges share a statement never share a byte.
//
// Placement is first fit, largest buffer first (ties: earlier first use,
// then earlier last use, then declaration order), every offset aligned to
// `align` bytes. A buffer no statement accesses is placed at offset 0
// without a range: it is never read or written, so it shares bytes with
// anything.
//
// Whoever reuses bytes must order the accesses: the CUDA emitter treats an
// access to a buffer as an access to every buffer it overlaps when it
// places block barriers (emitter_stmt.cc), so the last reader of one buffer
// and the first writer of the next are always separated by a barrier.
#ifndef TILEC_COMPILER_INFERENCE_SHARED_PLAN_H_
#define TILEC_COMPILER_INFERENCE_SHARED_PLAN_H_

#include <cstdint>
#include <map>
#include <vector>

#include "compiler/ir/ir.h"

namespace tilec::inference {

struct LiveRange {
  int first = -1;  // top-level statement indices, inclusive; -1: never accessed
  int last = -1;
  bool accessed() const { return first >= 0; }
  bool Overlaps(const LiveRange& o) const {
    return accessed() && o.accessed() && first <= o.last && o.first <= last;
  }
};

// Live ranges of the shared buffers of `kernel_body` (buffers allocated in
// it with scope shared); buffers never accessed have first == last == -1.
std::map<const ir::BufferNode*, LiveRange> SharedLiveRanges(const ir::Stmt& kernel_body);

struct SharedRequest {
  const ir::BufferNode* buffer = nullptr;
  int64_t bytes = 0;  // every pipeline stage included
};

struct SharedSlot {
  const ir::BufferNode* buffer = nullptr;
  int64_t offset = 0;
  int64_t bytes = 0;
  LiveRange live;
};

struct SharedPlan {
  std::vector<SharedSlot> slots;  // in the order of the requests
  int64_t total_bytes = 0;        // end of the highest slot, aligned to `align`
  int64_t unshared_bytes = 0;     // what side-by-side placement would take

  const SharedSlot* Find(const ir::BufferNode* b) const;
  // Whether the bytes of `a` and `b` intersect (a buffer overlaps itself).
  bool Overlap(const ir::BufferNode* a, const ir::BufferNode* b) const;
};

// Places `requests` (in declaration order) given their live ranges; a
// request with no entry in `live` is treated as never accessed.
SharedPlan PlanShared(const std::vector<SharedRequest>& requests,
                      const std::map<const ir::BufferNode*, LiveRange>& live, int64_t align);

}  // namespace tilec::inference

#endif  // TILEC_COMPILER_INFERENCE_SHARED_PLAN_H_
