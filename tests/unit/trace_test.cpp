// Origin tracing on the torch_musa-like world (fixtures/torch_musa, built by the setup test): one
// test per classification, each asserting the class, the origin file and line, and the fix.
#include <gtest/gtest.h>

#include <sstream>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "pipeline/linkcheck.h"
#include "test_support.h"

namespace mlc {
namespace {

const std::string kWorld = MLC_WORLD_DIR;
const std::string kSrc = kWorld + "/src";
const std::string kBuild = kWorld + "/build";
const std::string kGen = kBuild + "/generated_cuda_compatible";
const std::string kKernels = kBuild + "/torch_musa/csrc/libmusa_kernels.so";
const std::string kCsrcLists = kSrc + "/torch_musa/csrc/CMakeLists.txt";

// The line of `file` that holds `text`, found in the fixture itself (as grep -n would), so an edit of
// the fixture moves the expectation with it; -1 when no line or several lines hold it.
int line_of(const std::string& file, const std::string& text) {
  std::istringstream in(test::read_file(file));
  int n = 0, found = -1, hits = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.find(text) != std::string::npos) {
      found = n;
      ++hits;
    }
  }
  EXPECT_EQ(hits, 1) << text << " in " << file;
  return hits == 1 ? found : -1;
}

LinkcheckOptions world_options() {
  LinkcheckOptions o;
  o.env.with = {kBuild + "/libc10.so"};
  o.trace.build_dir = kBuild;
  o.trace.source_roots = {kSrc + "/pytorch"};
  o.trace.sdk_home = kBuild + "/musa_sdk";
  o.trace.cuda_home = kBuild + "/cuda_home";
  o.trace.mapping = kSrc + "/mapping";
  o.trace.cache_dir = test::scratch_dir("trace-cache");
  o.trace.confirm_budget = 3600;  // the "compiling … defines it" lines must not depend on a loaded machine's clock
  return o;
}

const Report& world_report() {
  static const Report report = run_linkcheck({kKernels}, world_options());
  return report;
}

const UnresolvedSymbol& symbol(const std::string& name) {
  for (const auto& lib : world_report().libraries)
    for (const auto& u : lib.unresolved)
      if (u.symbol == name) return u;
  ADD_FAILURE() << name << " is not reported";
  static UnresolvedSymbol none;
  return none;
}

TEST(Trace, reports_exactly_the_nine_unresolved_symbols_with_c10_loaded_first) {
  const Report& r = world_report();
  EXPECT_TRUE(r.errors.empty()) << r.errors[0].to_line();
  ASSERT_EQ(r.libraries.size(), 1u);
  std::vector<std::string> names;
  for (const auto& u : r.libraries[0].unresolved) names.push_back(u.symbol);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "PVRSRVGetDevInfo", "_ZN2at4musa3cub28exclusive_sum_in_common_typeIiiEEvPKT_PT0_l",
                       "_ZN2at6native19resize_output_checkEl",
                       "_ZN2at6native26launch_glu_backward_kernelERKNS_18TensorIteratorBaseEll", "mublasSgemm_v2",
                       "musaDeviceTable", "musaGetErrorString", "musaLaunchHostFunc", "musaMallocAsync"}));
}

TEST(Trace, explicit_instantiation_in_an_unlisted_mu_is_missing_source) {
  const auto& u = symbol("_ZN2at4musa3cub28exclusive_sum_in_common_typeIiiEEvPKT_PT0_l");
  EXPECT_EQ(u.classification, Classification::MissingSource);
  ASSERT_TRUE(u.origin.has_value());
  EXPECT_EQ(u.origin->file, kGen + "/aten/src/ATen/musa/cub.mu");
  EXPECT_EQ(u.origin->line, line_of(u.origin->file, "template void exclusive_sum_in_common_type(const int32_t *"));
  EXPECT_EQ(u.origin->kind, OriginKind::ExplicitInstantiation);
  EXPECT_EQ(u.origin->ported_from, "aten/src/ATen/cuda/cub.cu");
  ASSERT_TRUE(u.fix.has_value());
  EXPECT_EQ(u.fix->kind, FixKind::AddSource);
  EXPECT_EQ(u.fix->cmake_file, kCsrcLists);
  EXPECT_EQ(u.fix->list, "MU_SRCS");
  EXPECT_EQ(u.fix->entry, "${GENERATED_PORTING_DIR}/aten/src/ATen/musa/cub.mu");
}

