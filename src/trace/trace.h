// Origin tracing: torch_musa's FAQ decision tree, automated. For each symbol the loader could not
// bind, find where it should come from - a source in the porting tree or a source root (and whether
// the build compiles it), a library that defines it but is not linked or is shadowed by another copy,
// an SDK header that declares it while no SDK library defines it, a CUDA counterpart - and say what
// to change.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "build/model.h"
#include "codegen/backend_yaml.h"
#include "loader/loader.h"
#include "porting/porting_map.h"
#include "report/report.h"
#include "sdk/sdk_index.h"
#include "source/source_index.h"
#include "trace/import_context.h"

namespace mlc::trace {

struct TraceContext {
  const source::SourceIndex* sources = nullptr;  // porting dir + source roots
  std::string porting_dir;                       // absolute, may be empty
  std::vector<std::string> source_roots;         // absolute
  const sdk::SdkIndex* search_path = nullptr;    // other libraries on the loader's search path
  // The vendor SDK and the reference CUDA toolkit, indexed on first use: a run whose symbols are
  // all settled earlier never reads a multi-gigabyte toolkit.
  std::function<const sdk::SdkIndex*()> load_sdk, load_cuda;
  const sdk::SdkIndex* sdk() const { return lazy(load_sdk, sdk_); }
  const sdk::SdkIndex* cuda() const { return lazy(load_cuda, cuda_); }
  std::string sdk_home, cuda_home;  // what load_sdk / load_cuda would read
  const porting::PortingMap* mapping = nullptr;
  const backend::Backend* backend = &backend::musa();  // names in sentences, the SDK's layout
  const build::Model* build = nullptr;
  // Without a build: the sources the library's own DWARF says it was compiled from (its units), the one
  // evidence of what the build compiled; null when there is a build, or no DWARF.
  const std::set<std::string>* compiled_units = nullptr;
  const std::vector<codegen::BackendYaml>* codegen =
      nullptr;  // torchgen backend yamls (kernels the generated code calls)
  // Ported path (relative) -> original path (relative), filled on first use.
  mutable std::optional<std::unordered_map<std::string, std::string>> original_of;
  // Translation units by what they #include ("fmt/format-inl.h" -> [{tu, line}]), filled on first use.
  struct Includer {
    std::string tu;
    uint32_t line = 0;
  };
  mutable std::optional<std::unordered_map<std::string, std::vector<Includer>>> includers;
  // The import context of the input being traced (torch's own libraries, the target's package:
  // import_context.h), read on first use; reset per input (TraceResources::context).
  const ImportContext* import_context() const {
    if (!import_) import_ = load_import_ ? load_import_() : nullptr;
    return *import_;
  }
  void set_import_context(std::function<const ImportContext*()> load) {
    load_import_ = std::move(load);
    import_.reset();
  }

 private:
  static const sdk::SdkIndex* lazy(const std::function<const sdk::SdkIndex*()>& load,
                                   std::optional<const sdk::SdkIndex*>& cached) {
    if (!cached) cached = load ? load() : nullptr;
    return *cached;
  }
  mutable std::optional<const sdk::SdkIndex*> sdk_, cuda_;
  std::function<const ImportContext*()> load_import_;
  mutable std::optional<const ImportContext*> import_;
};

// Refines an unresolved symbol that the loader left `unknown` (or `missing-library` without a
// versioned reference): classification, origin, counterpart and fix. `process` may be null (explain
// without a library); `referencing` is the index of the object that references the symbol. It claims
// (src/verdict) and never resolves: the run decides once every pass has claimed.
void trace_symbol(const loader::Process* process, int referencing, const TraceContext& ctx, UnresolvedSymbol& u);

// Translation units by what they #include, read on first use and kept in `ctx` (the tracer's
// one-unit rule and the confirm pass's evidence ranking share it).
const std::unordered_map<std::string, std::vector<TraceContext::Includer>>& includers(const TraceContext& ctx);

// The add-source fix that compiles `file`, from the list build::choose_list chose for it (the one
// ListChoice -> Fix conversion): the entry to add, or the choice's note alone when no entry is the
// fix (a glob already covers the file, or a list(REMOVE_ITEM) takes it out), so that no "add  to  in "
// is ever written and stubgen never takes a note for a list addition; "compile FILE into the
// library" without a choice.
Fix add_source_fix(const std::optional<build::ListChoice>& choice, const std::string& file);
// The fix that puts `file` back into the setuptools extension building `module` (setup.py's literal
// sources= list: cmake_file is setup.py, list "sources", entry as setup.py would name it); nullopt when
// no setup.py declares the module (build::setuptools::find_extension).
std::optional<Fix> setup_py_fix(const std::string& module, const std::string& file);

}  // namespace mlc::trace
