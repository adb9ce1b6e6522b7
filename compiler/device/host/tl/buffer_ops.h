// Host only: overloads of the primitives and templates that generated code
// passes checked pointers (tl/buffer.h) to, so that their memory accesses are
// checked against the one buffer each pointer points into before the plain
// version runs on the raw pointers:
//
//   cp_async_{16,8,4}(dst, src, pred)   the destination's bytes (a store) and,
//                                       when pred, the source's (a load)
//   copy_vec<N>(dst, src), zero_vec<N>(dst), load_vec<T, N>(p),
//   store_vec<T, N>(p, v)               the N-byte access, and its alignment
//                                       (a misaligned vector traps, as the GPU
//                                       faults)
//   gemm_ss / gemm_rs / gemm_ss_wgmma(_issue) / gemm_ss_mfma / gemm_rs_mfma  the rows of each shared operand the
//                                       gemm reads (its layout's columns x M,
//                                       N or K rows), once per call; bounds
//                                       only (padded rows are read unwritten)
//   atomic_add(p, v), red_add(p, v)     the element
//
// and of the deduced integer helpers (floordiv, floormod, ceildiv, imin,
// imax, iabs), which cannot deduce T from a CheckedRef: they read the value
// first.
//
// Included by tl/tl.h after the templates it overloads. A call with plain
// pointers only still resolves to the unchecked version.
#ifndef TILEC_DEVICE_HOST_TL_BUFFER_OPS_H_
#define TILEC_DEVICE_HOST_TL_BUFFER_OPS_H_

#include "tl/buffer.h"

namespace tl {
namespace host {

// Traps unless `p` is a multiple of `bytes`: an N-byte vector access at a
// misaligned address faults on the GPU (misaligned address error), while the
// host would quietly perform it.
inline void check_vector_alignment(const void* p, uint64_t bytes, const char* what) {
  if (reinterpret_cast<uintptr_t>(p) % bytes == 0) [[likely]]
    return;
  char message[192];
  std::snprintf(message, sizeof message,
                "misaligned %llu-byte %s at %p (a vector access must be %llu-byte aligned)",
                static_cast<unsigned long long>(bytes), what, p,
                static_cast<unsigned long long>(bytes));
  Thread* t = current_thread;
  t->rt->trap(t, message);
}

}  // namespace host

#define TL_HOST_CHECKED_CP_ASYNC(N)                                                              \
  template <typename D, typename S>                                                              \
  requires(host::Checked<D> || host::Checked<S>)                                                 \
      TL_HOST_INLINE void cp_async_##N(const D& smem, const S& gmem, bool pred) {                \
    host::check_range(smem, N, true, false);                                                     \
    if (pred) host::check_range(gmem, N, false);                                                 \
    cp_async_##N(static_cast<void*>(host::raw(smem)), static_cast<const void*>(host::raw(gmem)), \
                 pred);                                                                          \
  }

TL_HOST_CHECKED_CP_ASYNC(16)
TL_HOST_CHECKED_CP_ASYNC(8)
TL_HOST_CHECKED_CP_ASYNC(4)

#undef TL_HOST_CHECKED_CP_ASYNC

template <int N, typename D, typename S>
requires(host::Checked<D> || host::Checked<S>) TL_HOST_INLINE
    void copy_vec(const D& dst, const S& src) {
  host::check_range(src, N, false);
  host::check_range(dst, N, true);
  host::check_vector_alignment(host::raw(src), N, "copy_vec load");
  host::check_vector_alignment(host::raw(dst), N, "copy_vec store");
  copy_vec<N>(static_cast<void*>(host::raw(dst)), static_cast<const void*>(host::raw(src)));
}

template <int N, typename D>
requires host::Checked<D> TL_HOST_INLINE void zero_vec(const D& dst) {
  host::check_range(dst, N, true);
  host::check_vector_alignment(dst.get(), N, "zero_vec store");
  zero_vec<N>(static_cast<void*>(dst.get()));
}

template <typename T, int N, typename P>
requires host::Checked<P> TL_HOST_INLINE Vec<T, N> load_vec(const P& p) {
  host::check_range(p, sizeof(T) * N, false);
  host::check_vector_alignment(p.get(), sizeof(T) * N, "load_vec");
  return load_vec<T, N>(static_cast<const T*>(p.get()));
}