TEST(Trace, kernel_launcher_in_an_unlisted_mu_is_missing_source) {
  const auto& u = symbol("_ZN2at6native26launch_glu_backward_kernelERKNS_18TensorIteratorBaseEll");
  EXPECT_EQ(u.classification, Classification::MissingSource);
  EXPECT_EQ(u.origin->file, kGen + "/aten/src/ATen/native/musa/ActivationGluKernel.mu");
  EXPECT_EQ(u.origin->line, line_of(u.origin->file, "void launch_glu_backward_kernel("));
  EXPECT_EQ(u.origin->kind, OriginKind::Definition);
  EXPECT_EQ(u.origin->ported_from, "aten/src/ATen/native/cuda/ActivationGluKernel.cu");
  EXPECT_EQ(u.fix->list, "MU_SRCS");
  EXPECT_EQ(u.fix->entry, "${GENERATED_PORTING_DIR}/aten/src/ATen/native/musa/ActivationGluKernel.mu");
}

TEST(Trace, ported_cpp_missing_from_porting_cpp_csrcs_is_missing_source) {
  const auto& u = symbol("_ZN2at6native19resize_output_checkEl");
  EXPECT_EQ(u.classification, Classification::MissingSource);
  EXPECT_EQ(u.origin->file, kGen + "/aten/src/ATen/native/musa/Resize.cpp");
  EXPECT_EQ(u.origin->line, line_of(u.origin->file, "void resize_output_check(int64_t numel) {"));
  EXPECT_EQ(u.fix->list, "PORTING_CPP_CSRCS");
  EXPECT_EQ(u.fix->cmake_file, kCsrcLists);
  EXPECT_EQ(u.fix->entry, "${GENERATED_PORTING_DIR}/aten/src/ATen/native/musa/Resize.cpp");
}

TEST(Trace, sdk_library_not_linked_is_unlinked_library) {
  const auto& u = symbol("mublasSgemm_v2");
  EXPECT_EQ(u.classification, Classification::UnlinkedLibrary);
  EXPECT_EQ(u.origin->file, kBuild + "/musa_sdk/lib/libmublas.so.1.0.0");
  EXPECT_EQ(u.origin->kind, OriginKind::Library);
  EXPECT_EQ(u.fix->kind, FixKind::LinkLibrary);
  EXPECT_EQ(u.fix->entry, "mublas");
  EXPECT_EQ(u.fix->cmake_file, kCsrcLists);  // where musa_add_library(musa_kernels ...) is written
  EXPECT_EQ(u.fix->detail, "link libmublas.so.1: target_link_libraries(musa_kernels PRIVATE mublas)");
}

TEST(Trace, declared_in_sdk_header_but_defined_by_no_sdk_library_is_sdk_declared_only) {
  const auto& u = symbol("musaMallocAsync");
  EXPECT_EQ(u.classification, Classification::SdkDeclaredOnly);
  EXPECT_EQ(u.origin->file, kBuild + "/musa_sdk/include/musa_runtime_api.h");
  EXPECT_EQ(u.origin->line, line_of(u.origin->file, "musaError_t musaMallocAsync("));
  EXPECT_EQ(u.origin->kind, OriginKind::Declaration);
  EXPECT_EQ(u.fix->kind, FixKind::Stub);
  ASSERT_TRUE(u.counterpart.has_value());
  EXPECT_EQ(u.counterpart->name, "cudaMallocAsync");
  EXPECT_EQ(u.counterpart->library, kBuild + "/cuda_home/lib64/libcudart.so.12.0.0");
}

TEST(Trace, data_object_declared_only_by_the_sdk_is_sdk_declared_only) {
  const auto& u = symbol("musaDeviceTable");
  EXPECT_EQ(u.classification, Classification::SdkDeclaredOnly);
  EXPECT_EQ(u.type, SymbolType::Object);
  EXPECT_EQ(u.origin->file, kBuild + "/musa_sdk/include/musa_runtime_api.h");
  EXPECT_EQ(u.origin->line, line_of(u.origin->file, "extern int musaDeviceTable[16];"));
}

