// Shared option handling for musa-linkcheck and musa-stubgen.
#include "context_options.h"
#include "python_context.h"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "backend/backend.h"
#include "codegen/backend_yaml.h"
#include "common/file_io.h"
#include "common/paths.h"
#include "common/phase_times.h"
#include "common/text.h"
#include "loader_facts.h"
#include "report/escape.h"
#include "version.h"

namespace mlc::tools {
namespace {

using installed::Place;

// --with's LIB, LIB:global or LIB:local: the path, and whether it is loaded with RTLD_LOCAL. A file
// whose own name ends in ":local" is taken as it is.
std::pair<std::string, bool> with_mode(const std::string& value) {
  struct stat st;
  if (stat(value.c_str(), &st) == 0) return {value, false};
  for (const auto& [suffix, local] : {std::pair<std::string, bool>{":local", true}, {":global", false}})
    if (value.size() > suffix.size() && value.ends_with(suffix))
      return {value.substr(0, value.size() - suffix.size()), local};
  return {value, false};
}

std::string default_cache_dir(const std::string& build_dir) {
  if (!build_dir.empty()) return absolute(build_dir) + "/.musa-linkcheck-cache";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/musa-linkcheck";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/musa-linkcheck";
  return "";
}

bool is_elf(const std::string& p) {
  char magic[4] = {};
  FILE* f = std::fopen(p.c_str(), "rb");
  if (!f) return false;
  size_t n = std::fread(magic, 1, 4, f);
  std::fclose(f);
  return n == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

// `command -v NAME`, skipping wrappers that are not ELF files (pyenv's and conda's shims are shell
// scripts): the first ELF executable NAME in $PATH ("NAME" itself when there is none, so the
// loader's one-line error names what was looked for).
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return name;
  for (const auto& dir : loader::split_search_path(path)) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0 && !is_dir(candidate) && is_elf(candidate)) return absolute(candidate);
  }
  return name;
}

// Where other versions of a missing library are commonly installed, off the loader's search path:
// vendor SDKs and CUDA toolkits side by side (/usr/local/musa-3.1, /usr/local/cuda-12.1: each
// backend that says so, then CUDA), and the active conda or virtual environment's lib directory.
std::vector<Place> install_places() {
  std::vector<std::string> patterns;
  for (const backend::Backend* b : backend::all())
    if (b->versioned_homes)
      for (const auto& dir : b->library_dirs) patterns.push_back(b->default_home + "*/" + dir);
  for (const char* cuda : {"/usr/local/cuda*/lib64", "/usr/local/cuda*/lib"}) patterns.push_back(cuda);
  std::vector<Place> places;
  for (const auto& pattern : patterns) {
    glob_t g{};
    if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
      std::string home = pattern.substr(0, pattern.find('*') + 1);  // "/usr/local/musa*"
      for (size_t i = 0; i < g.gl_pathc; ++i)
        places.push_back({.dir = g.gl_pathv[i], .how = loader::FoundHow::Home, .home = home});
    }
    globfree(&g);
  }
  if (const char* c = std::getenv("CONDA_PREFIX"); c && *c)
    places.push_back({.dir = std::string(c) + "/lib", .how = loader::FoundHow::Conda});
  if (const char* v = std::getenv("VIRTUAL_ENV"); v && *v)
    places.push_back({.dir = std::string(v) + "/lib", .how = loader::FoundHow::Venv});
  return places;
}

// --backend's choices and help come from backend::all(): a new backend needs no edit here.
std::vector<std::string> backend_names() {
  std::vector<std::string> out;
  for (const backend::Backend* b : backend::all()) out.push_back(b->name);
  return out;
}

// "musa (default) or hip (ROCm HIP as Debian ships it)": the first is the default.
std::string backend_choices() {
  const auto& all = backend::all();
  std::vector<std::string> choices;
  for (size_t i = 0; i < all.size(); ++i)
    choices.push_back(all[i]->name + (i == 0 ? " (default)" : all[i]->about.empty() ? "" : " (" + all[i]->about + ")"));
  return join_list(choices);
}

