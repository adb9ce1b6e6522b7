#include "compiler/targets/amdgpu/code_object.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace tilec::amdgpu {
namespace {

constexpr uint16_t kEmAmdgpu = 224;
constexpr uint32_t kShtProgbits = 1;
constexpr uint32_t kShtNote = 7;
constexpr uint32_t kNtAmdgpuMetadata = 32;
constexpr int kMaxDepth = 32;

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("AMDGPU code object: ", what));
}

template <typename T>
bool ReadLe(std::string_view b, uint64_t at, T* out) {
  if (at > b.size() || b.size() - at < sizeof(T)) return false;
  std::memcpy(out, b.data() + at, sizeof(T));  // the hosts tilec runs on are little-endian
  return true;
}

// A MessagePack value: what the metadata note uses (maps, arrays, strings,
// integers, booleans, nil, floats, binary).
struct Value {
  enum class Kind { kNil, kBool, kInt, kFloat, kString, kArray, kMap } kind = Kind::kNil;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<Value> array;       // kArray; kMap: the values
  std::vector<std::string> keys;  // kMap: the keys (strings, as the note has)

  const Value* Find(std::string_view key) const {
    if (kind != Kind::kMap) return nullptr;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return &array[i];
    }
    return nullptr;
  }
  int64_t Int(std::string_view key) const {
    const Value* v = Find(key);
    return v != nullptr && v->kind == Kind::kInt ? v->i : 0;
  }
};

class MsgPack {
 public:
  explicit MsgPack(std::string_view b) : b_(b) {}

  absl::StatusOr<Value> Parse() {
    Value v;
    if (absl::Status s = Read(v, 0); !s.ok()) return s;
    return v;
  }

