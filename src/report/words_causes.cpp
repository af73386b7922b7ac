// The sentences of shared causes (src/trace/causes.cpp's evidence): stale copies, another torch, a
// host program's API.
#include <string>

#include "common/paths.h"
#include "report/said.h"

namespace mlc::said {
namespace {

std::string version_list(const std::vector<std::string>& versions) {
  if (versions.size() <= 3) {
    std::string out;
    for (size_t i = 0; i < versions.size(); ++i) out += (i ? ", " : "") + versions[i];
    return out;
  }
  return versions.front() + " ... " + versions.back() + " (" + std::to_string(versions.size()) + " version nodes)";
}

bool system_how(loader::FoundHow how) {
  return how == loader::FoundHow::LdSoCache || how == loader::FoundHow::LdSoConf || how == loader::FoundHow::Default;
}

std::string symbols_count(size_t n) { return with_commas(n) + " symbol" + (n == 1 ? "" : "s"); }

}  // namespace

std::string CopyLacks::words() const {
  std::string lacks;
  if (!missing_versions.empty()) lacks = version_list(missing_versions);
  if (symbols > 0) lacks += (lacks.empty() ? "" : " and ") + symbols_count(symbols);
  return library + " from " + picked.path + " (" + shown_how(picked) + ") lacks " + lacks + " that " + other.path +
         " (" + shown_how(other) + ") has";
}

std::string SearchList::phrase() const {
  using loader::FoundHow;
  switch (how) {
    case FoundHow::LdLibraryPath: return "LD_LIBRARY_PATH (or --library-path)";
    case FoundHow::Preload: return "LD_PRELOAD";
    case FoundHow::Rpath: return "the DT_RPATH of " + holder;
    case FoundHow::Runpath: return "the DT_RUNPATH of " + holder;
    case FoundHow::Sdk: return "the SDK's library directory";
    case FoundHow::LdSoCache:
    case FoundHow::LdSoConf:
    case FoundHow::Default: return "the system search path (" + shown + ")";
    default: return "the search path";
  }
}

// Only the list each directory really came from is named: glibc searches DT_RPATH (of an object
// without DT_RUNPATH), then LD_LIBRARY_PATH, then the requester's DT_RUNPATH, then ld.so.cache and
// the system directories.
std::string RemoveStaleCopy::words() const {
  const std::string picked_dir = dir_of(picked.path), other_dir = dir_of(other.path);
  const std::string picked_in = picked_list.phrase(), other_in = other_list.phrase();
  std::string change;
  // A preloaded copy is loaded before any search: no order of the search paths gets past it.
  if (picked.how == loader::FoundHow::Preload)
    return "take " + picked.path +
           " out of LD_PRELOAD (or /etc/ld.so.preload): it is loaded before anything "
           "searches, so every DT_NEEDED of its soname gets it";
  if (system_how(other.how)) {
    change = "take " + picked_dir + " out of " + picked_in;
  } else if (picked_in == other_in) {
    change = "reorder " + picked_in + " so that " + other_dir + " comes before " + picked_dir;
  } else if (other.how == loader::FoundHow::Sdk) {
    change = system_how(picked.how)
                 ? "add " + other_dir + " to LD_LIBRARY_PATH (or --library-path), which the loader searches before " +
                       picked_in
                 : "put " + other_dir + " before " + picked_dir + " in " + picked_in;
  } else {
    change = "take " + picked_dir + " out of " + picked_in + ", which the loader searches before " + other_in;
  }
  return "remove the stale copy " + picked.path + ", or " + change;
}

std::string TorchCopyLacks::words() const {
  return holder + " was built against another version of " + library + ": the loaded " + picked.path + " (" +
         shown_how(picked) + "), the copy " + torch + " loads, lacks " + symbols_count(symbols) + " that " +
         other.path + " (" + shown_how(other) + ") has";
}
std::string InstallTorchBuiltAgainst::words() const {
  return "install the version of torch that " + holder + " was built against, or rebuild " + holder +
         " against the loaded " + library + " (" + torch + "); do not remove " + picked + ": " + torch + " loads it";
}
std::string TorchCopyLacksIt::words() const {
  return "built against another version of " + soname + ": the loaded " + picked.path + " [" +
         loader::to_string(picked.how) + "], the copy " + torch + " loads, lacks it; " + other.path + " [" +
         loader::to_string(other.how) + "] has it";
}
std::string CopyTakenLacksIt::words() const {
  return "the loader takes " + picked.path + " [" + loader::to_string(picked.how) + "] for " + soname +
         ", which lacks " + (version.empty() ? std::string("it") : "version " + version) + "; " + other.path + " [" +
         loader::to_string(other.how) + "] has it";
}

std::string HostApiSymbols::words() const {
  return symbols_count(symbols) + " of " + (python ? "the Python C API" : "Perl's XS API") + " come" +
         (symbols == 1 ? "s" : "") + " from the " + (python ? "Python interpreter" : "perl interpreter") +
         " that loads this extension (" + host + "), not from a library it links";
}
// Not `--with $(command -v python3)`: under pyenv or conda that is a shell script shim, not the
// interpreter. --python looks past shims for the first ELF python3 on PATH.
std::string CheckAsHostLoads::words() const {
  return "check it as the interpreter loads it: " +
         std::string(python ? "--python (the first python3 on PATH that is an ELF executable, past pyenv's and conda's "
                              "shims), or --python=EXE for another interpreter"
                            : "--with PERL, the perl executable itself (not a wrapper script)");
}
std::string PartOfHostApi::words() const {
  return "part of " + std::string(python ? "the Python C API" : "Perl's XS API") + ": the " + host +
         " executable that imports the extension defines it";
}

}  // namespace mlc::said