// "musa $MUSA_HOME, else /usr/local/musa; hip $ROCM_PATH, else /usr"
std::string sdk_home_defaults() {
  std::string out;
  for (const backend::Backend* b : backend::all())
    out += (out.empty() ? "" : "; ") + b->name + " $" + b->home_env + ", else " + b->default_home;
  return out;
}

}  // namespace

std::string absolute(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char buf[4096];
  if (!getcwd(buf, sizeof buf)) return path;
  std::string p = path;
  while (p.rfind("./", 0) == 0) p = p.substr(2);
  return std::string(buf) + "/" + p;
}

std::string version_text(const std::string& tool) {
  return tool + " (MusaLinkcheck) " + MLC_VERSION +
         "\nCopyright (C) 2026 the MusaLinkcheck developers.\n"
         "Nothing it analyses is executed, loaded or dlopened: ELF files are read. It runs only what you\n"
         "name: the interpreter of --python (asked where packages live) and, with --build-dir, the build's\n"
         "compile commands (the confirm pass).";
}

std::string stub_runtime_header() {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    // The runtime the project ships is MUSA's (stubs/); stubgen renames it for other backends.
    auto installed = std::filesystem::path(exe).parent_path().parent_path() / "include" / backend::musa().stubs_header;
    if (std::filesystem::exists(installed)) return installed.string();
  }
  return MLC_STUB_RUNTIME_HEADER;
}

std::string report_root(const std::string& build_source_dir, const std::vector<std::string>& source_roots) {
  std::string start = !build_source_dir.empty() ? build_source_dir
                      : !source_roots.empty()   ? absolute(source_roots.front())
                                                : absolute(".");
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::weakly_canonical(start, ec);
  if (ec) dir = start;
  for (auto d = dir; !d.empty(); d = d.parent_path()) {
    if (std::filesystem::exists(d / ".git", ec)) return d.string();
    if (d == d.root_path()) break;
  }
  return dir.string();
}

std::vector<FileRead> inputs_read(const std::vector<std::string>& inputs) {
  std::vector<FileRead> out;
  for (const auto& in : inputs)
    out.push_back({.path = absolute(in), .what = "the input " + in, .kind = ReadKind::Input});
  return out;
}

void LoadedFiles::add(const loader::Process& process) {
  if (process.target < 0) return;
  const std::string& target = process.objects[process.target].path;
  for (const auto& o : process.objects) {
    if (!seen_.insert(o.path).second) continue;
    if (o.is_target) {
      // A file found under a named directory is named by both.
      std::string what = "the input " + o.path;
      for (const auto& n : named_)
        if (o.path.size() > n.size() && o.path.compare(0, n.size(), n) == 0 && o.path[n.size()] == '/')
          what = o.path + ", an ELF file checked under the input directory " + n;
      reads_.push_back({.path = o.path, .what = what, .kind = ReadKind::Input});
    } else if (o.is_with) {
      reads_.push_back(
          {.path = o.path, .what = o.path + ", loaded before the input (--with, --python)", .kind = ReadKind::Loaded});
    } else {
      reads_.push_back(
          {.path = o.path, .what = o.path + ", which loading " + target + " brings in", .kind = ReadKind::Loaded});
    }
  }
}

bool refuse_clobber(const std::string& tool, const std::vector<FileWrite>& writes, const std::vector<FileRead>& reads) {
  auto why = clobbered(writes, reads);
  if (why) std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), controls_escaped(*why).c_str());
  return why.has_value();
}

bool write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0;
  }
  return !write_atomic(path, text).has_value();
}

std::optional<InputError> write_report(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (std::fflush(stdout) != 0)
      return InputError{"standard output", std::string("cannot write: ") + std::strerror(errno)};
    return std::nullopt;
  }
  return write_atomic(path, text);
}

