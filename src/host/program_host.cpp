// Programs that load plugins, found by where plugins sit (a directory named after the program, or the
// program's own prefix), and what they export: read, never run.
#include "host/program_host.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "common/paths.h"
#include "host/host_api.h"
#include "loader/program.h"

namespace mlc::host {
namespace {

// Directory names that say where a file is, not whose plugin it is.
bool generic_dir_name(const std::string& name) {
  static const std::set<std::string> generic = {"lib",
                                                "lib32",
                                                "lib64",
                                                "libexec",
                                                "usr",
                                                "local",
                                                "share",
                                                "opt",
                                                "plugins",
                                                "plugin",
                                                "modules",
                                                "x86_64-linux-gnu",
                                                "aarch64-linux-gnu",
                                                "i386-linux-gnu",
                                                "arm-linux-gnueabihf",
                                                "powerpc64le-linux-gnu",
                                                "s390x-linux-gnu",
                                                ""};
  return generic.count(name) > 0;
}

bool is_executable_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

void add_if_program(const std::string& path, std::set<std::string>& seen, std::vector<std::string>& out) {
  if (!is_executable_file(path) || !seen.insert(path).second) return;
  auto ident = elf::read_ident(path);
  if (!ident) return;
  if (ident->kind == elf::ObjectKind::Executable || ident->kind == elf::ObjectKind::SharedObject) out.push_back(path);
}

}  // namespace

std::vector<std::string> candidate_programs(const std::string& plugin, const ProgramSearch& search) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  // A program named like the plugin's directory: /usr/lib/x86_64-linux-gnu/tc/m_xt.so -> /usr/sbin/tc.
  std::string dir = dir_name(plugin);
  for (int up = 0; up < 3 && dir != "/" && dir != "."; ++up, dir = dir_name(dir)) {
    const std::string name = base_name(dir);
    if (generic_dir_name(name)) continue;
    const std::string word = name.substr(0, name.find_first_of("-_"));
    for (const auto& candidate : {name, word, word + "d"})
      for (const auto& bin : search.bin_dirs) add_if_program(search.sysroot + bin + "/" + candidate, seen, out);
  }
  // The programs of the plugin's own prefix: /opt/app/lib/plugins/x.so -> /opt/app/bin/*.
  dir = dir_name(dir_name(plugin));
  for (int up = 0; up < 3 && dir != "/" && dir != "."; ++up, dir = dir_name(dir)) {
    if (dir == search.sysroot + "/usr" || dir == search.sysroot + "/usr/local" || dir == search.sysroot) continue;
    for (const char* sub : {"/bin", "/sbin"}) {
      DIR* d = opendir((dir + sub).c_str());
      if (!d) continue;
      std::vector<std::string> names;
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') names.emplace_back(e->d_name);
      closedir(d);
      std::sort(names.begin(), names.end());
      if (names.size() > 200) names.resize(200);  // a prefix's own programs, not a system's bin/
      for (const auto& n : names) add_if_program(dir + sub + "/" + n, seen, out);
    }
  }
  return out;
}

std::optional<std::string> plugin_host(const std::string& plugin, const elf::ElfObject& object,
                                       const ProgramSearch& search) {
  if (loader::is_program(object)) return std::nullopt;  // a program is the main program of its own process
  // Views into the object's string table (a library like libtorch_cpu imports 5,000 names: copied into
  // strings, they were most of the plan's 2 ms here).
  const std::vector<uint32_t> undefined = object.undefined_dynamic_symbols();
  std::vector<std::string_view> wanted;
  wanted.reserve(undefined.size());
  for (uint32_t i : undefined) {
    elf::Symbol s = object.dynamic_symbol(i);
    if (s.binding == elf::Binding::Global) wanted.push_back(object.name_of(s));
  }
  if (wanted.empty()) return std::nullopt;
  // An XS module takes Perl's API from the perl that loads it: the program itself (Debian builds libperl into
  // it and exports the API) or the libperl it links.
  std::vector<std::string> programs;
  if (std::any_of(wanted.begin(), wanted.end(), [](std::string_view n) { return host_api_of(n) == HostApi::Perl; }))
    for (const auto& bin : search.bin_dirs)
      if (is_executable_file(search.sysroot + bin + "/perl")) programs.push_back(search.sysroot + bin + "/perl");
  for (auto& p : candidate_programs(plugin, search)) programs.push_back(std::move(p));
  for (const auto& program : programs) {
    auto obj = elf::read_object(program, elf::ReadOptions{.relocations = false, .lookup_only = true});
    if (!obj || !loader::is_program(*obj)) continue;
    if (std::any_of(obj->needed.begin(), obj->needed.end(),
                    [](const std::string& n) { return n.rfind("libperl", 0) == 0; }))
      return program;
    std::vector<uint32_t> found;
    for (const auto& name : wanted) {
      found.clear();
      obj->find_defined(name, elf::gnu_hash(name), found);
      for (uint32_t index : found) {
        elf::Symbol s = obj->dynamic_symbol(index);
        if (s.binding != elf::Binding::Local && s.visibility != elf::Visibility::Hidden &&
            s.visibility != elf::Visibility::Internal)
          return program;
      }
    }
  }
  return std::nullopt;
}

}  // namespace mlc::host
