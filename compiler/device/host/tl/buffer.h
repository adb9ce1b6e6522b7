// Host twin of cuda/tl/buffer.h: the spellings generated code declares its
// global tensors and shared buffers with, as bounds-checked pointers.
//
//   tl::gptr<T>                          a global tensor parameter
//   tl::smem_buffer<T>(smem, byte_offset, elements, "name")
//                                        one shared buffer of the block
//
// On CUDA both are plain `T*` (so the GPU code and its SASS do not change);
// here a CheckedPtr<T> carries the bounds of the one buffer it points into: a
// kernel parameter gets the registered global buffer that holds it (the
// launch's EmulatorOptions::buffers; unchecked when none are registered), a
// shared buffer exactly its own bytes, so an overflow from A_shared into
// B_shared is caught although both lie in the block's shared memory. Pointer
// arithmetic keeps the bounds; indexing gives a CheckedRef whose reads are
// checked loads and whose assignments are checked stores; `&p[i]` is a
// CheckedPtr again. Passing one to a function taking `T*` decays to the raw
// pointer (the primitives and templates that generated code passes them to
// have checked overloads in tl/buffer_ops.h).
//
// A failed check aborts the launch naming the buffer, the access (load or
// store, bytes, address), how many bytes it lies outside, and the return
// address inside the access, which the emulator resolves to the line of the
// generated source. Every checked access also counts towards the watchdog's
// poll (tl/thread.h).
#ifndef TILEC_DEVICE_HOST_TL_BUFFER_H_
#define TILEC_DEVICE_HOST_TL_BUFFER_H_

#include <concepts>
#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "tl/thread.h"
#include "tl/types.h"

namespace tl {
namespace host {

struct Bounds {
  uintptr_t lo = 0;
  uintptr_t hi = ~uintptr_t{0};
  const char* name = "";
  int32_t shared = 0;  // 0: global, 1: shared, 2: shared with uninitialised-read tracking
};

[[noreturn]] inline void access_fault(const void* p, uint64_t bytes, const Bounds& b, bool store,
                                     const void* pc) {
  Thread* t = current_thread;
  AccessFault f{p,
                bytes,
                {reinterpret_cast<const void*>(b.lo), reinterpret_cast<const void*>(b.hi), b.name},
                b.shared != 0 ? 1 : 0,
                store ? 1 : 0,
                pc};
  t->rt->access_fault(t, &f);
  __builtin_trap();  // access_fault does not return
}

// Checks that [p, p + bytes) lies inside `b` (and, for a shared buffer with
// tracking, marks a store's bytes written or checks a load's were), and
// counts towards the watchdog's poll. Out of line, so that checked code stays
// quick to compile; its return address is the access in the kernel (the
// callers are always inlined). `track` = false checks the bounds only (an
// asynchronous copy's destination, which the runtime marks written when the
// copy lands).
TL_HOST_NOINLINE inline void check_access(const void* p, uint64_t bytes, const Bounds& b,
                                          bool store, bool track = true) {
  const void* pc = TL_HOST_CALLER();
  if (--poll_countdown == 0) [[unlikely]] {
    poll_countdown = kPollEvery;
    Thread* t = current_thread;
    t->rt->poll(t, pc);
  }
  const auto a = reinterpret_cast<uintptr_t>(p);
  if (a < b.lo || a > b.hi || bytes > b.hi - a) [[unlikely]] access_fault(p, bytes, b, store, pc);
  if (b.shared == 2 && track) [[unlikely]] {
    Thread* t = current_thread;
    if (store) {
      t->rt->smem_written(t, p, bytes);
    } else {
      t->rt->smem_read(t, p, bytes, pc);
    }
  }
}

template <typename T>
class CheckedRef;

template <typename T>
class CheckedPtr {
 public:
  using element_type = T;

  CheckedPtr() = default;
  TL_HOST_INLINE CheckedPtr(T* p, const Bounds& b) : p_(p), b_(b) {}
  // A non-const pointer converts to a const one with the same bounds.
  template <typename U>
    requires(std::is_same_v<const U, T> && !std::is_same_v<U, T>)
  TL_HOST_INLINE CheckedPtr(const CheckedPtr<U>& o) : p_(o.get()), b_(o.bounds()) {}

  TL_HOST_INLINE T* get() const { return p_; }
  TL_HOST_INLINE const Bounds& bounds() const { return b_; }
  // Decays to the raw pointer for functions that take one.
  TL_HOST_INLINE operator T*() const { return p_; }

  template <std::integral I>
  TL_HOST_INLINE CheckedPtr operator+(I i) const {
    return CheckedPtr(p_ + i, b_);
  }
  template <std::integral I>
  TL_HOST_INLINE CheckedPtr operator-(I i) const {
    return CheckedPtr(p_ - i, b_);
  }
  template <std::integral I>
  TL_HOST_INLINE CheckedPtr& operator+=(I i) {
    p_ += i;
    return *this;
  }
  template <std::integral I>
  TL_HOST_INLINE CheckedRef<T> operator[](I i) const {
    return CheckedRef<T>(p_ + i, b_);
  }
  TL_HOST_INLINE CheckedRef<T> operator*() const { return CheckedRef<T>(p_, b_); }