void ContextOptions::add_to(CLI::App& app) {
  app.add_option("--with", with,
                 "a library already loaded before FILE (repeatable, in load order): LIB or LIB:global is loaded "
                 "with RTLD_GLOBAL (its symbols bind everything loaded after it, as LD_PRELOAD or "
                 "ctypes.CDLL(LIB, RTLD_GLOBAL)); LIB:local with RTLD_LOCAL, as Python imports a module (loaded, "
                 "so a later DT_NEEDED of its soname reuses it, but its symbols bind only what its own load reaches)")
      ->allow_extra_args(false);
  // A flag that takes its value only as --python=EXE, so that "--python lib.so" keeps lib.so an input.
  python_option = app.add_flag(
      "--python{python3}", python,
      "check as the Python interpreter loads it: EXE, or python3 as PATH finds it (a "
      "pyenv or conda shim included), is run to ask where packages live (60 s at most, "
      "MUSA_LINKCHECK_PYTHON_TIMEOUT) and the interpreter it reports is loaded first, "
      "with its libpython, as by --with; without EXE, a file installed in a venv or conda environment is checked "
      "as that environment's python3 imports it");
  app.add_option("--library-path", library_path, "extra directory searched like LD_LIBRARY_PATH (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--sysroot", sysroot, "resolve absolute search paths and ld.so.cache inside DIR");
  app.add_option("--cpu-level", cpu_level,
                 "the x86-64 level of the CPU the process runs on (baseline, x86-64-v2, x86-64-v3, x86-64-v4): which "
                 "glibc-hwcaps/x86-64-vN subdirectories the loader searches, and which objects' ISA level it refuses "
                 "(default: this machine's, with GLIBC_TUNABLES' glibc.cpu.hwcaps applied)")
      ->check(CLI::IsMember({"baseline", "x86-64-v2", "x86-64-v3", "x86-64-v4"}));
  app.add_flag("--closure", closure, "check every object in the DT_NEEDED closure, as ldd -r does (--with's too)");
  app.add_flag("--only-named", only_named,
               "check the named files only, not the dependencies their load brings in (the default before 0.2)")
      ->excludes("--closure");
  app.add_option("--build-dir", build_dir,
                 "a CMake build tree (CMakeCache.txt, compile_commands.json, File API); its sources are "
                 "searched for definitions: CMAKE_HOME_DIRECTORY, each target's source directory and the directories "
                 "of its sources (build trees below them skipped, at most 200000 files each), and the files of "
                 "generated-source directories");
  app.add_flag("--no-reconfigure", no_reconfigure,
               "never run cmake: with --build-dir and no current CMake File API reply, the build tree is not "
               "configured again to write one (its CMake files are then read alone)");
  app.add_option("--porting-dir", porting_dir, "the generated porting tree (default: GENERATED_PORTING_DIR)");
  app.add_option("--source-root", source_roots,
                 "a source tree to search for definitions besides the build's own (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--cmake-lists", cmake_lists, "a CMakeLists.txt whose source lists are read (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--backend", backend, "the GPU backend: " + backend_choices())->check(CLI::IsMember(backend_names()));
  app.add_option("--sdk-home", sdk_home, "the vendor SDK root (default: " + sdk_home_defaults() + ")");
  app.add_option("--cuda-home", cuda_home, "a reference CUDA install (default: /usr/local/cuda; '' for none)");
  app.add_option("--mapping", mapping,
                 "the porting map: torch_musa's (a directory of *.json or one file) or PyTorch's hipify map "
                 "(cuda_to_hip_mappings.py, read as data)");
  app.add_option("--codegen-yaml", codegen_yamls,
                 "a torchgen backend yaml (gen_backend_stubs' backend/cpp_namespace/supported, or torch_musa's "
                 "musa_functions.yaml), repeatable; default: the yaml the build passes to gen_backend_stubs, else a "
                 "*native_functions*.yaml under the source tree. Its kernels that no source implements are "
                 "unimplemented-kernel, traced to their entry")
      ->allow_extra_args(false);
  app.add_option("--cache-dir", cache_dir, "where source and header indexes are cached");
  app.add_flag("--no-cache", no_cache, "build the indexes afresh and keep no cache");
  app.add_flag("--no-confirm", no_confirm,
               "text matching only: compile nothing, even with --build-dir (by default the "
               "sources text matching could not settle, and musa-stubgen's planned ones, are compiled whenever the "
               "build has compile commands)");
  // Without a build tree the confirm pass warns that it has no compile commands.
  app.add_flag("--confirm", confirm,
               "compile the candidate sources text matching could not settle, with the "
               "build's commands (the default whenever --build-dir is given)")
      ->excludes("--no-confirm");
  app.add_flag("--verbose", verbose,
               "say every candidate source the confirm pass could not compile, with the "
               "compiler's error (by default only those of symbols no candidate settled; the rest are counted)");
  app.add_option(
      "--confirm-budget", confirm_budget,
      "compiler runs the confirm pass may start, the best-ranked candidates first (default 60; answers "
      "from its cache are free): a count of compiler work, so the answer does not depend on the machine's load");
}

