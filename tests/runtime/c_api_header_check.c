/* The C API header compiles as C (C11) and its entry points link from C. */
#include "runtime/c_api.h"

int tilec_c_api_check_from_c(void) {
  tilec_device* device = 0;
  if (tilec_device_open("emulator", &device) != 0) return -1;
  const char* info = tilec_device_info(device);
  tilec_device_close(device);
  return info != 0 && tilec_c_api_version() == TILEC_C_API_VERSION ? 0 : -2;
}
