// The whole analysis as one list of passes (read ELF -> emulate the loader -> bind -> demangle ->
// classify -> report). Tools build LinkcheckOptions, call run_linkcheck and render the Report.
#pragma once

#include <string>
#include <vector>

#include <optional>

#include "loader/loader.h"
#include "report/report.h"
#include "trace/trace.h"

namespace mlc {

// Where origin tracing looks. Everything is optional; missing context means fewer conclusions.
struct TraceOptions {
  std::string build_dir;                  // CMakeCache.txt, compile_commands.json, File API reply
  std::string porting_dir;                // default: GENERATED_PORTING_DIR from the cache
  std::vector<std::string> source_roots;  // original PyTorch tree, the project's sources
  std::vector<std::string> cmake_lists;   // default: every CMakeLists.txt under the build's source dir
  backend::Backend backend = backend::musa();  // the SDK's layout, map format, names in sentences
  std::string sdk_home;                   // vendor SDK (its backend's library and include dirs)
  std::string cuda_home;                  // reference CUDA install
  std::string mapping;                    // porting map file or directory
  std::string cache_dir;                  // where indexes are cached ("" for none)
  bool confirm = false;                   // compile unsettled candidates with the build's command (src/confirm)
  double confirm_budget = 60;             // seconds of compiling allowed; the rest stays unconfirmed
};

struct LinkcheckOptions {
  loader::LoaderEnv env;
  bool closure = false;  // check every loaded object, as `ldd -r` does; default: only the named files
  TraceOptions trace;
};

// One symbol, traced without a library (musa-linkcheck explain SYMBOL).
Report explain_symbol(const std::string& symbol, const std::vector<std::string>& inputs, const LinkcheckOptions& options);

// Several symbols traced with one set of indexes (what explain does, in bulk).
Report explain_symbols(const std::vector<std::string>& symbols, const LinkcheckOptions& options);

// The indexes and build knowledge tracing needs, built on first use and shared by all inputs of a
// run (and by musa-stubgen, which plans its stubs from the same context). Problems reading them are
// added to the report's errors and warnings.
class TraceResources {
 public:
  TraceResources(const TraceOptions& options, Report& report);
  ~TraceResources();
  TraceResources(const TraceResources&) = delete;
  TraceResources& operator=(const TraceResources&) = delete;
  // The context for one process (null: no loaded libraries, as for explain).
  const trace::TraceContext& context(const loader::Process* process);

 private:
  std::string cache_file(const std::string& kind, const std::vector<std::string>& roots) const;
  void prepare();
  const TraceOptions& o_;
  std::vector<InputError>& errors_;
  std::vector<std::string>& warnings_;
  bool ready_ = false;
  trace::TraceContext ctx_;
  std::optional<build::BuildInfo> build_;
  std::optional<source::SourceIndex> sources_;
  std::optional<porting::PortingMap> mapping_;
  std::optional<sdk::SdkIndex> sdk_, cuda_, search_path_;
};

// Files and directories as the user named them (directories: every ELF file below them).
// Relative paths are taken as they are; the tool makes them absolute before calling.
Report run_linkcheck(const std::vector<std::string>& inputs, const LinkcheckOptions& options);
void run_linkcheck(const std::vector<std::string>& inputs, const LinkcheckOptions& options, TraceResources& resources,
                   Report& report);

// The ELF files a list of inputs names; errors for missing paths and for directories without any.
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::vector<InputError>& errors);

}  // namespace mlc