std::vector<std::string> ContextOptions::path_warnings() const {
  std::vector<std::string> out;
  auto check = [&](const std::string& option, const std::string& path, bool want_dir) {
    if (path.empty()) return;
    std::string line;
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
      line = option + " " + path + ": " + std::strerror(errno);
    } else if (want_dir && !S_ISDIR(st.st_mode)) {
      line = option + " " + path + ": not a directory";
    }
    if (!line.empty() && std::find(out.begin(), out.end(), line) == out.end()) out.push_back(line);
  };
  for (const auto& w : with) check("--with", with_mode(w).first, false);
  for (const auto& d : library_path) check("--library-path", d, true);
  check("--build-dir", build_dir, true);
  check("--porting-dir", porting_dir, true);
  for (const auto& r : source_roots) check("--source-root", r, true);
  for (const auto& c : cmake_lists) check("--cmake-lists", c, false);
  if (sdk_home) check("--sdk-home", *sdk_home, true);
  if (cuda_home) check("--cuda-home", *cuda_home, true);
  // A cache directory is created when missing; one that is a file only makes every index rebuilt.
  if (struct stat st; !no_cache && !cache_dir.empty() && stat(cache_dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    out.push_back("--cache-dir " + cache_dir + ": not a directory; nothing is cached");
  for (const auto& y : codegen_yamls) check("--codegen-yaml", y, false);
  return out;
}

std::vector<std::string> ContextOptions::codegen_errors() const {
  std::vector<std::string> out;
  for (const auto& y : codegen_yamls)
    if (auto r = mlc::codegen::read_backend_yaml(y); !r) out.push_back(y + ": " + r.error().message);
  return out;
}

std::optional<std::string> ContextOptions::path_error() const {
  struct stat st;
  // Every search path and ld.so.cache are read inside the sysroot: under one that is not a directory
  // nothing is found, and the run would only bury the typo under a missing-library block per input.
  if (!sysroot.empty() && stat(sysroot.c_str(), &st) != 0) return "--sysroot " + sysroot + ": " + std::strerror(errno);
  if (!sysroot.empty() && !S_ISDIR(st.st_mode)) return "--sysroot " + sysroot + ": not a directory";
  // The map is read only when a finding needs it: a missing one is said once, before any report.
  if (!mapping.empty() && stat(mapping.c_str(), &st) != 0) return "--mapping " + mapping + ": " + std::strerror(errno);
  return std::nullopt;
}

std::vector<FileRead> ContextOptions::files_named() const {
  std::vector<FileRead> out;
  auto add = [&](const std::string& option, const std::string& path, ReadKind kind) {
    out.push_back({.path = absolute(path), .what = "the " + option + " " + path, .kind = kind});
  };
  for (const auto& w : with) add("--with", with_mode(w).first, ReadKind::Loaded);
  // A directory map is its *.json files (porting::load_mapping); a hipify map is one file.
  if (!mapping.empty() && is_dir(mapping)) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(mapping, ec))
      if (e.path().extension() == ".json") add("--mapping", e.path().string(), ReadKind::Context);
  } else if (!mapping.empty()) {
    add("--mapping", mapping, ReadKind::Context);
  }
  for (const auto& c : cmake_lists) add("--cmake-lists", c, ReadKind::BuildFile);
  for (const auto& y : codegen_yamls) add("--codegen-yaml", y, ReadKind::Context);
  return out;
}

std::string ContextOptions::python_interpreter() const {
  if (!python_option || python_option->count() == 0) return "";
  return python.find('/') == std::string::npos ? find_on_path(python) : absolute(python);
}