template <typename T, int N, typename P>
requires host::Checked<P> TL_HOST_INLINE void store_vec(const P& p, const Vec<T, N>& x) {
  host::check_range(p, sizeof(T) * N, true);
  host::check_vector_alignment(p.get(), sizeof(T) * N, "store_vec");
  store_vec<T, N>(static_cast<T*>(p.get()), x);
}

template <int M, int N, int K, int WarpsM, int WarpsN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, typename AP, typename BP, typename CT>
requires(host::Checked<AP> || host::Checked<BP>) TL_HOST_INLINE
    void gemm_ss(const AP& A_smem, const BP& B_smem, CT* C_frag) {
  using AT = std::remove_cv_t<std::remove_pointer_t<decltype(host::raw(A_smem))>>;
  host::check_range(A_smem, uint64_t{TransA ? K : M} * LayoutA::kCols * sizeof(AT), false, false);
  host::check_range(B_smem, uint64_t{TransB ? N : K} * LayoutB::kCols * sizeof(AT), false, false);
  gemm_ss<M, N, K, WarpsM, WarpsN, TransA, TransB, LayoutA, LayoutB>(
      static_cast<const AT*>(host::raw(A_smem)), static_cast<const AT*>(host::raw(B_smem)), C_frag);
}

template <int M, int N, int K, int WarpsM, int WarpsN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, typename AP, typename BP, typename CT>
requires(host::Checked<AP> || host::Checked<BP>) TL_HOST_INLINE
    void gemm_rs(const AP& A_frag, const BP& B_smem, CT* C_frag) {
  using AT = std::remove_cv_t<std::remove_pointer_t<decltype(host::raw(B_smem))>>;
  host::check_range(A_frag, uint64_t{M} * K * sizeof(AT), false, false);
  host::check_range(B_smem, uint64_t{TransB ? N : K} * LayoutB::kCols * sizeof(AT), false, false);
  gemm_rs<M, N, K, WarpsM, WarpsN, TransA, TransB, LayoutA, LayoutB>(
      static_cast<const AT*>(host::raw(A_frag)), static_cast<const AT*>(host::raw(B_smem)), C_frag);
}

#if defined(TL_AMDGPU)
template <int M, int N, int K, int WavesM, int WavesN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, int T, typename AP, typename BP, typename CT>
requires(host::Checked<AP> || host::Checked<BP>) TL_HOST_INLINE
    void gemm_ss_mfma(const AP& A_smem, const BP& B_smem, CT* C_frag) {
  using AT = std::remove_cv_t<std::remove_pointer_t<decltype(host::raw(A_smem))>>;
  using BT = std::remove_cv_t<std::remove_pointer_t<decltype(host::raw(B_smem))>>;
  host::check_range(A_smem, uint64_t{TransA ? K : M} * LayoutA::kCols * sizeof(AT), false, false);
  host::check_range(B_smem, uint64_t{TransB ? N : K} * LayoutB::kCols * sizeof(BT), false, false);
  gemm_ss_mfma<M, N, K, WavesM, WavesN, TransA, TransB, LayoutA, LayoutB, T>(
      static_cast<const AT*>(host::raw(A_smem)), static_cast<const BT*>(host::raw(B_smem)), C_frag);
}

template <int M, int N, int K, int WavesM, int WavesN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, int T, typename AP, typename BP, typename CT>
requires(host::Checked<AP> || host::Checked<BP>) TL_HOST_INLINE
    void gemm_rs_mfma(const AP& A_frag, const BP& B_smem, CT* C_frag) {
  using AT = std::remove_cv_t<std::remove_pointer_t<decltype(host::raw(B_smem))>>;
  host::check_range(B_smem, uint64_t{TransB ? N : K} * LayoutB::kCols * sizeof(AT), false, false);
  gemm_rs_mfma<M, N, K, WavesM, WavesN, TransA, TransB, LayoutA, LayoutB, T>(
      static_cast<const AT*>(host::raw(A_frag)), static_cast<const AT*>(host::raw(B_smem)), C_frag);
}
#endif

