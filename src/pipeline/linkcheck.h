// The whole analysis as one list of passes (read ELF -> emulate the loader -> bind -> demangle ->
// classify -> report). Tools build LinkcheckOptions, call run_linkcheck and render the Report.
#pragma once

#include <string>
#include <vector>

#include <optional>

#include "installed/installed.h"
#include "environment/python_env.h"
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
  // Which objects are checked. Default: the named files and every object loading them brings in
  // (what dlopen(RTLD_NOW) binds), not those already loaded by --with/--python.
  bool closure = false;     // every loaded object, as `ldd -r` does (--with's too)
  bool only_named = false;  // the named files only (the default before issue 15)
  TraceOptions trace;
  // Where other versions of a missing library may be installed, off the search path (the SDK's
  // lib/ is added from trace.sdk_home): /usr/local/musa*/lib, conda and venv lib dirs...
  std::vector<installed::Place> places;
  // --python: the interpreter's answer (the tool ran it). env.with[0] is then that interpreter;
  // torch's extension is loaded right after it for the inputs that need torch (src/environment).
  std::optional<environment::PythonEnv> python = std::nullopt;
  std::string dpkg_dir = "/var/lib/dpkg";  // whose lists name each library's package ("" for none)
  // Without --python: the python3 an extension would be imported by (the tool finds the first ELF
  // python3 on PATH; "" for none). Its own load (libm...) provides what extensions leave undefined.
  std::string host_python = "";
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
  // What building each index cost: files scanned in this run, or reused from the cache (the cache
  // is only worth its files when a second run scans nothing). Null for an index not built.
  const source::IndexStats* source_index_stats() const { return sources_ ? &source_stats_ : nullptr; }
  const source::IndexStats* sdk_header_stats() const { return sdk_ ? &sdk_->header_stats : nullptr; }

 private:
  std::string cache_file(const std::string& kind, const std::vector<std::string>& roots) const;
  void prepare();
  const TraceOptions& o_;
  std::vector<InputError>& errors_;
  std::vector<std::string>& warnings_;
  bool ready_ = false;
  trace::TraceContext ctx_;
  std::optional<cmake::BuildInfo> build_;
  std::optional<source::SourceIndex> sources_;
  source::IndexStats source_stats_;
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