LinkcheckOptions ContextOptions::prepare(std::vector<InputError>& errors) const {
  LinkcheckOptions options = resolve();
  if (python_option && python_option->count() > 0)
    if (auto e = ask_python(python, python_interpreter(), options)) errors.push_back(*e);
  return options;
}

LinkcheckOptions ContextOptions::resolve() const {
  LinkcheckOptions options;
  options.closure = closure;
  options.only_named = only_named;
  std::optional<PhaseTime> step(std::in_place, "context.places");
  options.places = install_places();
  step.reset();
  options.env.sysroot = sysroot;
  if (char cwd[4096]; getcwd(cwd, sizeof cwd)) options.env.cwd = cwd;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  step.emplace("context.loader-facts");
  const std::string kept_dir = no_cache ? "" : (cache_dir.empty() ? default_cache_dir(build_dir) : absolute(cache_dir));
  apply_loader_facts(options.env, tunables ? tunables : "", cpu_level, kept_dir);
  step.emplace("context.rest");
  for (const auto& d : library_path) options.env.library_path.push_back(absolute(d));
  if (const char* llp = std::getenv("LD_LIBRARY_PATH"); llp && *llp) {
    for (const auto& d : loader::split_search_path(llp)) options.env.library_path.push_back(d);
  }
  // The process's preloads, as rtld.c reads them: LD_PRELOAD (entries separated by spaces or colons), then
  // /etc/ld.so.preload (whitespace or colons), inside the sysroot.
  auto add_preloads = [&](const std::string& list) {
    std::string entry;
    for (char c : list + " ") {
      if (c == ' ' || c == ':' || c == '\t' || c == '\n') {
        if (!entry.empty()) options.env.preload.push_back(entry);
        entry.clear();
      } else {
        entry += c;
      }
    }
  };
  if (const char* pre = std::getenv("LD_PRELOAD"); pre && *pre) add_preloads(pre);
  if (auto file = read_text(sysroot + "/etc/ld.so.preload")) add_preloads(*file);
  // The interpreter files Python hosts are loaded into (read, never run): python3 as PATH finds it, until
  // --python's interpreter answers (tools/python_context.cpp); if it does not, the files are checked as
  // without --python.
  options.host_python = find_on_path("python3");
  for (const auto& w : with) {
    auto [path, local] = with_mode(w);
    options.env.with.push_back(absolute(path));
    if (local) options.env.with_local.push_back(options.env.with.back());
    if (path == w) options.with_unscoped.push_back(options.env.with.back());
  }
  auto& t = options.trace;
  t.build_dir = build_dir.empty() ? "" : absolute(build_dir);
  t.reconfigure = !no_reconfigure;
  t.porting_dir = porting_dir.empty() ? "" : absolute(porting_dir);
  for (const auto& r : source_roots) t.source_roots.push_back(absolute(r));
  for (const auto& c : cmake_lists) t.cmake_lists.push_back(absolute(c));
  for (const auto& y : codegen_yamls) t.codegen_yamls.push_back(absolute(y));
  t.backend = *backend::find(backend);
  if (sdk_home) {
    t.sdk_home = sdk_home->empty() ? "" : absolute(*sdk_home);
  } else if (const char* m = std::getenv(t.backend.home_env.c_str()); m && *m) {
    t.sdk_home = m;
  } else if (is_dir(t.backend.default_home + "/" + t.backend.include_dirs.front())) {
    t.sdk_home = t.backend.default_home;  // only where the SDK is installed: /usr alone is no HIP SDK
  }
  if (cuda_home) {
    t.cuda_home = cuda_home->empty() ? "" : absolute(*cuda_home);
  } else if (is_dir("/usr/local/cuda")) {
    t.cuda_home = "/usr/local/cuda";
  }
  t.mapping = mapping.empty() ? "" : absolute(mapping);
  t.cache_dir = kept_dir;
  // The compiler has the last word whenever a build tree is known (--no-confirm: text only).
  t.confirm = !no_confirm && (confirm || !t.build_dir.empty());
  t.confirm_budget = static_cast<size_t>(confirm_budget);
  t.confirm_verbose = verbose;
  step.reset();
  return options;
}

}  // namespace mlc::tools
