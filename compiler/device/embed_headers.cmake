# Writes a C++ source holding the text of every device header, for
# device_headers.h. Run as a script:
#   cmake -DROOT=<compiler/device> -DOUT=<file.cc> -P embed_headers.cmake
# Each target's list is its own folder (cuda/, host/) plus common/, with
# paths relative to that folder (e.g. "tl/gemm.h"), sorted by path. A path
# present in both a target folder and common/ is an error: the include would
# be ambiguous.
cmake_minimum_required(VERSION 3.25)

set(delim "tilec_hdr")

# Sets out_var to the initializer entries `{"path", R"d(text)d"sv},` of the
# headers under the given folders of ROOT.
function(embed_target out_var)
  set(paths "")
  foreach(folder ${ARGN})
    file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${ROOT}/${folder}"
         "${ROOT}/${folder}/*.h")
    foreach(rel ${files})
      if(rel IN_LIST paths)
        message(FATAL_ERROR "device header ${rel} exists in more than one of: ${ARGN}")
      endif()
      list(APPEND paths "${rel}")
      set(folder_of_${rel} "${folder}")
    endforeach()
  endforeach()
  list(SORT paths)
  set(body "")
  foreach(rel ${paths})
    set(file "${ROOT}/${folder_of_${rel}}/${rel}")
    file(READ "${file}" text)
    string(FIND "${text}" ")${delim}\"" clash)
    if(NOT clash EQUAL -1)
      message(FATAL_ERROR "${file} contains the raw-string delimiter )${delim}\"")
    endif()
    string(APPEND body "    {\"${rel}\"sv, R\"${delim}(${text})${delim}\"sv},\n")
  endforeach()
  set(${out_var} "${body}" PARENT_SCOPE)
endfunction()

embed_target(cuda_entries cuda common)
embed_target(host_entries host common)
embed_target(hip_entries hip common)

file(WRITE "${OUT}.tmp" "// Generated from compiler/device/{common,cuda,host,hip} by \
compiler/device/embed_headers.cmake.
// Do not edit.
#include <span>
#include <string_view>

#include \"compiler/device/device_headers.h\"

namespace tilec::device {
namespace {

using namespace std::string_view_literals;

constexpr DeviceHeader kCudaHeaders[] = {
${cuda_entries}};

constexpr DeviceHeader kHostHeaders[] = {
${host_entries}};

constexpr DeviceHeader kHipHeaders[] = {
${hip_entries}};

}  // namespace

std::span<const DeviceHeader> DeviceHeaders(DeviceTarget target) {
  switch (target) {
    case DeviceTarget::kCuda: return kCudaHeaders;
    case DeviceTarget::kHost: return kHostHeaders;
    case DeviceTarget::kHip: return kHipHeaders;
  }
  return {};
}

}  // namespace tilec::device
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