TEST(Trace, references_are_located_by_dwarf_call_sites) {
  const auto& u = symbol("musaMallocAsync");
  ASSERT_EQ(u.referenced_by.size(), 1u);
  EXPECT_EQ(u.referenced_by[0].library, kKernels);
  EXPECT_EQ(u.referenced_by[0].file, kSrc + "/torch_musa/csrc/aten/ops/musa/Blas.cpp");
  EXPECT_EQ(u.referenced_by[0].line, line_of(u.referenced_by[0].file.value_or(""), "if (musaMallocAsync(&workspace"));
  EXPECT_EQ(u.referenced_by[0].function, "at::musa::run_gemm(float*, MUstream_st*)");
  const auto& glu = symbol("_ZN2at6native26launch_glu_backward_kernelERKNS_18TensorIteratorBaseEll");
  ASSERT_EQ(glu.referenced_by.size(), 1u);
  EXPECT_EQ(glu.referenced_by[0].file, kGen + "/aten/src/ATen/native/musa/Activation.cpp");
  EXPECT_EQ(glu.referenced_by[0].line,
            line_of(glu.referenced_by[0].file.value_or(""), "launch_glu_backward_kernel(iter, 1, 2)"));
  EXPECT_EQ(glu.referenced_by[0].function, "at::native::glu_backward_musa(at::TensorIteratorBase const&)");
}

TEST(Trace, only_cuda_provides_it_is_cuda_only) {
  const auto& u = symbol("musaLaunchHostFunc");
  EXPECT_EQ(u.classification, Classification::CudaOnly);
  ASSERT_TRUE(u.counterpart.has_value());
  EXPECT_EQ(u.counterpart->name, "cudaLaunchHostFunc");
  EXPECT_EQ(u.counterpart->library, kBuild + "/cuda_home/lib64/libcudart.so.12.0.0");
  EXPECT_EQ(u.origin->file, kGen + "/aten/src/ATen/musa/detail/HostFunc.h");  // where the port declares it
  EXPECT_EQ(u.origin->line, line_of(u.origin->file, "musaError_t musaLaunchHostFunc("));
  EXPECT_EQ(u.fix->kind, FixKind::Stub);
}

TEST(Trace, stale_copy_first_on_the_search_path_is_shadowed) {
  const auto& u = symbol("musaGetErrorString");
  EXPECT_EQ(u.classification, Classification::Shadowed);
  EXPECT_EQ(u.origin->file, kBuild + "/musa_sdk/lib/libmusart.so.4.0.0");
  EXPECT_EQ(u.fix->kind, FixKind::UseLibrary);
  EXPECT_NE(u.reason->find(kBuild + "/stale_sdk/lib/libmusart.so.4 [runpath]"), std::string::npos) << *u.reason;
}

TEST(Trace, defined_nowhere_is_unknown) {
  const auto& u = symbol("PVRSRVGetDevInfo");
  EXPECT_EQ(u.classification, Classification::Unknown);
  EXPECT_FALSE(u.origin.has_value());
}

TEST(Trace, duplicated_list_entry_is_warned_about) {
  ASSERT_EQ(world_report().warnings.size(), 1u);
  EXPECT_EQ(
      world_report().warnings[0].text,
      "${GENERATED_PORTING_DIR}/aten/src/ATen/native/musa/Loss.mu is listed twice in MU_SRCS (" + kCsrcLists + ":9)");
}

