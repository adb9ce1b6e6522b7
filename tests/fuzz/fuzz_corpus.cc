// Writes the seed corpora of the fuzz targets from examples/cases.txt:
//
//   fuzz_corpus OUT_DIR
//
// OUT_DIR/frontend/<case>   "fn=NAME name=value ...\n" then the example's source
// OUT_DIR/wire/<case>       the case's program in wire form
// OUT_DIR/request/<case>    a CompileRequest with the source and bindings,
//                           and <case>.program one with the wire-form program
// OUT_DIR/npy/<case>.<i>    the case's random inputs as .npy files (dtype,
//                           shape and contents of every tensor parameter)
// OUT_DIR/names/<case>      fuzz_names's input: the program's name "k"
//                           (slot 0, length 1) before the case's wire form
// OUT_DIR/staging/<case>    the frontend seed, and staging/<name> builders
//                           that make Python builtins work per element
// (artifact metadata seeds come from `tilec compile`: benchmarks/fuzz.sh).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/frontend/frontend.h"
#include "compiler/interp/interp.h"
#include "compiler/interp/npy.h"
#include "compiler/ir/proto_convert.h"
#include "proto/tilec/v1/service.pb.h"
#include "tests/testing/example_cases.h"

namespace {

// Builders whose staging leans on builtins that work per element.
constexpr const char* kBuilders[][2] = {
    {"sorted", "    xs = list(range(n))\n    for _ in range(50):\n        ys = sorted(xs)\n"},
    {"sums", "    xs = list(range(n))\n    t = sum(xs) + max(xs) - min(xs)\n"},
    {"nested", "    row = list(range(n))\n    grid = [row] * 64\n    same = grid == [row] * 64\n"},
    {"contains", "    xs = list(range(n))\n    found = [i in xs for i in range(64)]\n"},
    {"strings",
     "    s = 'ab' * (n // 2)\n    k = s.find('ba' * 8 + 'c')\n    parts = s.split('b')\n"
     "    t = '-'.join(parts[:100]).replace('a', 'xy')\n"},
    {"concat", "    xs = []\n    for i in range(64):\n        xs = xs + [i] * 64\n"},
};

std::string BuilderSeed(const char* body) {
  return std::string("fn=build n=4096\n") +
         "import tilelang.language as T\n"
         "def build(n):\n" +
         body +
         "    @T.prim_func\n"
         "    def k(A: T.Tensor((4,), \"float32\")):\n"
         "        with T.Kernel(1, threads=32) as bx:\n"
         "            A[0] = 1.0\n"
         "    return k\n";
}

bool Write(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_corpus OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  for (const char* d : {"frontend", "wire", "request", "npy", "names", "staging"}) {
    std::filesystem::create_directories(out / d);
  }
  auto cases = tilec::testing::LoadExampleCases();
  if (!cases.ok()) {
    std::fprintf(stderr, "fuzz_corpus: %s\n", std::string(cases.status().message()).c_str());
    return 1;
  }
  int written = 0;
  for (const tilec::testing::ExampleCase& c : *cases) {
    auto text = tilec::testing::ReadFile(tilec::testing::ExamplesDir() + "/" + c.file);
    if (!text.ok()) {
      std::fprintf(stderr, "fuzz_corpus: %s\n", std::string(text.status().message()).c_str());
      return 1;
    }
    std::string header = "fn=" + c.function;
    tilec::frontend::Bindings bindings;
    tilec::v1::CompileRequest request;
    tilec::v1::TileLangSource* source = request.mutable_source();
    source->set_path(c.file);
    source->set_text(*text);
    source->set_function(c.function);
    for (const auto& [name, value] : c.bindings) {
      header += " " + name + "=" + value;
      bindings.Set(name, value);
      tilec::v1::Binding* b = source->add_bindings();
      b->set_name(name);
      b->set_value(value);
    }
    request.add_targets("sm_90a");
    bool ok = Write(out / "frontend" / c.name, header + "\n" + *text) &&
              Write(out / "staging" / c.name, header + "\n" + *text) &&
              Write(out / "request" / c.name, request.SerializeAsString());
    auto program = tilec::frontend::CompileTileLang({c.file, *text}, c.function, bindings);
    if (program.ok()) {
      const std::string wire = tilec::ir::ToProto(*program).SerializeAsString();
      ok = ok && Write(out / "wire" / c.name, wire);
      ok = ok && Write(out / "names" / c.name, std::string("\0\1k", 3) + wire);
      tilec::v1::CompileRequest by_program;
      *by_program.mutable_program() = tilec::ir::ToProto(*program);
      by_program.add_targets("sm_90a");
      ok = ok && Write(out / "request" / (c.name + ".program"), by_program.SerializeAsString());
      auto inputs = tilec::interp::MakeInputs(*program, {}, 7);
      if (inputs.ok()) {
        for (size_t i = 0; i < inputs->size(); ++i) {
          ok = ok && Write(out / "npy" / (c.name + "." + std::to_string(i)),
                           tilec::interp::EncodeNpy((*inputs)[i]));
        }
      }
    }
    if (!ok) {
      std::fprintf(stderr, "fuzz_corpus: cannot write under %s\n", out.c_str());
      return 1;
    }
    ++written;
  }
  for (const auto& [name, body] : kBuilders) {
    if (!Write(out / "staging" / name, BuilderSeed(body))) {
      std::fprintf(stderr, "fuzz_corpus: cannot write under %s\n", out.c_str());
      return 1;
    }
  }
  std::printf("fuzz_corpus: seeds of %d example cases under %s\n", written, out.c_str());
  return 0;
}
