// The hipify map read as data (src/backend) and the porting-coverage report (src/coverage): rules on
// small inputs, the real PyTorch 1.13.1 map against what hipify itself builds from it, and the HTML
// page opened in a real headless browser.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "backend/hipify_map.h"
#include "coverage/coverage.h"
#include "pytorch_sources.h"
#include "test_support.h"

namespace mlc::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kLinkcheck = MLC_LINKCHECK_BIN;

// A map of hipify's shape with each rule the reader must get right.
const char* kSmallMap = R"PY(import collections
from .constants import (API_RUNTIME, API_BLAS, API_SPARSE, API_CAFFE2, CONV_MEM, CONV_TYPE, CONV_INCLUDE, HIP_UNSUPPORTED)
rocm_version = (0, 0, 0)
"""A docstring with ("cudaFake", ("hipFake", CONV_MEM, API_RUNTIME)) inside."""
CUDA_TYPE_NAME_MAP = collections.OrderedDict(
    [
        ("cudaStream_t", ("hipStream_t", CONV_TYPE, API_RUNTIME)),  # a comment ("x", "y")
        (
            "cudaLaunch",
            ("hipLaunch", CONV_MEM, API_RUNTIME, HIP_UNSUPPORTED),
        ),
    ]
)
CUDA_INCLUDE_MAP = collections.OrderedDict(
    [
        ("cublas_v2.h", ("rocblas.h" if rocm_version < (5, 2, 0) else "rocblas/rocblas.h", CONV_INCLUDE, API_BLAS)),
    ]
)
CUDA_IDENTIFIER_MAP = collections.OrderedDict(
    [
        ("cuLaunch", ("hipLaunch", CONV_MEM, API_RUNTIME, HIP_UNSUPPORTED)),
        ("cudaMalloc", ("hipMalloc", CONV_MEM, API_RUNTIME)),
        ("cudaMalloc", ("hipMallocLater", CONV_MEM, API_RUNTIME)),
        ("cusparseX", ("hipsparseX", CONV_MEM, API_SPARSE)),
        ("caffeOnly", ("caffeHip", API_CAFFE2)),
    ]
)
SPARSE_MAP = collections.OrderedDict([("cusparseX", ("rocsparseX", CONV_MEM, API_SPARSE))])
UNLISTED = collections.OrderedDict([("cudaUnlisted", ("hipUnlisted", CONV_MEM, API_RUNTIME))])
CUDA_TO_HIP_MAPPINGS = [CUDA_IDENTIFIER_MAP, CUDA_TYPE_NAME_MAP, CUDA_INCLUDE_MAP, SPARSE_MAP]
)PY";

TEST(HipifyMap, reads_the_literal_tuples_with_hipifys_precedence_without_running_python) {
  auto m = backend::parse_hipify_map(kSmallMap, "map.py");
  ASSERT_TRUE(m.ok()) << m.error().to_line();
  const auto& map = m.value();
  // A later entry replaces an earlier one (a dict literal keeps the last value)...
  EXPECT_EQ(map.to_musa.at("cudaMalloc"), "hipMallocLater");
  // ...except that an API_SPARSE entry never replaces one already there.
  EXPECT_EQ(map.to_musa.at("cusparseX"), "hipsparseX");
  EXPECT_EQ(map.to_musa.count("caffeOnly"), 0u) << "API_CAFFE2 entries are not PyTorch's";
  EXPECT_EQ(map.to_musa.count("cudaUnlisted"), 0u) << "only the dictionaries CUDA_TO_HIP_MAPPINGS lists";
  EXPECT_EQ(map.to_musa.count("cudaFake"), 0u) << "a docstring is not a map";
  EXPECT_EQ(map.headers.at("cublas_v2.h"), "rocblas/rocblas.h") << "the else branch: ROCm 5.2 or later";
  EXPECT_TRUE(map.info.at("cudaLaunch").unsupported);
  EXPECT_EQ(map.info.at("cudaLaunch").line, 9u);
  EXPECT_FALSE(map.info.at("cudaStream_t").unsupported);
  EXPECT_EQ(map.info.at("cudaStream_t").family, "runtime");
  // The inverse prefers the runtime name that mirrors the HIP one over the first (driver) entry.
  EXPECT_EQ(map.to_cuda.at("hipLaunch"), "cudaLaunch");
}

