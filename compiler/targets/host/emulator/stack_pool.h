// Fiber stacks for the emulator's threads: fixed-size stacks with a guard page
// below each (a stack overflow faults instead of corrupting a neighbour),
// mapped once and reused by every block an OS thread runs.
#ifndef TILEC_COMPILER_TARGETS_HOST_EMULATOR_STACK_POOL_H_
#define TILEC_COMPILER_TARGETS_HOST_EMULATOR_STACK_POOL_H_

#include <boost/context/stack_context.hpp>
#include <cstddef>
#include <vector>

namespace tilec::host {

class StackPool {
 public:
  // Stacks of at least `bytes` usable bytes (rounded up to whole pages).
  explicit StackPool(size_t bytes);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  // A free stack, mapping a new one when none is free. Throws std::bad_alloc
  // when the mapping fails.
  boost::context::stack_context Allocate();
  void Release(const boost::context::stack_context& stack);

 private:
  size_t usable_;  // page-rounded stack size
  size_t page_;
  std::vector<void*> mappings_;  // every mapping (guard page first)
  std::vector<void*> free_;      // bases of free mappings
};

// Boost.Context StackAllocator over a pool (copied into each fiber).
struct PooledStackAllocator {
  StackPool* pool;
  boost::context::stack_context allocate() { return pool->Allocate(); }
  void deallocate(boost::context::stack_context& stack) noexcept { pool->Release(stack); }
};

}  // namespace tilec::host

#endif  // TILEC_COMPILER_TARGETS_HOST_EMULATOR_STACK_POOL_H_
