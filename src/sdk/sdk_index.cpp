// SDK libraries are read for their .dynsym only (no relocations): a multi-gigabyte CUDA toolkit
// costs one pass over each symbol table, in parallel.
#include "sdk/sdk_index.h"

#include <dirent.h>
#include <sys/stat.h>

#include <tbb/parallel_for.h>
#include <algorithm>
#include <set>

#include "elf/elf_object.h"

namespace mlc::sdk {
namespace {

std::string link_name_of(const std::string& file) {
  std::string base = file.substr(file.rfind('/') + 1);
  if (base.rfind("lib", 0) == 0) base = base.substr(3);
  if (auto so = base.find(".so"); so != std::string::npos) base = base.substr(0, so);
  return base;
}

void collect_libraries(const std::string& dir, std::vector<std::string>& files, std::set<std::pair<dev_t, ino_t>>& seen,
                       const std::vector<std::string>& prefixes = {}) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* de = readdir(d)) {
    std::string n = de->d_name;
    if (n.find(".so") == std::string::npos) continue;
    if (!prefixes.empty() &&
        std::none_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return n.rfind(p, 0) == 0; }))
      continue;
    names.push_back(n);
  }
  closedir(d);
  // Prefer the fully versioned name (libfoo.so.1.2.3) for the path: sort longest name first per inode.
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  for (const auto& n : names) {
    std::string p = dir + "/" + n;
    struct stat st;
    if (stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (!seen.insert({st.st_dev, st.st_ino}).second) continue;
    files.push_back(p);
  }
}

SdkIndex index_files(std::vector<std::string> files) {
  SdkIndex idx;
  std::sort(files.begin(), files.end());
  std::vector<Result<elf::ElfObject>> objs;
  objs.reserve(files.size());
  for (size_t i = 0; i < files.size(); ++i) objs.emplace_back(InputError{});
  tbb::parallel_for(size_t{0}, files.size(), [&](size_t i) {
    auto ident = elf::read_ident(files[i]);
    if (!ident || ident->kind != elf::ObjectKind::SharedObject) return;
    objs[i] = elf::read_object(files[i], elf::ReadOptions{false, false, true});
  });
  for (size_t i = 0; i < files.size(); ++i) {
    if (!objs[i]) continue;
    const auto& o = objs[i].value();
    uint32_t lib = static_cast<uint32_t>(idx.libraries.size());
    idx.libraries.push_back({files[i], o.soname, link_name_of(o.soname.empty() ? files[i] : o.soname)});
    for (size_t s = 1; s < o.dynamic_symbols.size(); ++s) {
      const auto& sym = o.dynamic_symbols[s];
      if (sym.is_undefined() || sym.name.empty()) continue;
      if (sym.binding != elf::Binding::Global && sym.binding != elf::Binding::Weak &&
          sym.binding != elf::Binding::GnuUnique) {
        continue;
      }
      if (sym.visibility == elf::Visibility::Hidden || sym.visibility == elf::Visibility::Internal) continue;
      if (sym.version_hidden) continue;
      const auto* def = o.definition(sym.version_index);
      idx.exports[std::string(sym.name)].push_back({lib, def && !def->is_base ? std::string(def->name) : ""});
    }
  }
  return idx;
}

}  // namespace

const SdkLibrary* SdkIndex::first_exporter(const std::string& name) const {
  auto it = exports.find(name);
  return it == exports.end() || it->second.empty() ? nullptr : &libraries[it->second.front().library];
}

SdkIndex index_libraries(const std::vector<std::string>& dirs) {
  std::vector<std::string> files;
  std::set<std::pair<dev_t, ino_t>> seen;
  for (const auto& d : dirs) collect_libraries(d, files, seen);
  return index_files(std::move(files));
}

// Global definitions in the members of the static archives in `dir` (sorted, so the first is stable).
void index_archives(const std::string& dir, SdkIndex& idx) {
  std::vector<std::string> archives;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* de = readdir(d)) {
      std::string n = de->d_name;
      if (n.size() > 2 && n.compare(n.size() - 2, 2, ".a") == 0) archives.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(archives.begin(), archives.end());
  for (const auto& path : archives) {
    auto members = elf::read_archive(path);
    if (!members) {
      idx.errors.push_back(members.error());
      continue;
    }
    for (const auto& m : members.value()) {
      for (const auto& sym : m.static_symbols) {
        if (sym.is_undefined() || sym.name.empty() || sym.type == elf::SymbolType::Section ||
            sym.type == elf::SymbolType::File ||
            (sym.binding != elf::Binding::Global && sym.binding != elf::Binding::Weak)) {
          continue;
        }
        idx.archive_definitions.emplace(std::string(sym.name), ArchiveDefinition{path, m.archive_member});
      }
    }
  }
}

SdkIndex index_sdk(const SdkOptions& options) {
  struct stat st;
  if (options.home.empty() || stat(options.home.c_str(), &st) != 0) {
    SdkIndex empty;
    empty.home = options.home;
    return empty;
  }
  std::vector<std::string> files, dirs;
  std::set<std::pair<dev_t, ino_t>> seen;
  for (const auto& d : options.library_dirs) {
    dirs.push_back(options.home + "/" + d);
    collect_libraries(dirs.back(), files, seen, options.library_prefixes);
  }
  SdkIndex idx = index_files(std::move(files));
  idx.home = options.home;
  if (options.index_archives) {
    std::set<std::pair<dev_t, ino_t>> seen_dirs;  // lib64 is often a symlink to lib
    for (const auto& d : dirs) {
      if (stat(d.c_str(), &st) != 0 || !seen_dirs.insert({st.st_dev, st.st_ino}).second) continue;
      index_archives(d, idx);
    }
  }
  source::IndexOptions io;
  for (const auto& d : options.include_dirs) io.roots.push_back(options.home + "/" + d);
  io.cache_file = options.header_cache;
  io.kinds = options.header_kinds;
  idx.headers = source::SourceIndex::build(io, &idx.header_stats);
  return idx;
}

}  // namespace mlc::sdk
