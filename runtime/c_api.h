/* The runtime's C API: what other languages bind (the Python package uses it
 * through ctypes). A thin layer over runtime/kernel.h; see there for what a
 * launch checks.
 *
 *   tilec_device* dev;  tilec_kernel* k;
 *   if (tilec_device_open("cuda:0", &dev) != 0) puts(tilec_last_error());
 *   tilec_kernel_open(dev, "out/matmul.json", &k);
 *   tilec_arg args[3] = {...};
 *   tilec_kernel_launch(k, args, 3, stream);
 *   tilec_kernel_close(k);  tilec_device_close(dev);
 *
 * Every function returns 0 on success or an absl status code (3 invalid
 * argument, 5 not found, 9 failed precondition, 13 internal, ...); the
 * message of the calling thread's last failure is tilec_last_error().
 */
#ifndef TILEC_RUNTIME_C_API_H_
#define TILEC_RUNTIME_C_API_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TILEC_C_API_VERSION 1

typedef struct tilec_device tilec_device;
typedef struct tilec_kernel tilec_kernel;

enum { TILEC_ARG_TENSOR = 0, TILEC_ARG_INT = 1, TILEC_ARG_FLOAT = 2 };
/* DLPack's device type codes. */
enum { TILEC_DEVICE_CPU = 1, TILEC_DEVICE_CUDA = 2, TILEC_DEVICE_HIP = 10 };

typedef struct {
  int32_t kind;      /* TILEC_ARG_* */
  const char* dtype; /* tensors: "float16", "int8", ... */
  void* data;        /* tensors: the first element */
  int32_t ndim;
  const int64_t* shape;
  const int64_t* strides; /* in elements; NULL: contiguous row-major */
  int32_t device_type;    /* TILEC_DEVICE_* */
  int32_t device_id;
  int64_t int_value;  /* TILEC_ARG_INT */
  double float_value; /* TILEC_ARG_FLOAT */
} tilec_arg;

int tilec_c_api_version(void);
const char* tilec_last_error(void);

/* "cuda:0", "hip:0" or "emulator". */
int tilec_device_open(const char* device, tilec_device** out);
/* JSON: {"name", "arch", "multiprocessors", "clock_khz", "memory_clock_khz",
 * "memory_bytes", "l2_bytes", "driver_version", "device"}; owned by the
 * device, valid until the next call on it. */
const char* tilec_device_info(tilec_device* device);
/* Device memory for callers that have no allocator of their own (tests,
 * bench); on the emulator, host memory. */
int tilec_device_alloc(tilec_device* device, uint64_t bytes, void** out);
int tilec_device_free(tilec_device* device, void* ptr);
int tilec_device_copy_to_device(tilec_device* device, void* dst, const void* src, uint64_t bytes);
int tilec_device_copy_to_host(tilec_device* device, void* dst, const void* src, uint64_t bytes);
int tilec_device_synchronize(tilec_device* device, void* stream);
void tilec_device_close(tilec_device* device);

/* `json_path` names the artifact's <base>.json; the binary and generated
 * source beside it are read too. The device must outlive the kernel. */
int tilec_kernel_open(tilec_device* device, const char* json_path, tilec_kernel** out);
// The same, loading only an artifact signed by the Ed25519 key in the PEM
// file `key_path` (the fleet's public key; <base>.sig beside the .json).
int tilec_kernel_open_verified(tilec_device* device, const char* json_path, const char* key_path,
                               tilec_kernel** out);
/* The artifact's metadata JSON, owned by the kernel. */
const char* tilec_kernel_metadata(tilec_kernel* kernel);
int tilec_kernel_launch(tilec_kernel* kernel, const tilec_arg* args, int32_t nargs, void* stream);
/* Times `iterations` runs after `warmup` ones (cache flushed before each when
 * flush_cache is non-zero); writes the milliseconds of each timed run to
 * `ms` (room for `iterations` values). */
int tilec_kernel_time(tilec_kernel* kernel, const tilec_arg* args, int32_t nargs, void* stream,
                      int32_t warmup, int32_t iterations, int32_t flush_cache, double* ms);
void tilec_kernel_close(tilec_kernel* kernel);

#ifdef __cplusplus
}
#endif

#endif /* TILEC_RUNTIME_C_API_H_ */
