// Side-by-side benchmark (not a test) for origin tracing on a PyTorch-sized tree: indexing plus
// tracing N symbols with no index cache (cold) and with it (warm), against the grep-per-symbol loop
// that torch_musa's FAQ implies, run in the same process on the same tree. Also times the porting
// maps' load. Usage: trace_bench TREE CACHE_DIR [N] [MAPPING_DIR]
// TREE: PyTorch 1.13.1's sources; when it does not exist, a generated tree of the same size
// (10,935 files, 134 MB) is written there first.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "pipeline/linkcheck.h"
#include "porting/porting_map.h"
#include "source/source_index.h"

namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A synthetic tree with the shape measured on PyTorch 1.13.1's sources: 10,935 files, 134 MB; 5,973
// of them C/C++/CUDA (55 MB, about 13 declarations each), the rest Python and data (79 MB).
void generate_tree(const std::string& root) {
  std::mt19937 rng(1131);
  const char* dirs[] = {"aten/src/ATen/native/cuda",
                        "aten/src/ATen/native/cpu",
                        "aten/src/ATen/cuda",
                        "c10/core",
                        "torch/csrc/autograd",
                        "torch/csrc/jit/passes",
                        "aten/src/ATen/native/sparse/cuda"};
  const char* exts[] = {".cpp", ".cpp", ".cpp", ".cpp", ".cu", ".cu", ".h", ".h", ".h", ".cuh"};
  size_t total = 0;
  for (int f = 0; f < 10935; ++f) {
    std::string dir = root + "/" + dirs[f % 7] + "/sub" + std::to_string(f % 41);
    fs::create_directories(dir);
    bool source = f < 5973;
    std::string name = dir + "/file" + std::to_string(f) + (source ? exts[rng() % 10] : ".py");
    std::string body;
    if (source) {
      body = "#include <ATen/ATen.h>\n// generated\nnamespace at {\nnamespace native {\n";
      for (int k = 0; k < 6; ++k) {
        std::string fn = "op" + std::to_string(f) + "_" + std::to_string(k);
        body += "template <typename scalar_t>\n__global__ void " + fn +
                "_kernel(const scalar_t* in, scalar_t* out, int64_t n) {\n";
        for (int line = 0; line < 8; ++line) {
          body += "  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) { out[i] = in[i] * scalar_t(" +
                  std::to_string(line) + "); }  // keeps the body as long as PyTorch's\n";
        }
        body += "}\nTensor& " + fn + "_out(const Tensor& self, int64_t dim, Tensor& result);\n";
        body += "Tensor& " + fn + "_out(const Tensor& self, int64_t dim, Tensor& result) {\n";
        body += "  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), \"" + fn +
                "\", [&] { result.fill_(dim); });\n  return result;\n}\n";
      }
      body += "}  // namespace native\n}  // namespace at\n";
    } else {
      for (int line = 0; line < 360; ++line)
        body += "def helper_" + std::to_string(line) + "(x):  # generated python\n    return x\n";
    }
    total += body.size();
    std::ofstream(name) << body;
  }
  std::printf("generated %s: 10935 files (5973 C/C++/CUDA), %.0f MB\n", root.c_str(), total / 1e6);
}

double run_grep(const std::string& name, const std::string& tree) {
  std::fflush(stdout);  // the child must not repeat what the parent has buffered
  auto t = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout)) _exit(127);
    execlp("grep", "grep", "-rn", "-w", name.c_str(), tree.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return seconds_since(t);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TREE CACHE_DIR [N] [MAPPING_DIR]\n", argv[0]);
    return 2;
  }
  std::string tree = argv[1], cache = argv[2];
  size_t n = argc > 3 ? std::stoul(argv[3]) : 100;
  if (!fs::exists(tree)) generate_tree(tree);

  // Pick N functions the tree defines, as a linker would report them (demangled).
  auto picker = mlc::source::SourceIndex::build({{tree}, ""});
  std::vector<std::string> symbols, names;
  for (const auto& e : picker.entities()) {
    if (symbols.size() >= n) break;
    if (e.kind != mlc::source::EntityKind::FunctionDefinition || e.is_template ||
        e.qualified.find("::") == std::string::npos || e.qualified.find('(') != std::string::npos ||
        e.qualified.find("operator") != std::string::npos) {
      continue;
    }
    if ((symbols.size() * 97) % 5 == 3 && e.file % 3) continue;  // spread over the tree
    std::string params = e.params;
    for (auto& c : params)
      if (c == mlc::source::kListSep) c = ',';
    symbols.push_back(e.qualified + "(" + params + ")" + (e.const_method ? " const" : ""));
    names.emplace_back(e.name());
  }
  std::printf("tree: %s (%zu source files indexed), %zu symbols\n", tree.c_str(), picker.files().size(),
              symbols.size());

  mlc::LinkcheckOptions options;
  options.trace.source_roots = {tree};
  options.trace.cache_dir = cache;
  // Medians of alternating runs: 3 cold (the cache removed before each), 5 warm.
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::vector<double> colds, warms;
  mlc::Report warm;
  for (int run = 0; run < 3; ++run) {
    fs::remove_all(cache);
    auto t0 = std::chrono::steady_clock::now();
    mlc::Report cold = mlc::explain_symbols(symbols, options);
    colds.push_back(seconds_since(t0));
  }
  for (int run = 0; run < 5; ++run) {
    auto t0 = std::chrono::steady_clock::now();
    warm = mlc::explain_symbols(symbols, options);
    warms.push_back(seconds_since(t0));
  }
  double t_cold = median(colds), t_warm = median(warms);
  size_t traced = 0;
  for (const auto& u : warm.libraries[0].unresolved) traced += u.origin.has_value();

  double t_grep = 0;
  for (const auto& name : names) t_grep += run_grep(name, tree);

  std::printf("(cold: no index cache; the OS page cache is warm for both tools alike)\n");
  std::printf("%-44s %8.3f s  (median of 3)\n", "musa-linkcheck index+trace, cold (no cache)", t_cold);
  std::printf("%-44s %8.3f s  (median of 5)\n", "musa-linkcheck index+trace, warm (cache)", t_warm);
  std::printf("%-44s %8.3f s\n", "grep -rn -w NAME TREE, once per symbol", t_grep);
  std::printf("symbols traced to an origin: %zu of %zu\n", traced, symbols.size());
  std::printf("ratio grep/cold: %.1fx   grep/warm: %.1fx\n", t_grep / t_cold, t_grep / t_warm);

  if (argc > 4) {
    double best = 1e9;
    size_t entries = 0;
    for (int i = 0; i < 5; ++i) {
      auto t = std::chrono::steady_clock::now();
      auto m = mlc::porting::load_mapping(std::string(argv[4]) + "/general.json");
      best = std::min(best, seconds_since(t));
      if (m) entries = m->to_musa.size();
    }
    std::printf("general.json (%zu entries) loads in %.1f ms (best of 5)\n", entries, best * 1e3);
  }
  return 0;
}