 private:
  absl::Status Need(uint64_t n) {
    if (at_ > b_.size() || b_.size() - at_ < n) {
      return Bad(absl::StrCat("metadata note ends inside a value at byte ", at_));
    }
    return absl::OkStatus();
  }
  uint64_t Be(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(b_[at_++]);
    return v;
  }
  absl::Status Str(uint64_t n, std::string& out) {
    if (absl::Status s = Need(n); !s.ok()) return s;
    out.assign(b_.data() + at_, n);
    at_ += n;
    return absl::OkStatus();
  }
  absl::Status Read(Value& v, int depth) {
    if (depth > kMaxDepth) return Bad("metadata nested too deeply");
    if (absl::Status s = Need(1); !s.ok()) return s;
    const uint8_t t = static_cast<uint8_t>(b_[at_++]);
    auto width = [&](int bytes, uint64_t* n) -> absl::Status {
      if (absl::Status s = Need(bytes); !s.ok()) return s;
      *n = Be(bytes);
      return absl::OkStatus();
    };
    uint64_t n = 0;
    if (t <= 0x7f) {
      v.kind = Value::Kind::kInt;
      v.i = t;
      return absl::OkStatus();
    }
    if (t >= 0xe0) {
      v.kind = Value::Kind::kInt;
      v.i = static_cast<int8_t>(t);
      return absl::OkStatus();
    }
    if ((t & 0xf0) == 0x80) return Map(v, t & 0x0f, depth);
    if ((t & 0xf0) == 0x90) return Array(v, t & 0x0f, depth);
    if ((t & 0xe0) == 0xa0) {
      v.kind = Value::Kind::kString;
      return Str(t & 0x1f, v.s);
    }
    switch (t) {
      case 0xc0: v.kind = Value::Kind::kNil; return absl::OkStatus();
      case 0xc2:
      case 0xc3:
        v.kind = Value::Kind::kBool;
        v.i = t == 0xc3;
        return absl::OkStatus();
      case 0xc4: case 0xc5: case 0xc6: {  // bin: kept as a string
        if (absl::Status s = width(1 << (t - 0xc4), &n); !s.ok()) return s;
        v.kind = Value::Kind::kString;
        return Str(n, v.s);
      }
      case 0xca: case 0xcb: {
        const int bytes = t == 0xca ? 4 : 8;
        if (absl::Status s = width(bytes, &n); !s.ok()) return s;
        v.kind = Value::Kind::kFloat;
        if (bytes == 4) {
          const uint32_t u = static_cast<uint32_t>(n);
          float f;
          std::memcpy(&f, &u, 4);
          v.f = f;
        } else {
          std::memcpy(&v.f, &n, 8);
        }
        return absl::OkStatus();
      }
      case 0xcc: case 0xcd: case 0xce: case 0xcf:
        if (absl::Status s = width(1 << (t - 0xcc), &n); !s.ok()) return s;
        v.kind = Value::Kind::kInt;
        v.i = static_cast<int64_t>(n);
        return absl::OkStatus();
      case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        const int bytes = 1 << (t - 0xd0);
        if (absl::Status s = width(bytes, &n); !s.ok()) return s;
        v.kind = Value::Kind::kInt;
        const int shift = 64 - 8 * bytes;
        v.i = static_cast<int64_t>(n << shift) >> shift;  // sign-extend
        return absl::OkStatus();
      }
      case 0xd9: case 0xda: case 0xdb:
        if (absl::Status s = width(1 << (t - 0xd9), &n); !s.ok()) return s;
        v.kind = Value::Kind::kString;
        return Str(n, v.s);
      case 0xdc: case 0xdd:
        if (absl::Status s = width(t == 0xdc ? 2 : 4, &n); !s.ok()) return s;
        return Array(v, n, depth);
      case 0xde: case 0xdf:
        if (absl::Status s = width(t == 0xde ? 2 : 4, &n); !s.ok()) return s;
        return Map(v, n, depth);
      default:
        return Bad(absl::StrCat("metadata has a value of MessagePack type 0x", absl::Hex(t),
                                " at byte ", at_ - 1));
    }
  }
  absl::Status Array(Value& v, uint64_t n, int depth) {
    if (n > b_.size()) return Bad("metadata array longer than the note");
    v.kind = Value::Kind::kArray;
    v.array.resize(n);
    for (Value& e : v.array) {
      if (absl::Status s = Read(e, depth + 1); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  absl::Status Map(Value& v, uint64_t n, int depth) {
    if (n > b_.size()) return Bad("metadata map longer than the note");
    v.kind = Value::Kind::kMap;
    for (uint64_t i = 0; i < n; ++i) {
      Value key;
      if (absl::Status s = Read(key, depth + 1); !s.ok()) return s;
      if (key.kind != Value::Kind::kString) return Bad("metadata map with a key that is no string");
      Value value;
      if (absl::Status s = Read(value, depth + 1); !s.ok()) return s;
      v.keys.push_back(std::move(key.s));
      v.array.push_back(std::move(value));
    }
    return absl::OkStatus();
  }

  std::string_view b_;
  uint64_t at_ = 0;
};

}  // namespace

absl::StatusOr<CodeObjectInfo> ReadCodeObject(std::string_view elf) {
  if (elf.size() < 64 || std::memcmp(elf.data(), "\x7f" "ELF", 4) != 0) return Bad("not an ELF file");
  if (elf[4] != 2 || elf[5] != 1) return Bad("not a 64-bit little-endian ELF");
  uint16_t machine = 0, shentsize = 0, shnum = 0;
  uint64_t shoff = 0;
  ReadLe(elf, 18, &machine);
  ReadLe(elf, 40, &shoff);
  ReadLe(elf, 58, &shentsize);
  ReadLe(elf, 60, &shnum);
  if (machine != kEmAmdgpu) return Bad(absl::StrCat("ELF machine ", machine, ", not AMDGPU (224)"));
  if (shentsize < 64) return Bad("section headers too small");
  uint16_t shstrndx = 0;
  ReadLe(elf, 62, &shstrndx);
  // The section names, to find .comment (what compiler and linker wrote the
  // object); a missing or malformed table only leaves `compiler` empty.
  std::string_view names;
  if (uint64_t sh = shoff + uint64_t{shstrndx} * shentsize, offset = 0, size = 0;
      shstrndx < shnum && ReadLe(elf, sh + 24, &offset) && ReadLe(elf, sh + 32, &size) &&
      offset <= elf.size() && elf.size() - offset >= size) {
    names = elf.substr(offset, size);
  }
  std::string compiler;
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t sh = shoff + uint64_t{i} * shentsize;
    uint32_t name = 0, type = 0;
    uint64_t offset = 0, size = 0;
    if (!ReadLe(elf, sh, &name) || !ReadLe(elf, sh + 4, &type) || !ReadLe(elf, sh + 24, &offset) ||
        !ReadLe(elf, sh + 32, &size)) {
      return Bad(absl::StrCat("section header ", i, " lies outside the file"));
    }
    if (type != kShtProgbits || name >= names.size() ||
        names.substr(name, 9) != std::string_view(".comment\0", 9) || offset > elf.size() ||
        elf.size() - offset < size) {
      continue;
    }
    std::string_view text = elf.substr(offset, size);
    while (!text.empty()) {
      const std::string_view line = text.substr(0, text.find('\0'));
      if (line.find("clang version") != std::string_view::npos) compiler = std::string(line);
      text.remove_prefix(std::min(text.size(), line.size() + 1));
    }
  }
  std::string_view note;
  for (uint16_t i = 0; i < shnum && note.empty(); ++i) {
    const uint64_t sh = shoff + uint64_t{i} * shentsize;
    uint32_t type = 0;
    uint64_t offset = 0, size = 0;
    if (!ReadLe(elf, sh + 4, &type) || !ReadLe(elf, sh + 24, &offset) ||
        !ReadLe(elf, sh + 32, &size)) {
      return Bad(absl::StrCat("section header ", i, " lies outside the file"));
    }
    if (type != kShtNote) continue;
    if (offset > elf.size() || elf.size() - offset < size) {
      return Bad(absl::StrCat("note section ", i, " lies outside the file"));
    }
    std::string_view notes = elf.substr(offset, size);
    uint64_t at = 0;
    while (at + 12 <= notes.size()) {
      uint32_t namesz = 0, descsz = 0, ntype = 0;
      ReadLe(notes, at, &namesz);
      ReadLe(notes, at + 4, &descsz);
      ReadLe(notes, at + 8, &ntype);
      const uint64_t name_at = at + 12;
      const uint64_t desc_at = name_at + ((uint64_t{namesz} + 3) & ~uint64_t{3});
      const uint64_t end = desc_at + ((uint64_t{descsz} + 3) & ~uint64_t{3});
      if (desc_at + descsz > notes.size()) return Bad("a note runs past its section");
      if (ntype == kNtAmdgpuMetadata && namesz >= 6 &&
          notes.substr(name_at, 6) == std::string_view("AMDGPU", 6)) {
        note = notes.substr(desc_at, descsz);
        break;
      }
      at = end;
    }
  }
  if (note.empty()) return Bad("no AMDGPU metadata note (NT_AMDGPU_METADATA)");
  absl::StatusOr<Value> doc = MsgPack(note).Parse();
  if (!doc.ok()) return doc.status();
  if (doc->kind != Value::Kind::kMap) return Bad("the metadata is not a map");
  CodeObjectInfo info;
  info.compiler = std::move(compiler);
  if (const Value* t = doc->Find("amdhsa.target"); t && t->kind == Value::Kind::kString) {
    info.target = t->s;
  }
  const Value* kernels = doc->Find("amdhsa.kernels");
  if (kernels == nullptr || kernels->kind != Value::Kind::kArray) {
    return Bad("the metadata has no amdhsa.kernels array");
  }
  for (const Value& k : kernels->array) {
    if (k.kind != Value::Kind::kMap) return Bad("an amdhsa.kernels entry is not a map");
    AmdKernelInfo ki;
    if (const Value* n = k.Find(".name"); n && n->kind == Value::Kind::kString) ki.name = n->s;
    ki.vgprs = k.Int(".vgpr_count");
    ki.agprs = k.Int(".agpr_count");
    ki.sgprs = k.Int(".sgpr_count");
    ki.lds_bytes = k.Int(".group_segment_fixed_size");
    ki.scratch_bytes = k.Int(".private_segment_fixed_size");
    ki.kernarg_bytes = k.Int(".kernarg_segment_size");
    ki.max_flat_workgroup_size = k.Int(".max_flat_workgroup_size");
    ki.wavefront_size = k.Int(".wavefront_size");
    ki.vgpr_spills = k.Int(".vgpr_spill_count");
    ki.sgpr_spills = k.Int(".sgpr_spill_count");
    info.kernels.push_back(std::move(ki));
  }
  return info;
}

}  // namespace tilec::amdgpu