 private:
  T* p_ = nullptr;
  Bounds b_;
};

template <typename T>
class CheckedRef {
 public:
  TL_HOST_INLINE CheckedRef(T* p, const Bounds& b) : p_(p), b_(b) {}
  CheckedRef(const CheckedRef&) = default;

  TL_HOST_INLINE std::remove_cv_t<T> load() const {
    check_access(p_, sizeof(T), b_, false);
    return *p_;
  }
  TL_HOST_INLINE void store(const std::remove_cv_t<T>& v) const {
    check_access(p_, sizeof(T), b_, true);
    *p_ = v;
  }

  TL_HOST_INLINE operator std::remove_cv_t<T>() const { return load(); }
  // The 16- and 8-bit float types convert to float directly, so `float(A[i])`
  // reads as it does on a raw pointer.
  template <typename U = std::remove_cv_t<T>>
    requires(!std::is_arithmetic_v<U> && std::is_convertible_v<U, float>)
  TL_HOST_INLINE operator float() const {
    return float(load());
  }

  TL_HOST_INLINE CheckedRef& operator=(const std::remove_cv_t<T>& v) {
    store(v);
    return *this;
  }
  TL_HOST_INLINE CheckedRef& operator=(const CheckedRef& o) {
    store(o.load());
    return *this;
  }
  template <typename U>
  TL_HOST_INLINE CheckedRef& operator+=(const U& v) {
    store(static_cast<std::remove_cv_t<T>>(load() + v));
    return *this;
  }
  template <typename U>
  TL_HOST_INLINE CheckedRef& operator-=(const U& v) {
    store(static_cast<std::remove_cv_t<T>>(load() - v));
    return *this;
  }
  template <typename U>
  TL_HOST_INLINE CheckedRef& operator*=(const U& v) {
    store(static_cast<std::remove_cv_t<T>>(load() * v));
    return *this;
  }

  TL_HOST_INLINE CheckedPtr<T> operator&() const { return CheckedPtr<T>(p_, b_); }

 private:
  T* p_;
  Bounds b_;
};

template <typename P>
inline constexpr bool kIsChecked = false;
template <typename T>
inline constexpr bool kIsChecked<CheckedPtr<T>> = true;

template <typename P>
concept Checked = kIsChecked<std::remove_cvref_t<P>>;

// The raw pointer of a checked or plain pointer.
template <typename P>
TL_HOST_INLINE auto raw(const P& p) {
  if constexpr (Checked<P>) {
    return p.get();
  } else {
    return p;
  }
}

// check_access for checked pointers; nothing for plain ones.
template <typename P>
TL_HOST_INLINE void check_range(const P& p, uint64_t bytes, bool store, bool track = true) {
  if constexpr (Checked<P>) check_access(p.get(), bytes, p.bounds(), store, track);
}

// A kernel parameter of type gptr<T>: the registered global buffer holding it.
template <typename T>
inline CheckedPtr<T> global_param(T* p) {
  Thread* t = current_thread;
  BufferBounds bb{};
  Bounds b;
  switch (t->rt->lookup_global(t, p, &bb)) {
    case 1:
      b = Bounds{reinterpret_cast<uintptr_t>(bb.lo), reinterpret_cast<uintptr_t>(bb.hi), bb.name,
                 0};
      break;
    case 0:
      b = Bounds{reinterpret_cast<uintptr_t>(p), reinterpret_cast<uintptr_t>(p),
                 "(a pointer outside every registered buffer)", 0};
      break;
    default: break;  // nothing registered: unchecked
  }
  return CheckedPtr<T>(p, b);
}

}  // namespace host

template <typename T>
using gptr = host::CheckedPtr<T>;

// `elements` elements of T at `byte_offset` in the block's dynamic shared
// memory `smem` (from dynamic_smem()); `name` is for messages.
template <typename T>
inline host::CheckedPtr<T> smem_buffer(uint8_t* smem, long long byte_offset, long long elements,
                                       const char* name) {
  host::Thread* t = host::current_thread;
  const uint64_t bytes = static_cast<uint64_t>(elements) * sizeof(T);
  if (smem != t->smem || byte_offset < 0 || elements < 0 ||
      static_cast<uint64_t>(byte_offset) > t->smem_bytes ||
      bytes > t->smem_bytes - static_cast<uint64_t>(byte_offset)) {
    char message[256];
    std::snprintf(message, sizeof message,
                  "tl::smem_buffer: shared buffer '%s' (%lld bytes at offset %lld) does not lie "
                  "inside the block's %llu bytes of dynamic shared memory (a tilec bug when the "
                  "code is generated)",
                  name, static_cast<long long>(bytes), byte_offset,
                  static_cast<unsigned long long>(t->smem_bytes));
    t->rt->trap(t, message);
  }
  const auto lo = reinterpret_cast<uintptr_t>(smem + byte_offset);
  return host::CheckedPtr<T>(reinterpret_cast<T*>(smem + byte_offset),
                             host::Bounds{lo, lo + bytes, name, t->check_uninit ? 2 : 1});
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_BUFFER_H_