template <int M, int N, int K, int WgM, int WgN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, typename AP, typename BP>
requires(host::Checked<AP> || host::Checked<BP>) TL_HOST_INLINE
    void gemm_ss_wgmma(const AP& A_smem, const BP& B_smem, float* C_frag) {
  using AT = std::remove_cv_t<std::remove_pointer_t<decltype(host::raw(A_smem))>>;
  using BT = std::remove_cv_t<std::remove_pointer_t<decltype(host::raw(B_smem))>>;
  host::check_range(A_smem, uint64_t{TransA ? K : M} * LayoutA::kCols * sizeof(AT), false, false);
  host::check_range(B_smem, uint64_t{TransB ? N : K} * LayoutB::kCols * sizeof(BT), false, false);
  gemm_ss_wgmma<M, N, K, WgM, WgN, TransA, TransB, LayoutA, LayoutB>(
      static_cast<const AT*>(host::raw(A_smem)), static_cast<const BT*>(host::raw(B_smem)), C_frag);
}

template <int M, int N, int K, int WgM, int WgN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, typename AP, typename BP>
requires(host::Checked<AP> || host::Checked<BP>) TL_HOST_INLINE
    void gemm_ss_wgmma_issue(const AP& A_smem, const BP& B_smem, float* C_frag, WgmmaGroup& group) {
  using AT = std::remove_cv_t<std::remove_pointer_t<decltype(host::raw(A_smem))>>;
  using BT = std::remove_cv_t<std::remove_pointer_t<decltype(host::raw(B_smem))>>;
  host::check_range(A_smem, uint64_t{TransA ? K : M} * LayoutA::kCols * sizeof(AT), false, false);
  host::check_range(B_smem, uint64_t{TransB ? N : K} * LayoutB::kCols * sizeof(BT), false, false);
  gemm_ss_wgmma_issue<M, N, K, WgM, WgN, TransA, TransB, LayoutA, LayoutB>(
      static_cast<const AT*>(host::raw(A_smem)), static_cast<const BT*>(host::raw(B_smem)), C_frag,
      group);
}

template <int M, int N, int K, int WgM, int WgN, bool TransB, typename LayoutB, typename AP,
          typename BP>
requires(host::Checked<AP> || host::Checked<BP>) TL_HOST_INLINE
    void gemm_rs_wgmma(const AP& A_frag, const BP& B_smem, float* C_frag) {
  using AT = std::remove_cv_t<std::remove_pointer_t<decltype(host::raw(A_frag))>>;
  using BT = std::remove_cv_t<std::remove_pointer_t<decltype(host::raw(B_smem))>>;
  host::check_range(B_smem, uint64_t{TransB ? N : K} * LayoutB::kCols * sizeof(BT), false, false);
  gemm_rs_wgmma<M, N, K, WgM, WgN, TransB, LayoutB>(
      static_cast<const AT*>(host::raw(A_frag)), static_cast<const BT*>(host::raw(B_smem)), C_frag);
}

// A value read through a checked buffer (`tl::atomic_add(&B_s[i], A_s[i])`)
// is the element it reads, as a plain reference is on the GPU.
template <typename T, typename U>
TL_HOST_INLINE T atomic_add(T* addr, const host::CheckedRef<U>& v) {
  return atomic_add(addr, v.load());
}
template <typename T, typename U>
TL_HOST_INLINE T atomic_max(T* addr, const host::CheckedRef<U>& v) {
  return atomic_max(addr, v.load());
}
template <typename T, typename U>
TL_HOST_INLINE T atomic_min(T* addr, const host::CheckedRef<U>& v) {
  return atomic_min(addr, v.load());
}
template <typename T, typename U>
TL_HOST_INLINE void red_add(T* addr, const host::CheckedRef<U>& v) {
  red_add(addr, v.load());
}
template <typename T, typename V>
TL_HOST_INLINE T atomic_add(const host::CheckedPtr<T>& addr, V v) {
  host::check_range(addr, sizeof(T), true);
  return atomic_add(addr.get(), v);
}

template <typename T, typename V>
TL_HOST_INLINE void red_add(const host::CheckedPtr<T>& addr, V v) {
  host::check_range(addr, sizeof(T), true);
  red_add(addr.get(), v);
}

template <typename T, typename U>
TL_HOST_INLINE T atomic_max(const host::CheckedPtr<T>& addr, const host::CheckedRef<U>& v) {
  host::check_range(addr, sizeof(T), true);
  return atomic_max(addr.get(), v.load());
}
template <typename T, typename U>
TL_HOST_INLINE T atomic_min(const host::CheckedPtr<T>& addr, const host::CheckedRef<U>& v) {
  host::check_range(addr, sizeof(T), true);
  return atomic_min(addr.get(), v.load());
}

