// Input expansion: the ELF files a list of inputs names (a directory: every shared object and program below
// it), with an error for a path that holds none.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tbb/parallel_for.h>

#include "common/paths.h"
#include "common/walk.h"
#include "elf/elf_object.h"
#include "pipeline/linkcheck.h"

namespace mlc {
namespace {

// What the dynamic loader never loads, said with what to check instead: a relocatable object or a
// static archive has undefined symbols by design (the link resolves them), so no verdict on it is
// true, and "0 undefined symbols" would be a false all-clear. Empty for anything else.
std::string never_loaded(const std::string& path, const std::optional<elf::ElfIdent>& ident) {
  if (ident && ident->kind == elf::ObjectKind::Relocatable)
    return "a relocatable object (.o), which the dynamic loader never loads: check the shared library or "
           "executable it is linked into (nm -u lists its undefined symbols)";
  if (!ident && elf::is_archive(path))
    return "a static archive (.a), which the dynamic loader never loads: check the shared library or "
           "executable it is linked into (nm -u lists its members' undefined symbols)";
  return "";
}

std::optional<elf::ElfIdent> ident_of(const std::string& path) {
  auto ident = elf::read_ident(path);
  return ident ? std::optional<elf::ElfIdent>(ident.value()) : std::nullopt;
}

// Names that no shared object or program is given (sources, Python, text and data): a directory's walk skips
// them without opening them. A name with none of these endings is identified by its first bytes.
bool never_elf(const std::string& path) {
  static const std::vector<std::string_view> kEndings = {
      ".py",    ".pyc", ".pyi", ".pyx", ".pxd", ".h",    ".hpp",  ".hh",  ".cuh",  ".c",   ".cc",
      ".cpp",   ".cu",  ".txt", ".md",  ".rst", ".json", ".yaml", ".yml", ".toml", ".cfg", ".ini",
      ".html",  ".css", ".js",  ".svg", ".png", ".jpg",  ".csv",  ".xml", ".pem",  ".mo",  ".po",
      ".typed", ".npz", ".npy", ".gz",  ".zip", ".whl",  ".pt",   ".pth", ".proto"};
  const std::string_view name(path.c_str() + path.rfind('/') + 1);
  return std::any_of(kEndings.begin(), kEndings.end(), [&](std::string_view e) { return name.ends_with(e); });
}

// Every ELF shared object or executable below dir. Symlinks (libfoo.so -> libfoo.so.1) are skipped:
// the file they name is listed itself. `unloadable` gets the first .o or .a seen (for the error when
// the directory holds nothing else).
void collect_dir(const std::string& dir, std::vector<std::string>& out, std::string& unloadable) {
  // A site directory holds tens of thousands of sources, text and data files: those are not opened. The
  // rest are walked and identified in parallel, then taken in the walk's (sorted) order.
  const std::vector<std::string> candidates = collect_tree(
      dir, [](const std::string& path, const struct stat& st) { return st.st_size >= 64 && !never_elf(path); },
      WalkOptions{false, false});
  enum class Kind { Loadable, Unloadable, Other };
  std::vector<Kind> kinds(candidates.size(), Kind::Other);
  tbb::parallel_for(size_t{0}, candidates.size(), [&](size_t i) {
    auto ident = ident_of(candidates[i]);
    if (ident && (ident->kind == elf::ObjectKind::SharedObject || ident->kind == elf::ObjectKind::Executable))
      kinds[i] = Kind::Loadable;
    else if (!never_loaded(candidates[i], ident).empty()) kinds[i] = Kind::Unloadable;
  });
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (kinds[i] == Kind::Loadable) out.push_back(candidates[i]);
    else if (kinds[i] == Kind::Unloadable && unloadable.empty()) unloadable = candidates[i];
  }
}

}  // namespace

std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::vector<InputError>& errors) {
  std::vector<std::string> files;
  for (const auto& in : inputs) {
    struct stat st;
    if (stat(in.c_str(), &st) != 0) {
      errors.push_back({in, std::string("cannot open: ") + std::strerror(errno)});
    } else if (S_ISDIR(st.st_mode)) {
      size_t before = files.size();
      std::string unloadable;
      collect_dir(in, files, unloadable);
      if (files.size() == before && unloadable.empty()) {
        errors.push_back({in, "no ELF shared object or executable in this directory"});
      } else if (files.size() == before) {
        errors.push_back({in,
                          "no ELF shared object or executable in this directory, only relocatable objects or "
                          "static archives (such as " +
                              unloadable +
                              "), which the dynamic loader never loads: "
                              "check the shared library or executable they are linked into"});
      }
    } else if (std::string what = never_loaded(in, ident_of(in)); !what.empty()) {
      errors.push_back({in, what});
    } else {
      files.push_back(in);
    }
  }
  return files;
}

}  // namespace mlc
