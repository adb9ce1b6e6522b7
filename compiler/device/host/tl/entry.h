// Entry points of a kernel module for the emulator (tl/abi.h). The host
// toolchain appends, after the generated source,
//   TILEC_HOST_MODULE()
//   TILEC_HOST_ENTRY(<name>)   // one per __global__ function
// so the generated code itself carries nothing host-specific. The entry reads
// each parameter from args[i] (a pointer to its value) with the type the
// kernel declares, so any parameter list works (pointers, ints, floats). A
// tl::gptr<T> parameter (tl/buffer.h) is read as the T* the launch passes and
// gets the bounds of the registered buffer holding it.
#ifndef TILEC_DEVICE_HOST_TL_ENTRY_H_
#define TILEC_DEVICE_HOST_TL_ENTRY_H_

#include <cstddef>
#include <type_traits>
#include <utility>

#include "tl/abi.h"
#include "tl/buffer.h"
#include "tl/thread.h"

namespace tl::host {

template <typename P>
struct KernelParam {
  static P Read(void* arg) { return *static_cast<P*>(arg); }
};

template <typename T>
struct KernelParam<CheckedPtr<T>> {
  static CheckedPtr<T> Read(void* arg) { return global_param(*static_cast<T**>(arg)); }
};

template <typename... P, std::size_t... I>
void InvokeKernel(void (*kernel)(P...), void** args, std::index_sequence<I...>) {
  kernel(KernelParam<std::remove_cv_t<P>>::Read(args[I])...);
}

template <typename... P>
void InvokeKernel(void (*kernel)(P...), void** args) {
  InvokeKernel(kernel, args, std::index_sequence_for<P...>{});
}

template <typename... P>
constexpr int KernelArity(void (*)(P...)) {
  return static_cast<int>(sizeof...(P));
}

}  // namespace tl::host

#define TILEC_HOST_MODULE()                                                             \
  extern "C" __attribute__((visibility("default"))) unsigned tilec_host_abi_version() { \
    return ::tl::host::kAbiVersion;                                                     \
  }

#define TILEC_HOST_ENTRY(name)                                                      \
  extern "C" __attribute__((visibility("default"))) void tilec_host_entry_##name(   \
      ::tl::host::Thread* thread, void** args) {                                    \
    ::tl::host::current_thread = thread;                                            \
    ::tl::host::InvokeKernel(name, args);                                           \
  }                                                                                 \
  extern "C" __attribute__((visibility("default"))) int tilec_host_arity_##name() { \
    return ::tl::host::KernelArity(name);                                           \
  }

#endif  // TILEC_DEVICE_HOST_TL_ENTRY_H_
