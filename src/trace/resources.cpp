// The indexes tracing reads (sources, porting map, SDK, CUDA, the build), built on first use and
// shared by every input of a run, by musa-stubgen's planning and by the coverage report.
#include "trace/resources.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "backend/backend.h"
#include "backend/hipify_map.h"
#include "common/hash.h"
#include "common/paths.h"
#include "common/walk.h"
#include "report/said.h"
#include "source/preprocessor.h"

namespace mlc::trace {

// Files walked under each directory inferred from a library's DWARF.
constexpr size_t kInferredWalkLimit = 20000;

TraceResources::TraceResources(const TraceOptions& o, Report& report)
    : o_(o), errors_(report.errors), warnings_(report.warnings), notes_(report.notes) {}
TraceResources::~TraceResources() = default;

const TraceContext& TraceResources::context(const loader::Process* p,
                                            std::function<const ImportContext*()> import_context,
                                            const InferredSources* inferred) {
  if (!ready_) prepare();
  ctx_.set_import_context(std::move(import_context));
  // The natural call: no tree and no build named, so the library's DWARF says where it was built. Each walk
  // is bounded (a unit compiled in a home directory costs a bound, not the home directory).
  ctx_.sources = sources_ ? &*sources_ : nullptr;
  ctx_.compiled_units = nullptr;
  if (!sources_ && !build_ && inferred && !inferred->roots.empty()) {
    auto it = inferred_.find(inferred->roots);
    if (it == inferred_.end()) {
      source::IndexStats stats;
      const std::set<std::string> bounded(inferred->roots.begin(), inferred->roots.end());
      it = inferred_
               .emplace(inferred->roots,
                        source::SourceIndex::build({.roots = inferred->roots,
                                                    .cache_file = cache_file("sources", inferred->roots),
                                                    .defines = {},
                                                    .bounded_roots = bounded,
                                                    .walk_limit = kInferredWalkLimit,
                                                    .kinds = backend::file_kinds()},
                                                   &stats))
               .first;
      for (const auto& r : stats.cut_short)
        warnings_.push_back(
            said::warning(said::SearchCutShort{.root = r, .from_debug_info = true, .limit = kInferredWalkLimit}));
    }
    ctx_.sources = &it->second;
    ctx_.compiled_units = &inferred->units;
  }
  search_path_.reset();
  ctx_.search_path = nullptr;
  if (p) {
    // Other copies of loaded libraries and unlinked candidates: the directories the process used,
    // except the system directories (their libraries are in ld.so.cache's world, not the SDK's).
    std::set<std::string> dirs;
    for (const auto& obj : p->objects) {
      std::string dir = obj.path.substr(0, obj.path.rfind('/'));
      if (in_system_library_dir(obj.path)) continue;
      dirs.insert(dir);
    }
    search_path_.emplace(sdk::index_libraries({dirs.begin(), dirs.end()}));
    ctx_.search_path = &*search_path_;
    for (const auto& lib : search_path_->libraries) searched_libraries_.insert(lib.path);
  }
  return ctx_;
}

std::vector<FileRead> TraceResources::files_read() const {
  std::vector<FileRead> out;
  auto add = [&](const std::string& path, const std::string& what, ReadKind kind, std::optional<uint64_t> size = {}) {
    out.push_back({.path = path, .what = what + " " + path, .kind = kind, .size = size});
  };
  if (build_) {
    for (const auto& f : build_->cmake_files) add(f, "the build file", ReadKind::BuildFile);
    if (!build_->build_dir.empty())
      for (const char* name : {"/CMakeCache.txt", "/compile_commands.json"})
        add(build_->build_dir + name, "the build file", ReadKind::BuildFile);
  }
  if (sources_)
    for (const auto& f : sources_->files()) add(f.path, "the source", ReadKind::Source, f.size);
  for (const auto& [roots, index] : inferred_)  // the trees the inputs' DWARF names
    for (const auto& f : index.files()) add(f.path, "the source", ReadKind::Source, f.size);
  for (const auto& y : codegen_) {
    add(y.path, "the torchgen yaml", ReadKind::Context);
    if (!y.native_yaml.empty()) add(y.native_yaml, "the torchgen schema", ReadKind::Context);
  }
  for (const auto& [index, whose] : {std::pair{&sdk_, "the SDK's"}, std::pair{&cuda_, "CUDA's"}}) {
    if (!*index) continue;
    for (const auto& lib : (*index)->libraries) add(lib.path, std::string(whose) + " library", ReadKind::Sdk);
    for (const auto& h : (*index)->headers.files()) add(h.path, std::string(whose) + " header", ReadKind::Sdk, h.size);
  }
  for (const auto& lib : searched_libraries_) add(lib, "the library", ReadKind::Loaded);
  return out;
}

std::string TraceResources::cache_file(const std::string& kind, const std::vector<std::string>& roots) const {
  if (o_.cache_dir.empty()) return "";
  std::string key;
  for (const auto& r : roots) key += r + "\n";
  return o_.cache_dir + "/" + kind + "-" + fnv1a_hex(key) + ".idx";
}

namespace {

// The trees searched for definitions, and those of them the build derived (bounded by its targets).
struct SearchRoots {
  std::vector<std::string> roots;
  std::set<std::string> bounded;
};

// --build-dir alone (the FAQ's first command): the build knows its own sources, and they are what is
// searched (not as source roots of the context: those are trees a porting tree was generated from).
// Once the user names the trees (--porting-dir, --source-root, --cmake-lists), those are the search: a
// build whose source directory also holds vendored projects, test data or other worlds (a fixture built
// inside its tool's own build) would otherwise lend definitions from files that belong to none of it.
SearchRoots search_roots(const TraceOptions& o, const TraceContext& ctx, const build::Model* build) {
  SearchRoots out;
  auto& roots = out.roots;
  if (!ctx.porting_dir.empty()) roots.push_back(ctx.porting_dir);
  roots.insert(roots.end(), ctx.source_roots.begin(), ctx.source_roots.end());
  if (!build || !o.porting_dir.empty() || !o.source_roots.empty() || !o.cmake_lists.empty()) return out;
  auto under_any = [&](const std::string& path) {
    return std::any_of(roots.begin(), roots.end(), [&](const std::string& r) {
      return path == r || (path.size() > r.size() && path.compare(0, r.size(), r) == 0 && path[r.size()] == '/');
    });
  };
  auto derived = build::source_search_roots(*build);
  for (const auto& t : derived.trees)
    if (!under_any(t)) out.bounded.insert(roots.emplace_back(t));
  for (const auto& d : derived.flat) {
    if (under_any(d)) continue;
    walk_tree(
        d,
        [&](const std::string& path, const struct stat&) {
          if (source::is_source_file(path, backend::file_kinds())) roots.push_back(path);
        },
        WalkOptions{.skip_hidden = true, .follow_symlinks = true, .max_depth = 0, .max_files = 10000});
  }
  return out;
}

// torchgen backend yamls: those given, else those the build's custom commands pass to gen_backend_stubs.
std::vector<codegen::BackendYaml> read_codegen_yamls(const TraceOptions& o, const TraceContext& ctx,
                                                     const build::Model* build, std::vector<InputError>& errors) {
  std::vector<codegen::BackendYaml> out;
  std::vector<codegen::FoundYaml> yamls;
  for (const auto& y : o.codegen_yamls) yamls.push_back({y, "", ""});
  std::vector<codegen::FoundYaml> from_build;
  if (build) from_build = codegen::find_backend_yamls(*build);
  if (yamls.empty()) yamls = from_build;
  for (auto& f : yamls) {
    for (const auto& b : from_build)  // what the build knows of a yaml given by name
      if (b.yaml == build::normalize_path(f.yaml)) f = b;
    auto y = codegen::read_backend_yaml(f.yaml);
    if (!y) {
      // A yaml the user named must be one; a file found by its name alone may be something else.
      if (!o.codegen_yamls.empty()) errors.push_back(y.error());
      continue;
    }
    y->output_dir = f.output_dir;
    y->native_yaml = f.native_yaml;
    for (const auto& r : ctx.source_roots)  // PyTorch's checkout holds the schema the generator read
      if (y->native_yaml.empty() && path_exists(r + "/aten/src/ATen/native/native_functions.yaml"))
        y->native_yaml = r + "/aten/src/ATen/native/native_functions.yaml";
    codegen::read_schemas(*y);
    out.push_back(std::move(y).value());
  }
  return out;
}

}  // namespace

// The passes: the build, the porting and source trees, the source index, the porting map, the
// torchgen yamls, then the SDK and CUDA indexes as loaders run on first use.
void TraceResources::prepare() {
  ready_ = true;
  if (!o_.build_dir.empty() || !o_.cmake_lists.empty()) {
    build_.emplace(build::read_build({.build_dir = o_.build_dir,
                                      .cmake_lists = o_.cmake_lists,
                                      .library_helper = o_.backend.cmake_add_library,
                                      .ask_build_system = o_.reconfigure}));
    for (const auto& e : build_->errors) errors_.push_back(e);
    notes_.insert(notes_.end(), build_->notes.begin(), build_->notes.end());
    for (const auto& l : build_->lists)
      for (const auto& d : l.duplicates)
        warnings_.push_back(said::warning(
            said::ListedTwice{.file = d, .list = l.variable, .at = l.cmake_file + ":" + std::to_string(l.line)}));
    ctx_.build = &*build_;
  }
  ctx_.porting_dir = o_.porting_dir;
  if (ctx_.porting_dir.empty() && build_) {
    if (auto it = build_->cache.find("GENERATED_PORTING_DIR"); it != build_->cache.end()) ctx_.porting_dir = it->second;
  }
  ctx_.porting_dir = ctx_.porting_dir.empty() ? "" : build::normalize_path(ctx_.porting_dir);
  for (const auto& r : o_.source_roots) ctx_.source_roots.push_back(build::normalize_path(r));
  SearchRoots search = search_roots(o_, ctx_, build_ ? &*build_ : nullptr);
  if (!search.roots.empty()) {
    const auto& roots = search.roots;
    // The build directory's generated headers (config.h, export headers) define namespace macros.
    std::vector<std::string> macro_roots;
    if (!o_.build_dir.empty()) macro_roots.push_back(build::normalize_path(o_.build_dir));
    // The build's -D/-U flags decide which #if branch of a config header defines a namespace macro.
    std::map<std::string, std::string> defines;
    const auto database = build::read_compile_database(o_.build_dir);  // held for the loop
    for (const auto& c : database->commands) source::add_command_definitions(c.argv, defines);
    sources_.emplace(source::SourceIndex::build({.roots = roots,
                                                 .cache_file = cache_file("sources", roots),
                                                 .defines = defines,
                                                 .bounded_roots = search.bounded,
                                                 .walk_limit = source::IndexOptions{}.walk_limit,
                                                 .kinds = backend::file_kinds()},
                                                &source_stats_, macro_roots));
    for (const auto& r : source_stats_.cut_short)
      warnings_.push_back(said::warning(
          said::SearchCutShort{.root = r, .from_debug_info = false, .limit = source::IndexOptions{}.walk_limit}));
    ctx_.sources = &*sources_;
  }
  if (!o_.mapping.empty()) {
    auto m = backend::load_any_map(o_.mapping);
    if (m) {
      mapping_.emplace(std::move(m).value());
      ctx_.mapping = &*mapping_;
    } else {
      errors_.push_back(m.error());
    }
  }
  codegen_ = read_codegen_yamls(o_, ctx_, build_ ? &*build_ : nullptr, errors_);
  if (!codegen_.empty()) ctx_.codegen = &codegen_;
  ctx_.sdk_home = o_.sdk_home;
  ctx_.backend = &o_.backend;
  ctx_.cuda_home = o_.cuda_home;
  if (!o_.sdk_home.empty()) {
    ctx_.load_sdk = [this] {
      const backend::Backend& b = o_.backend;
      sdk_.emplace(sdk::index_sdk({.home = o_.sdk_home,
                                   .header_cache = cache_file("sdk-headers-" + b.name, {o_.sdk_home}),
                                   .include_dirs = b.include_dirs,
                                   .library_dirs = b.library_dirs,
                                   .library_prefixes = b.library_prefixes,
                                   .index_archives = b.index_archives,
                                   .header_kinds = backend::file_kinds()}));
      return &*sdk_;
    };
  }
  if (!o_.cuda_home.empty()) {
    ctx_.load_cuda = [this] {
      cuda_.emplace(sdk::index_sdk({.home = o_.cuda_home,
                                    .header_cache = cache_file("cuda-headers", {o_.cuda_home}),
                                    .header_kinds = backend::file_kinds()}));
      return &*cuda_;
    };
  }
}

}  // namespace mlc::trace