TEST(HipifyMap, bad_input_is_one_error_naming_the_file_and_line) {
  auto unclosed =
      backend::parse_hipify_map("X = collections.OrderedDict(\n  [\n (\"a\", (\"b\", API_RUNTIME)\n", "m.py");
  ASSERT_FALSE(unclosed.ok());
  EXPECT_EQ(unclosed.error().path, "m.py");
  EXPECT_NE(unclosed.error().message.find("line "), std::string::npos) << unclosed.error().message;
  auto not_a_map = backend::parse_hipify_map("print('hello')\n", "m.py");
  ASSERT_FALSE(not_a_map.ok());
  EXPECT_NE(not_a_map.error().message.find("CUDA_TO_HIP_MAPPINGS"), std::string::npos);
  auto missing = backend::load_any_map("/nonexistent/cuda_to_hip_mappings.py");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().path, "/nonexistent/cuda_to_hip_mappings.py");
}

// Oracle: hipify itself (run by the test, in python3) builds PYTORCH_MAP from the same file.
TEST(HipifyMap, real_pytorch_map_matches_what_hipify_builds_from_it) {
  std::string why;
  const std::string pytorch = pytorch_sources(why);
  if (pytorch.empty()) MLC_SKIP() << why;
  auto m = backend::load_hipify_map(hipify_map_path(pytorch));
  ASSERT_TRUE(m.ok()) << m.error().to_line();
  const std::string dump = scratch_dir("hipify_oracle") + "/map.json";
  auto r = run(
      "python3 -c " +
      quote("import sys, json, re; sys.path.insert(0, sys.argv[1]); from hipify import hipify_python as h, constants "
            "as c\n"
            "ids = {k: v for k, v in h.PYTORCH_MAP.items() if re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]*', k)}\n"
            // Which entry won is hipify's own answer (PYTORCH_MAP's value), not a precedence
            // rule re-implemented here: a name is unsupported when the entries that give
            // that value are marked HIP_UNSUPPORTED.
            "uns = {}\n"
            "for d in h.CUDA_TO_HIP_MAPPINGS:\n"
            "  for k, v in d.items():\n"
            "    if k in ids and v[0] == ids[k] and c.API_CAFFE2 not in v[1:]:\n"
            "      uns.setdefault(k, set()).add(c.HIP_UNSUPPORTED in v[1:])\n"
            "json.dump({'ids': ids, 'unsupported': sorted(k for k in ids if uns.get(k) == {True}),\n"
            "           'ambiguous': sorted(k for k in ids if uns.get(k) == {True, False})}, open(sys.argv[2], 'w'))") +
      " " + quote(pytorch + "/torch/utils") + " " + quote(dump));
  ASSERT_EQ(r.status, 0) << r.err;
  json oracle = json::parse(read_file(dump));
  const auto& map = m.value();
  std::set<std::string> ambiguous, unsupported, want_unsupported;
  for (const auto& k : oracle["ambiguous"]) ambiguous.insert(k.get<std::string>());
  for (const auto& k : oracle["unsupported"]) want_unsupported.insert(k.get<std::string>());
  for (const auto& [k, v] : map.to_musa)
    if (map.info.at(k).unsupported && !ambiguous.count(std::string(k))) unsupported.insert(std::string(k));
  EXPECT_EQ(map.to_musa.size(), oracle["ids"].size());
  size_t agree = 0;
  for (const auto& [k, v] : oracle["ids"].items()) {
    auto it = map.to_musa.find(k);
    if (it != map.to_musa.end() && it->second == v.get<std::string>()) ++agree;
    else
      ADD_FAILURE() << k << " -> " << v << " in hipify, "
                    << (it == map.to_musa.end() ? "absent" : std::string(it->second)) << " here";
    if (agree + 20 < oracle["ids"].size() && ::testing::Test::HasFailure()) break;
  }
  EXPECT_EQ(agree, oracle["ids"].size());
  EXPECT_EQ(unsupported, want_unsupported);  // by name, not by count
  EXPECT_GT(want_unsupported.size(), 100u) << "PyTorch 1.13.1 marks hundreds of names HIP_UNSUPPORTED";
  EXPECT_LE(ambiguous.size(), 5u) << "names whose winning value has entries both ways";
}

