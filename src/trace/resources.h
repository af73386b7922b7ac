// Where origin tracing looks (TraceOptions) and the indexes it reads, built once per run
// (TraceResources): the build tree, the source index, the porting map, the SDK and CUDA.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "build/model.h"
#include "common/outputs.h"
#include "loader/loader.h"
#include "porting/porting_map.h"
#include "report/report.h"
#include "sdk/sdk_index.h"
#include "source/source_index.h"
#include "trace/trace.h"

namespace mlc::trace {

// Where origin tracing looks. Everything is optional; missing context means fewer conclusions.
struct TraceOptions {
  std::string build_dir;                       // CMakeCache.txt, compile_commands.json, File API reply
  bool reconfigure = false;                    // may configure build_dir again to get CMake's File API reply
  std::string porting_dir;                     // default: GENERATED_PORTING_DIR from the cache
  std::vector<std::string> source_roots;       // original PyTorch tree, the project's sources
  std::vector<std::string> cmake_lists;        // default: every CMakeLists.txt under the build's source dir
  backend::Backend backend = backend::musa();  // the SDK's layout, map format, names in sentences
  std::string sdk_home;                        // vendor SDK (its backend's library and include dirs)
  std::string cuda_home;                       // reference CUDA install
  std::string mapping;                         // porting map file or directory
  std::vector<std::string>
      codegen_yamls;             // torchgen backend yamls (default: those the build runs gen_backend_stubs on)
  std::string cache_dir;         // where indexes are cached ("" for none)
  bool confirm = false;          // compile unsettled candidates with the build's command (src/confirm)
  size_t confirm_budget = 60;    // compiler runs allowed (confirm::ConfirmOptions); the rest stays unconfirmed
  bool confirm_verbose = false;  // every failed candidate compile said (confirm::ConfirmOptions::verbose)
};

// Where a library's own DWARF says it was built (the natural call, with no source tree and no build
// named): the directories to search for definitions (its units' DW_AT_comp_dir and source directories)
// and the sources it was compiled from.
struct InferredSources {
  std::vector<std::string> roots;
  std::set<std::string> units;
};

// The indexes and build knowledge tracing needs, built on first use and shared by all inputs of a
// run (and by musa-stubgen, which plans its stubs from the same context, and by the coverage report).
// Problems reading them are added to the report's errors and warnings.
class TraceResources {
 public:
  TraceResources(const TraceOptions& options, Report& report);
  ~TraceResources();
  TraceResources(const TraceResources&) = delete;
  TraceResources& operator=(const TraceResources&) = delete;
  // The context for one process (null: no loaded libraries, as for explain).
  // `import_context` reads the input's import context (import_context.h) when tracing first asks.
  const TraceContext& context(const loader::Process* process, std::function<const ImportContext*()> import_context = {},
                              const InferredSources* inferred = nullptr);
  // What building each index cost: files scanned in this run, or reused from the cache (the cache
  // is only worth its files when a second run scans nothing). Null for an index not built.
  const source::IndexStats* source_index_stats() const { return sources_ ? &source_stats_ : nullptr; }
  const source::IndexStats* sdk_header_stats() const { return sdk_ ? &sdk_->header_stats : nullptr; }
  // Every file the indexes and the build model have read so far: the build's files, the sources
  // indexed (those the inputs' DWARF names included), the torchgen yamls, the SDK's and CUDA's libraries and headers,
  // the libraries indexed beside a process's objects (the files named as context, --mapping's, are the tool's to list).
  // A run's outputs never replace one (common/outputs.h).
  std::vector<FileRead> files_read() const;

 private:
  std::string cache_file(const std::string& kind, const std::vector<std::string>& roots) const;
  void prepare();
  const TraceOptions& o_;
  std::vector<InputError>& errors_;
  std::vector<Warning>& warnings_;
  std::vector<std::string>& notes_;
  bool ready_ = false;
  TraceContext ctx_;
  std::optional<build::Model> build_;
  std::optional<source::SourceIndex> sources_;
  source::IndexStats source_stats_;
  std::optional<porting::PortingMap> mapping_;
  std::vector<codegen::BackendYaml> codegen_;
  std::optional<sdk::SdkIndex> sdk_, cuda_, search_path_;
  // Indexes of the trees inferred from the DWARF of the inputs, by their roots (one per project met).
  std::map<std::vector<std::string>, source::SourceIndex> inferred_;
  std::set<std::string> searched_libraries_;  // every search_path_'s libraries, for files_read()
};

}  // namespace mlc::trace
