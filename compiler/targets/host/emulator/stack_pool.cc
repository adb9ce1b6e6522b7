#include "compiler/targets/host/emulator/stack_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

namespace tilec::host {

StackPool::StackPool(size_t bytes) {
  page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  usable_ = (bytes + page_ - 1) / page_ * page_;
  if (usable_ < 4 * page_) usable_ = 4 * page_;
}

StackPool::~StackPool() {
  for (void* m : mappings_) munmap(m, usable_ + page_);
}

boost::context::stack_context StackPool::Allocate() {
  void* base;
  if (!free_.empty()) {
    base = free_.back();
    free_.pop_back();
  } else {
    base =
        mmap(nullptr, usable_ + page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
    // Stacks grow down: the lowest page is the guard.
    if (mprotect(base, page_, PROT_NONE) != 0) {
      munmap(base, usable_ + page_);
      throw std::bad_alloc();
    }
    mappings_.push_back(base);
  }
  boost::context::stack_context stack;
  stack.size = usable_;
  stack.sp = static_cast<char*>(base) + page_ + usable_;
  return stack;
}

void StackPool::Release(const boost::context::stack_context& stack) {
  free_.push_back(static_cast<char*>(stack.sp) - usable_ - page_);
}

}  // namespace tilec::host
