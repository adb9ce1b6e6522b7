// Queries of the device, answered from the target's hardware profile
// (frontend::DeviceFacts) instead of a GPU: tilec builds a kernel for a
// target, often on a machine with no GPU at all, so what the source asks of
// "the device" is asked of the device the kernel is for.
//
// - tilelang.carver.arch.driver: get_num_sms(), get_device_name(),
//   get_shared_memory_per_block(format="bytes"),
//   get_max_dynamic_shared_size_bytes(format="bytes"),
//   get_registers_per_block().
// - torch.cuda: is_available() (True), device_count() (1), current_device()
//   (0), get_device_name(), get_device_capability() ((major, minor)),
//   get_device_properties() (an object with name, major, minor,
//   multi_processor_count, warp_size, regs_per_multiprocessor,
//   max_threads_per_multi_processor, shared_memory_per_block,
//   shared_memory_per_block_optin, shared_memory_per_multiprocessor,
//   L2_cache_size).
// Every answer is recorded (Builder::RecordDeviceQuery) and reaches the
// program and the artifact. Without a target the query is refused.
#include <optional>

#include "compiler/frontend/builder.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"

namespace tilec::frontend {
namespace {

constexpr std::string_view kDriver = "tilelang.carver.arch.driver";

constexpr std::string_view kDriverQueries[] = {
    "get_num_sms", "get_device_name", "get_shared_memory_per_block",
    "get_max_dynamic_shared_size_bytes", "get_registers_per_block"};
constexpr std::string_view kTorchQueries[] = {"is_available",          "device_count",
                                              "current_device",        "get_device_name",
                                              "get_device_capability", "get_device_properties"};

// `format` of the driver's memory queries: bytes, kb or mb.
absl::StatusOr<int64_t> InFormat(Builder& b, int64_t bytes, const std::optional<Arg>& format,
                                 std::string_view fn) {
  if (!format) return bytes;
  absl::StatusOr<std::string> f = b.StaticStr(format->value, format->loc, "format");
  if (!f.ok()) return f.status();
  if (*f == "bytes") return bytes;
  if (*f == "kb") return bytes / 1024;
  if (*f == "mb") return bytes / (1024 * 1024);
  return b.Err(format->loc, Cat(fn, "(format=\"", *f, "\"): the format is bytes, kb or mb"));
}

}  // namespace

std::optional<Value> DeviceModuleAttribute(std::string_view path, std::string_view attr) {
  if (path == "tilelang" && attr == "carver") return Value::Module("tilelang.carver");
  if (path == "tilelang.carver" && attr == "arch") return Value::Module("tilelang.carver.arch");
  if (path == "tilelang.carver.arch" && attr == "driver")
    return Value::Module(std::string(kDriver));
  if (path == "torch" && attr == "cuda") return Value::Module("torch.cuda");
  for (std::string_view q : kDriverQueries) {
    if (path == kDriver && attr == q) return Value::Builtin(Cat("device.driver.", attr));
  }
  for (std::string_view q : kTorchQueries) {
    if (path == "torch.cuda" && attr == q) return Value::Builtin(Cat("device.torch.cuda.", attr));
  }
  return std::nullopt;
}

absl::StatusOr<Value> CallDevice(Builder& b, std::string_view name, CallArgs& args) {
  // `name`: "driver.<query>" or "torch.cuda.<query>".
  const bool driver = StartsWith(name, "driver.");
  const std::string_view q = name.substr(driver ? 7 : 11);
  const std::string fn(name);
  const bool memory =
      q == "get_shared_memory_per_block" || q == "get_max_dynamic_shared_size_bytes";
  std::vector<std::string_view> names = {"device_id"};
  if (!driver) names = {"device"};
  if (memory) names.push_back("format");
  if (q == "is_available" || q == "device_count" || q == "current_device") names.clear();
  absl::StatusOr<std::vector<std::optional<Arg>>> a = BindArgs(b, args, fn, names, 0);
  if (!a.ok()) return a.status();
  if (!names.empty() && (*a)[0]) {
    // Device 0, the default, or torch's "cuda" / "cuda:0": the one device
    // the kernel is built for.
    const Value& d = (*a)[0]->value;
    const bool first = (d.kind == ValueKind::kInt && d.i == 0) || d.kind == ValueKind::kNone ||
                       (d.kind == ValueKind::kStr && (d.s == "cuda" || d.s == "cuda:0"));
    if (!first) {
      return b.Err((*a)[0]->loc, Cat(fn, "() of ", DescribeValue(d),
                                     ": tilec answers for device 0, the target's"));
    }
  }
  const DeviceFacts* dev = b.device();
  if (!dev) {
    return b.Err(args.loc, Cat(fn,
                               "() asks the device; tilec answers from the hardware profile of "
                               "the target it compiles for, and none was given (--target)"));
  }
  auto record = [&](const std::string& answer) {
    b.RecordDeviceQuery(Cat(fn, "() = ", answer, " (profile ", dev->profile, ")"));
  };
  auto integer = [&](int64_t v) {
    record(Cat(v));
    return Value::Int(v);
  };
  if (q == "is_available") {
    record("True");
    return Value::Bool(true);
  }
  if (q == "device_count") return integer(1);
  if (q == "current_device") return integer(0);
  if (q == "get_num_sms") return integer(dev->sm_count);
  if (q == "get_registers_per_block") return integer(dev->registers_per_block);
  if (q == "get_device_name") {
    record(Cat("\"", dev->name, "\""));
    return Value::Str(dev->name);
  }
  if (memory) {
    const int64_t bytes = q == "get_shared_memory_per_block" ? dev->shared_memory_per_block_default
                                                             : dev->shared_memory_per_block;
    absl::StatusOr<int64_t> v = InFormat(b, bytes, (*a)[1], fn);
    if (!v.ok()) return v.status();
    return integer(*v);
  }
  if (q == "get_device_capability") {
    record(Cat("(", dev->major, ", ", dev->minor, ")"));
    return Value::Tuple({Value::Int(dev->major), Value::Int(dev->minor)});
  }
  // get_device_properties
  auto cls = std::make_shared<ClassValue>();
  cls->name = "_CudaDeviceProperties";
  auto obj = std::make_shared<ObjectValue>();
  obj->cls = cls;
  SetAttr(obj->attrs, "name", Value::Str(dev->name));
  SetAttr(obj->attrs, "major", Value::Int(dev->major));
  SetAttr(obj->attrs, "minor", Value::Int(dev->minor));
  SetAttr(obj->attrs, "multi_processor_count", Value::Int(dev->sm_count));
  SetAttr(obj->attrs, "warp_size", Value::Int(dev->warp_size));
  SetAttr(obj->attrs, "regs_per_multiprocessor", Value::Int(dev->registers_per_sm));
  SetAttr(obj->attrs, "max_threads_per_multi_processor", Value::Int(dev->max_threads_per_sm));
  SetAttr(obj->attrs, "shared_memory_per_block", Value::Int(dev->shared_memory_per_block_default));
  SetAttr(obj->attrs, "shared_memory_per_block_optin", Value::Int(dev->shared_memory_per_block));
  SetAttr(obj->attrs, "shared_memory_per_multiprocessor", Value::Int(dev->shared_memory_per_sm));
  SetAttr(obj->attrs, "L2_cache_size", Value::Int(dev->l2_cache_bytes));
  record(Cat("the properties of ", dev->name, " (", dev->sm_count, " SMs, capability ", dev->major,
             ".", dev->minor, ")"));
  return Value::Object(obj);
}

}  // namespace tilec::frontend