namespace host {

template <typename P>
inline constexpr bool kIsCheckedRef = false;
template <typename T>
inline constexpr bool kIsCheckedRef<CheckedRef<T>> = true;

template <typename A>
concept Ref = kIsCheckedRef<std::remove_cvref_t<A>>;

template <typename A>
TL_HOST_INLINE auto value(const A& a) {
  if constexpr (Ref<A>) {
    return a.load();
  } else {
    return a;
  }
}

}  // namespace host

// An element read through a checked pointer is a CheckedRef; the arithmetic
// and math functions take its value, as they take the element read through a
// raw pointer. Each overload takes CheckedRef<T> by value, a pattern more
// specialized than the generic `T f(T)` / `T f(T, T)` templates of arith.h and
// math.h, so overload resolution picks it unambiguously (a `const A&` with a
// constraint would tie with them; two elements of one type need the
// (CheckedRef<T>, CheckedRef<T>) form to beat `T f(T, T)`). The value then meets the same
// overloads, and the same static assertions, as on the GPU.
#define TL_HOST_BY_VALUE1(name)                     \
  template <typename T>                             \
  TL_HOST_INLINE auto name(host::CheckedRef<T> a) { \
    return name(a.load());                          \
  }
#define TL_HOST_BY_VALUE2(name)                                            \
  template <typename T, typename B>                                        \
  TL_HOST_INLINE auto name(host::CheckedRef<T> a, const B& b) {            \
    return name(a.load(), host::value(b));                                 \
  }                                                                        \
  template <typename A, typename T>                                        \
  TL_HOST_INLINE auto name(const A& a, host::CheckedRef<T> b) {            \
    return name(host::value(a), b.load());                                 \
  }                                                                        \
  template <typename T, typename U>                                        \
  TL_HOST_INLINE auto name(host::CheckedRef<T> a, host::CheckedRef<U> b) { \
    return name(a.load(), b.load());                                       \
  }                                                                        \
  template <typename T>                                                    \
  TL_HOST_INLINE auto name(host::CheckedRef<T> a, host::CheckedRef<T> b) { \
    return name(a.load(), b.load());                                       \
  }

TL_HOST_BY_VALUE2(floordiv)
TL_HOST_BY_VALUE2(floormod)
TL_HOST_BY_VALUE2(ceildiv)
TL_HOST_BY_VALUE2(imin)
TL_HOST_BY_VALUE2(imax)
TL_HOST_BY_VALUE2(pow)
TL_HOST_BY_VALUE2(fmax)
TL_HOST_BY_VALUE2(fmin)
TL_HOST_BY_VALUE1(iabs)
TL_HOST_BY_VALUE1(exp)
TL_HOST_BY_VALUE1(exp2)
TL_HOST_BY_VALUE1(log)
TL_HOST_BY_VALUE1(log2)
TL_HOST_BY_VALUE1(sqrt)
TL_HOST_BY_VALUE1(rsqrt)
TL_HOST_BY_VALUE1(tanh)
TL_HOST_BY_VALUE1(sigmoid)
TL_HOST_BY_VALUE1(sin)
TL_HOST_BY_VALUE1(cos)
TL_HOST_BY_VALUE1(erf)
TL_HOST_BY_VALUE1(floor)
TL_HOST_BY_VALUE1(ceil)
TL_HOST_BY_VALUE1(round)
TL_HOST_BY_VALUE1(fabs)
TL_HOST_BY_VALUE1(tan)
TL_HOST_BY_VALUE1(asin)
TL_HOST_BY_VALUE1(acos)
TL_HOST_BY_VALUE1(atan)
TL_HOST_BY_VALUE1(sinh)
TL_HOST_BY_VALUE1(cosh)
TL_HOST_BY_VALUE1(asinh)
TL_HOST_BY_VALUE1(acosh)
TL_HOST_BY_VALUE1(atanh)
TL_HOST_BY_VALUE1(log10)
TL_HOST_BY_VALUE1(log1p)
TL_HOST_BY_VALUE1(exp10)
TL_HOST_BY_VALUE1(expm1)
TL_HOST_BY_VALUE1(trunc)
TL_HOST_BY_VALUE2(atan2)
TL_HOST_BY_VALUE2(fmod)
TL_HOST_BY_VALUE2(hypot)
TL_HOST_BY_VALUE2(copysign)
TL_HOST_BY_VALUE1(popcount)
TL_HOST_BY_VALUE1(clz)

#undef TL_HOST_BY_VALUE1
#undef TL_HOST_BY_VALUE2

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_BUFFER_OPS_H_