// A known small tree: a CUDA file and a C++ file, an SDK of hipify's layout (include/hip, a
// libamdhip64 built here that exports two of the four functions the header declares).
struct SmallTree {
  std::string dir, map, sdk, tree, ported;
};

SmallTree make_small_tree() {
  SmallTree t;
  t.dir = scratch_dir("coverage_small");
  t.map = t.dir + "/cuda_to_hip_mappings.py";
  write_file(t.map, R"PY(import collections
CUDA_IDENTIFIER_MAP = collections.OrderedDict(
    [
        ("cudaMalloc", ("hipMalloc", CONV_MEM, API_RUNTIME)),
        ("cudaFree", ("hipFree", CONV_MEM, API_RUNTIME)),
        ("cudaStream_t", ("hipStream_t", CONV_TYPE, API_RUNTIME)),
        ("cudaSuccess", ("hipSuccess", CONV_TYPE, API_RUNTIME)),
        ("cudaLaunchHostFunc", ("hipLaunchHostFunc", CONV_EXEC, API_RUNTIME)),
        ("cudaLaunch", ("hipLaunch", CONV_EXEC, API_RUNTIME, HIP_UNSUPPORTED)),
        ("cublasSgemm", ("hipblasSgemm", CONV_MATH_FUNC, API_BLAS)),
        ("getCurrentCUDAStream", ("getCurrentHIPStream", API_C10)),
    ]
)
CUDA_TO_HIP_MAPPINGS = [CUDA_IDENTIFIER_MAP]
)PY");
  t.sdk = t.dir + "/sdk";
  fs::create_directories(t.sdk + "/include/hip");
  fs::create_directories(t.sdk + "/lib");
  write_file(t.sdk + "/include/hip/hip_runtime_api.h",
             "#pragma once\n"
             "typedef struct ihipStream_t* hipStream_t;\n"
             "typedef enum hipError_t { hipSuccess = 0 } hipError_t;\n"
             "extern \"C\" {\n"
             "hipError_t hipMalloc(void** p, unsigned long n);\n"
             "hipError_t hipFree(void* p);\n"
             "hipError_t hipLaunchHostFunc(hipStream_t s, void (*fn)(void*), void* data);\n"
             "}\n");
  write_file(t.dir + "/amdhip.c",
             "int hipMalloc(void** p, unsigned long n) { (void)p; (void)n; return 0; }\n"
             "int hipFree(void* p) { (void)p; return 0; }\n");
  auto cc = run("cc -shared -fPIC -Wl,-soname,libamdhip64.so.5 -o " + quote(t.sdk + "/lib/libamdhip64.so.5") + " " +
                quote(t.dir + "/amdhip.c"));
  EXPECT_EQ(cc.status, 0) << cc.err;
  t.tree = t.dir + "/cuda";
  fs::create_directories(t.tree + "/ops");
  write_file(t.tree + "/ops/copy.cu",
             "// cudaFree in a comment is no call\n"
             "#include <cuda_runtime.h>\n"
             "void copy(cudaStream_t s) {\n"
             "  void* p; cudaMalloc(&p, 16);\n"
             "  const char* msg = \"cudaMalloc failed\";\n"
             "  cudaMalloc(&p, 32); cudaFree(p);\n"
             "  at::cuda::getCurrentCUDAStream();\n"
             "}\n");
  write_file(t.tree + "/ops/legacy.cpp",
             "/* cudaLaunch\n   in a block comment */\n"
             "int legacy(cudaStream_t s) {\n"
             "  cudaLaunchHostFunc(s, 0, 0);\n"
             "  cudaLaunch(0);\n"
             "  cublasSgemm();\n"
             "  cudaGraphFoo();\n"
             "  return cudaMalloc(0, 0) == cudaSuccess;\n"
             "}\n");
  // The same tree as hipify would port it: counted under the CUDA names.
  t.ported = t.dir + "/hip";
  fs::create_directories(t.ported + "/ops");
  write_file(t.ported + "/ops/copy.hip",
             "void copy(hipStream_t s) {\n  void* p; hipMalloc(&p, 16);\n  hipMalloc(&p, 32); hipFree(p);\n}\n");
  write_file(t.ported + "/ops/legacy.cpp",
             "int legacy(hipStream_t s) {\n  hipLaunchHostFunc(s, 0, 0);\n  hipLaunch(0);\n  hipblasSgemm();\n"
             "  cudaGraphFoo();\n  return hipMalloc(0, 0) == hipSuccess;\n}\n");
  return t;
}

