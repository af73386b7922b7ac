// The import context read as evidence: torch's own libraries and the target package's shared
// objects, read for their exported symbols only (lookup tables), and only when some symbol is left
// for tracing. A definition there is what the loaded libraries and the search path did not have.
#include "trace/import_context.h"

#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "common/paths.h"
#include "common/walk.h"
#include "report/said.h"
#include "trace/suggest.h"
#include "verdict/verdict.h"

namespace mlc::trace {
namespace {

bool shared_object_name(const std::string& path) {
  std::string base = path.substr(path.rfind('/') + 1);
  return base.ends_with(".so") || base.find(".so.") != std::string::npos;
}

// The package a module belongs to: the topmost directory above it holding __init__.py ("" for a
// top-level module).
std::string package_of(const std::string& target) {
  std::string top;
  for (std::string dir = parent_dir(target); dir != "/" && is_file(dir + "/__init__.py"); dir = parent_dir(dir))
    top = dir;
  return top;
}

}  // namespace

ImportContext read_import_context(const ImportContextSources& sources, const loader::Process& loaded) {
  ImportContext context;
  std::set<std::pair<dev_t, ino_t>> seen;
  for (const auto& o : loaded.objects) seen.insert({o.dev, o.ino});
  constexpr size_t kMostLibraries = 256;  // a package with thousands of modules is read no further
  auto add = [&](const std::string& path, const std::string& label) {
    struct stat st;
    if (context.libraries.objects.size() >= kMostLibraries || stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        !seen.insert({st.st_dev, st.st_ino}).second)
      return;
    auto obj = elf::read_object(path, elf::ReadOptions{.relocations = false, .lookup_only = true});
    if (!obj || obj->kind != elf::ObjectKind::SharedObject) return;
    loader::LoadedObject o;
    o.elf = std::move(obj).value();
    o.path = path;
    o.dev = st.st_dev;
    o.ino = st.st_ino;
    context.libraries.objects.push_back(std::move(o));
    context.labels.push_back(label);
  };
  if (!sources.torch_dir.empty()) {
    // torch/lib/*.so as the wheel (or Debian's symlinks) lays them out; named from the site directory.
    std::string site = parent_dir(sources.torch_dir);
    std::string version = sources.torch_version.empty() ? "torch" : "torch " + sources.torch_version;
    walk_tree(sources.torch_dir + "/lib", [&](const std::string& path, const struct stat&) {
      if (shared_object_name(path)) add(path, path.substr(site.size() + 1) + " (" + version + ")");
    });
  }
  if (std::string package = package_of(sources.target); !package.empty()) {
    std::string site = parent_dir(package);
    walk_tree(
        package,
        [&](const std::string& path, const struct stat&) {
          if (shared_object_name(path)) add(path, path.substr(site.size() + 1) + " (in this module's package)");
        },
        WalkOptions{.skip_hidden = true, .follow_symlinks = false});
  }
  return context;
}

int import_definition(const ImportContext& context, const std::string& name) {
  const uint32_t hash = elf::gnu_hash(name);
  std::vector<uint32_t> hits;
  for (size_t i = 0; i < context.libraries.objects.size(); ++i) {
    const auto& o = context.libraries.objects[i].elf;
    hits.clear();
    o.find_defined(name, hash, hits);
    for (uint32_t s : hits) {
      elf::Symbol sym = o.dynamic_symbol(s);
      if ((sym.binding == elf::Binding::Global || sym.binding == elf::Binding::Weak ||
           sym.binding == elf::Binding::GnuUnique) &&
          (sym.visibility == elf::Visibility::Default || sym.visibility == elf::Visibility::Protected))
        return static_cast<int>(i);
    }
  }
  return -1;
}

void suggest_in_import_context(const ImportContext& context, const std::vector<UnresolvedSymbol*>& symbols) {
  std::vector<UnresolvedSymbol*> unknown;
  for (auto* u : symbols)
    if (verdict::current(*u) == Classification::Unknown && !u->origin) unknown.push_back(u);
  if (unknown.empty() || context.libraries.objects.empty()) return;
  suggest(context.libraries, unknown, nullptr);
  for (auto* u : unknown) {
    if (verdict::current(*u) != Classification::AbiMismatch || !u->origin || !u->origin->library) continue;
    for (size_t i = 0; i < context.libraries.objects.size(); ++i)
      if (context.libraries.objects[i].path == *u->origin->library)
        also(*u, said::ModuleDoesNotLink{.label = context.labels[i]});
  }
}

}  // namespace mlc::trace
