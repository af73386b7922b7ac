// A plugin's host program: a library that a program dlopens may leave undefined what that program exports
// (built with --export-dynamic): tc's plugins in /usr/lib/<triplet>/tc/ take addattr_l and get_u32 from
// /usr/sbin/tc. Such symbols are provided by the program that loads the plugin, not missing from a library.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "elf/elf_object.h"

namespace mlc::host {

// Where the programs that may load `plugin` are looked for: `bin_dirs` (the system's, for a program named
// like the plugin's directory or one above it: tc for .../tc/m_xt.so; or like its first word, as itself or
// as a daemon: packagekitd for .../packagekit-backend/libpk_backend_apt.so), and the bin/ and sbin/ directories
// of the plugin's own prefix (up to three levels above it; not the system's /usr or /).
struct ProgramSearch {
  std::vector<std::string> bin_dirs = {"/usr/sbin", "/usr/bin", "/usr/libexec", "/sbin", "/bin"};
  std::string sysroot = "";
};

// The executables that may load `plugin`, in search order.
std::vector<std::string> candidate_programs(const std::string& plugin, const ProgramSearch& search);

// The program that loads `plugin` (headers and .dynsym read): the first candidate program that exports a
// name the plugin references and does not define (a strong, non-weak undefined .dynsym entry). Nullopt for
// a program, or when no candidate exports any of them.
std::optional<std::string> plugin_host(const std::string& plugin, const elf::ElfObject& object,
                                       const ProgramSearch& search);

}  // namespace mlc::host