const json* api(const json& report, const std::string& cuda) {
  for (const auto& a : report["apis"])
    if (a["cuda"] == cuda) return &a;
  return nullptr;
}

std::string context(const SmallTree& t) {
  return " --backend hip --sdk-home " + quote(t.sdk) + " --mapping " + quote(t.map) + " --no-cache";
}

TEST(Coverage, classifies_each_api_against_the_sdk_and_counts_call_sites_per_file) {
  SmallTree t = make_small_tree();
  auto r = run(kLinkcheck + " coverage --format json" + context(t) + " " + quote(t.tree));
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "musa-linkcheck-coverage/1");
  EXPECT_EQ(j["files_scanned"], 2);
  const json* malloc_ = api(j, "cudaMalloc");
  ASSERT_NE(malloc_, nullptr);
  EXPECT_EQ((*malloc_)["status"], "exported");
  EXPECT_EQ((*malloc_)["counterpart"], "hipMalloc");
  EXPECT_EQ((*malloc_)["exported_by"], t.sdk + "/lib/libamdhip64.so.5");
  EXPECT_EQ((*malloc_)["declared"]["line"], 5);
  EXPECT_EQ((*malloc_)["call_sites"], 3) << "the string literal is not a call";
  EXPECT_EQ((*malloc_)["files"][0], (json{{"file", t.tree + "/ops/copy.cu"}, {"count", 2}, {"first_line", 4}}));
  EXPECT_EQ((*malloc_)["files"][1], (json{{"file", t.tree + "/ops/legacy.cpp"}, {"count", 1}, {"first_line", 8}}));
  EXPECT_EQ((*api(j, "cudaFree"))["call_sites"], 1) << "the comment is not a call";
  EXPECT_EQ((*api(j, "cudaStream_t"))["status"], "header-only");
  EXPECT_EQ((*api(j, "cudaStream_t"))["call_sites"], 2);
  EXPECT_EQ((*api(j, "cudaSuccess"))["status"], "header-only") << "an enumerator: declared by a mention";
  const json* host = api(j, "cudaLaunchHostFunc");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ((*host)["status"], "declared-only");
  EXPECT_EQ((*host)["declared"],
            (json{{"file", t.sdk + "/include/hip/hip_runtime_api.h"}, {"line", 7}, {"kind", "declaration"}}));
  const json* launch = api(j, "cudaLaunch");
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ((*launch)["status"], "missing");
  EXPECT_EQ((*launch)["marked_unsupported"], true);
  EXPECT_EQ((*launch)["call_sites"], 1) << "the block comment is not a call";
  EXPECT_EQ((*api(j, "cublasSgemm"))["family"], "blas");
  EXPECT_EQ((*api(j, "cublasSgemm"))["status"], "missing");
  EXPECT_EQ((*api(j, "cudaGraphFoo"))["status"], "unmapped");
  EXPECT_EQ(api(j, "getCurrentCUDAStream"), nullptr) << "PyTorch's own names are not CUDA APIs";
  EXPECT_EQ(j["apis"].size(), 8u);
  EXPECT_EQ(j["totals"]["call_sites"], 3 + 1 + 2 + 1 + 1 + 1 + 1 + 1);
  EXPECT_EQ(j["totals"]["by_status"],
            (json{{"exported", 2}, {"header-only", 2}, {"declared-only", 1}, {"missing", 2}, {"unmapped", 1}}));
  ASSERT_EQ(j["families"].size(), 2u);
  EXPECT_EQ(j["families"][0],
            (json{{"family", "blas"}, {"apis", 1}, {"call_sites", 1}, {"by_status", {{"missing", 1}}}}));
  EXPECT_EQ(j["families"][1]["apis"], 7);
  EXPECT_EQ(j["families"][1]["call_sites"], 10);

  // The ported tree names the same APIs by their HIP names: the same report, counted per CUDA name.
  auto p = run(kLinkcheck + " coverage --format json" + context(t) + " " + quote(t.ported));
  ASSERT_EQ(p.status, 0) << p.err;
  json pj = json::parse(p.out);
  EXPECT_EQ((*api(pj, "cudaMalloc"))["call_sites"], 3);
  EXPECT_EQ((*api(pj, "cudaLaunchHostFunc"))["status"], "declared-only");
  EXPECT_EQ((*api(pj, "cudaLaunch"))["status"], "missing");
  EXPECT_EQ(pj["totals"]["by_status"], j["totals"]["by_status"]);
}