TEST(Trace, text_shows_the_origin_the_way_lld_does) {
  auto o = world_options();
  std::string args = " --build-dir " + test::quote(kBuild) + " --source-root " + test::quote(kSrc + "/pytorch") +
                     " --sdk-home " + test::quote(o.trace.sdk_home) + " --cuda-home " + test::quote(o.trace.cuda_home) +
                     " --mapping " + test::quote(o.trace.mapping) + " --with " + test::quote(o.env.with[0]) +
                     " --cache-dir " + test::quote(test::scratch_dir("cli-cache")) + " --confirm-budget 3600";
  auto r = test::run(std::string(MLC_LINKCHECK_BIN) + " --color never" + args + " " + test::quote(kKernels));
  EXPECT_EQ(r.status, 1);
  std::string block =
      "error: undefined symbol: at::native::launch_glu_backward_kernel(at::TensorIteratorBase const&, long, long)\n"
      ">>> referenced by " +
      kGen +
      "/aten/src/ATen/native/musa/Activation.cpp:4 "
      "(at::native::glu_backward_musa(at::TensorIteratorBase const&))\n"
      ">>>               " +
      kKernels +
      "\n"
      ">>> mangled: _ZN2at6native26launch_glu_backward_kernelERKNS_18TensorIteratorBaseEll\n"
      // Text finds it in two uncompiled sources; with --build-dir the compiler decides, with the
      // command of the nearest .mu the build compiles.
      ">>> missing-source: compiling " +
      kGen +
      "/aten/src/ATen/native/musa/ActivationGluKernel.mu defines it (with the "
      "build's command for " +
      kGen +
      "/aten/src/ATen/native/musa/Loss.mu)\n"
      ">>> defined in: " +
      kGen +
      "/aten/src/ATen/native/musa/ActivationGluKernel.mu:6\n"
      ">>> ported from: aten/src/ATen/native/cuda/ActivationGluKernel.cu\n"
      ">>> fix: add ${GENERATED_PORTING_DIR}/aten/src/ATen/native/musa/ActivationGluKernel.mu to MU_SRCS in " +
      kCsrcLists + "\n";
  EXPECT_NE(r.out.find(block), std::string::npos) << r.out;

  // explain: the same triage for one symbol, by its demangled name, without the library.
  auto e = test::run(std::string(MLC_LINKCHECK_BIN) + " explain --format json" + args +
                     " 'at::native::launch_glu_backward_kernel(at::TensorIteratorBase const&, long, long)'");
  EXPECT_EQ(e.status, 1) << e.err;
  auto doc = nlohmann::json::parse(e.out);
  const auto& u = doc["libraries"][0]["unresolved"][0];
  EXPECT_EQ(u["classification"], "missing-source");
  EXPECT_EQ(u["origin"]["file"], kGen + "/aten/src/ATen/native/musa/ActivationGluKernel.mu");
  EXPECT_EQ(u["fix"]["list"], "MU_SRCS");

  auto m = test::run(std::string(MLC_LINKCHECK_BIN) + " explain musaMallocAsync" + args + " -q");
  EXPECT_EQ(m.out, "error: undefined symbol: musaMallocAsync\n");
}

TEST(Trace, index_cache_is_reused_when_nothing_changed) {
  LinkcheckOptions o = world_options();
  o.trace.cache_dir = test::scratch_dir("cache-reuse");
  struct Run {
    Report report;
    source::IndexStats sources, sdk_headers;
  };
  auto run_once = [&] {
    Run r;
    TraceResources resources(o.trace, r.report);
    run_linkcheck({kKernels}, o, resources, r.report);
    EXPECT_NE(resources.source_index_stats(), nullptr);
    EXPECT_NE(resources.sdk_header_stats(), nullptr) << "the world's symbols send the tracer to the SDK's headers";
    if (resources.source_index_stats()) r.sources = *resources.source_index_stats();
    if (resources.sdk_header_stats()) r.sdk_headers = *resources.sdk_header_stats();
    return r;
  };
  Run first = run_once();
  Run second = run_once();
  // The first run scans every file and writes the caches; the second parses nothing: every file
  // is taken from the cache (a tool that writes its cache but never reads it fails here).
  for (const auto* stats : {&first.sources, &first.sdk_headers}) {
    EXPECT_GT(stats->files, 0u);
    EXPECT_EQ(stats->scanned, stats->files);
    EXPECT_FALSE(stats->cache_loaded);
    EXPECT_TRUE(stats->cache_written);
  }
  for (const auto& [stats, before] :
       {std::pair{&second.sources, &first.sources}, std::pair{&second.sdk_headers, &first.sdk_headers}}) {
    EXPECT_TRUE(stats->cache_loaded);
    EXPECT_EQ(stats->scanned, 0u);
    EXPECT_EQ(stats->bytes_scanned, 0u);
    EXPECT_EQ(stats->reused, before->files);
    EXPECT_EQ(stats->files, before->files);
  }
  ASSERT_EQ(first.report.libraries.size(), 1u);
  ASSERT_EQ(second.report.libraries.size(), 1u);
  ASSERT_EQ(first.report.libraries[0].unresolved.size(), second.report.libraries[0].unresolved.size());
  for (size_t i = 0; i < first.report.libraries[0].unresolved.size(); ++i) {
    EXPECT_EQ(first.report.libraries[0].unresolved[i].classification,
              second.report.libraries[0].unresolved[i].classification);
    EXPECT_EQ(first.report.libraries[0].unresolved[i].reason, second.report.libraries[0].unresolved[i].reason);
  }
  size_t cache_files = std::distance(std::filesystem::directory_iterator(o.trace.cache_dir), {});
  EXPECT_GE(cache_files, 2u);  // the source index and the SDK header index
}

}  // namespace
}  // namespace mlc