TEST(Coverage, text_and_markdown_name_what_to_stub_and_bad_roots_are_one_line_errors) {
  SmallTree t = make_small_tree();
  auto text = run(kLinkcheck + " coverage" + context(t) + " " + quote(t.tree));
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find(
                "cudaLaunchHostFunc -> hipLaunchHostFunc [runtime] declared-only: 1 call site in 1 file; declared " +
                t.sdk + "/include/hip/hip_runtime_api.h:7\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("To stub or request from the SDK:\n  hipblasSgemm (missing): first used at " + t.tree +
                          "/ops/legacy.cpp:6\n"),
            std::string::npos)
      << text.out;
  auto md = run(kLinkcheck + " coverage --format markdown" + context(t) + " " + quote(t.tree));
  EXPECT_NE(md.out.find("| `cudaLaunch` | runtime | `hipLaunch` | missing (map: unsupported) | - | - | 1 | 1 |"),
            std::string::npos)
      << md.out;
  auto bad = run(kLinkcheck + " coverage --format json" + context(t) + " " + quote(t.tree) + " /nonexistent/tree");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err, "musa-linkcheck: error: /nonexistent/tree: cannot open: no such file or directory\n");
  EXPECT_EQ(json::parse(bad.out)["apis"].size(), 8u) << "the other root is still reported";
  auto bad_map =
      run(kLinkcheck + " coverage --backend hip --mapping " + quote(t.dir + "/amdhip.c.py") + " " + quote(t.tree));
  EXPECT_EQ(bad_map.status, 2);
  EXPECT_EQ(bad_map.err, "musa-linkcheck: error: --mapping " + t.dir + "/amdhip.c.py: No such file or directory\n");
  EXPECT_EQ(bad_map.out, "") << "no report naming a map that was not read";
}

// The PNG's width and height (IHDR) and how many distinct colours its pixels use, by python3's zlib.
std::string png_facts(const std::string& png) {
  auto r = run("python3 -c " +
               quote("import sys, struct, zlib\n"
                     "d = open(sys.argv[1], 'rb').read(); assert d[:8] == b'\\x89PNG\\r\\n\\x1a\\n'\n"
                     "w, h, depth, ctype = struct.unpack('>IIBB', d[16:26]); i = 8; idat = b''\n"
                     "while i < len(d):\n"
                     "  n, = struct.unpack('>I', d[i:i+4]); t = d[i+4:i+8]\n"
                     "  if t == b'IDAT': idat += d[i+8:i+8+n]\n"
                     "  i += 12 + n\n"
                     "raw = zlib.decompress(idat); bpp = {2: 3, 6: 4}[ctype]; stride = w * bpp + 1\n"
                     "prev = bytearray(stride - 1); colours = set()\n"
                     "for y in range(h):\n"
                     "  f = raw[y * stride]; line = bytearray(raw[y * stride + 1:(y + 1) * stride])\n"
                     "  for x in range(len(line)):\n"
                     "    a = line[x - bpp] if x >= bpp else 0; b = prev[x]; c = prev[x - bpp] if x >= bpp else 0\n"
                     "    p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)\n"
                     "    line[x] = (line[x] + [0, a, b, (a + b) // 2, a if pa <= pb and pa <= pc else b if pb <= pc "
                     "else c][f]) & 255\n"
                     "  colours.update(bytes(line[k:k + 3]) for k in range(0, len(line), bpp)); prev = line\n"
                     "print(w, h, len(colours))") +
               " " + quote(png));
  return r.status == 0 ? r.out : "error: " + r.err;
}

// The text of the first table cell after `from` in a serialized DOM.
std::string first_cell(const std::string& dom, size_t from) {
  size_t td = dom.find("<td>", from);
  if (td == std::string::npos) return "";
  td += 4;
  return dom.substr(td, dom.find('<', td) - td);
}

TEST(CoverageHtml, page_renders_in_headless_chromium_and_sorts_on_a_click) {
  if (!fs::exists("/usr/bin/chromium")) MLC_SKIP() << "chromium is not installed (bash tools/dev.sh test installs it)";
  SmallTree t = make_small_tree();
  const std::string page = t.dir + "/coverage.html";
  auto r = run(kLinkcheck + " coverage --format html -o " + quote(page) + context(t) + " " + quote(t.tree));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string html = read_file(page);
  // Self-contained: nothing fetched from anywhere.
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));
  const std::string chromium =
      "chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" + quote(t.dir + "/profile") +
      " ";
  const std::string png = t.dir + "/shot.png";
  auto shot = run(chromium + "--screenshot=" + quote(png) + " --window-size=900,700 " + quote("file://" + page));
  ASSERT_TRUE(fs::exists(png)) << shot.err;
  std::istringstream facts(png_facts(png));
  int w = 0, h = 0, colours = 0;
  facts >> w >> h >> colours;
  EXPECT_EQ(w, 900);
  EXPECT_EQ(h, 700);
  // Text, the chart's five status colours and the table: far more than a blank page's one colour.
  EXPECT_GT(colours, 20) << png_facts(png);

  // "#sort=-6" clicks the call-sites header twice on load: descending, cudaMalloc (3 sites) first.
  auto dom = run(chromium + "--dump-dom " + quote("file://" + page + "#sort=-6"));
  ASSERT_NE(dom.out.find("<table id=\"apis\">"), std::string::npos) << dom.err;
  size_t body = dom.out.find("<tbody>");
  ASSERT_NE(body, std::string::npos);
  EXPECT_EQ(first_cell(dom.out, body), "cudaMalloc") << dom.out.substr(body, 300);
  EXPECT_NE(dom.out.find("<th data-type=\"n\" class=\"desc\">call sites</th>"), std::string::npos);
  // Unsorted, the table is in family, then name order: cublasSgemm first.
  auto plain = run(chromium + "--dump-dom " + quote("file://" + page));
  body = plain.out.find("<tbody>");
  ASSERT_NE(body, std::string::npos);
  EXPECT_EQ(first_cell(plain.out, body), "cublasSgemm") << plain.out.substr(body, 300);
}

// coverage with the musa backend (torch_musa's map, the example's SDK), from a tree and an SDK whose
// paths carry HTML and Markdown: every format names the same statuses, and no hostile byte reaches
// the HTML page or the Markdown table as markup.
TEST(Coverage, musa_backend_and_hostile_paths_are_escaped_in_html_and_markdown) {
  const std::string dir = scratch_dir("coverage_hostile");
  const std::string sdk = dir + "/sdk<img src=x onerror=alert(1)>|&`", tree = dir + "/tree<i>|x";
  fs::create_directories(tree);
  fs::copy(std::string(MLC_EXAMPLE_DIR) + "/sdk", sdk, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  write_file(tree + "/k.cu", "void f() { void* p; cudaMalloc(&p, 4); cudaMallocAsync(&p, 4, 0); }\n");
  const std::string args = " coverage --mapping " + quote(std::string(MLC_SOURCE_DIR) + "/fixtures/example/mapping") +
                           " --sdk-home " + quote(sdk) + " " + quote(tree);
  auto j = run(kLinkcheck + args + " --format json");
  ASSERT_EQ(j.status, 0) << j.err;
  auto doc = json::parse(j.out);
  std::map<std::string, std::string> status;
  for (const auto& a : doc["apis"]) status[a["cuda"]] = a["status"];
  EXPECT_EQ(status,
            (std::map<std::string, std::string>{{"cudaMalloc", "exported"}, {"cudaMallocAsync", "declared-only"}}));

  auto html = run(kLinkcheck + args + " --format html");
  ASSERT_EQ(html.status, 0) << html.err;
  EXPECT_EQ(html.out.find("<img"), std::string::npos);
  EXPECT_EQ(html.out.find("<i>"), std::string::npos);
  EXPECT_NE(html.out.find("sdk&lt;img src=x onerror=alert(1)&gt;|&amp;`"), std::string::npos)
      << html.out.substr(0, 3000);
  auto md = run(kLinkcheck + args + " --format markdown");
  ASSERT_EQ(md.status, 0) << md.err;
  EXPECT_EQ(md.out.find("<img"), std::string::npos);
  EXPECT_NE(md.out.find("sdk&lt;img src=x onerror=alert(1)&gt;\\|&amp;&#96;/include/musa_runtime_api.h:11"),
            std::string::npos)
      << md.out;
  // Each table row still has its 9 column separators: no '|' of a path splits a cell.
  std::istringstream lines(md.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `cuda", 0) != 0) continue;
    size_t bars = 0;
    for (size_t k = 0; k < line.size(); ++k) bars += line[k] == '|' && (k == 0 || line[k - 1] != '\\');
    EXPECT_EQ(bars, 9u) << line;
  }
}

// Without --mapping, the backend's naming rule names the runtime API's counterparts (cudaX -> hipX),
// and the report says that is where they came from; what the rule does not cover stays unmapped.
TEST(Coverage, without_a_map_the_backends_naming_rule_gives_counterparts_and_says_so) {
  SmallTree t = make_small_tree();
  const std::string args = " coverage --backend hip --sdk-home " + quote(t.sdk) + " --no-cache ";
  auto r = run(kLinkcheck + args + "--format json " + quote(t.tree));
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["naming_rule"], "cudaX -> hipX");
  EXPECT_EQ(j["mapping"], nullptr);
  EXPECT_EQ((*api(j, "cudaMalloc"))["counterpart"], "hipMalloc");
  EXPECT_EQ((*api(j, "cudaMalloc"))["status"], "exported");
  EXPECT_EQ((*api(j, "cudaLaunchHostFunc"))["status"], "declared-only");
  EXPECT_EQ((*api(j, "cudaGraphFoo"))["counterpart"], "hipGraphFoo");
  EXPECT_EQ((*api(j, "cudaGraphFoo"))["status"], "missing");
  EXPECT_EQ((*api(j, "cublasSgemm"))["status"], "unmapped") << "the rule names the runtime API only";
  // The ported tree's hipX names are counted under cudaX by the same rule.
  auto p = run(kLinkcheck + args + "--format json " + quote(t.ported));
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_EQ((*api(json::parse(p.out), "cudaMalloc"))["call_sites"], 3);
  auto text = run(kLinkcheck + args + quote(t.tree));
  EXPECT_EQ(text.out.substr(0, text.out.find('\n')),
            "Porting coverage: 8 CUDA APIs, 11 call sites in 2 of 2 files scanned (backend hip, SDK " + t.sdk +
                ", map none: counterparts by the naming rule cudaX -> hipX)");
}

}  // namespace
}  // namespace mlc::test
