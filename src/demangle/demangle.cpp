// c++filt calls cplus_demangle with DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE and the "auto" style
// (Itanium, then the other styles libiberty knows); we do the same so outputs agree byte for byte.
#include "demangle/demangle.h"

#include <cstdlib>
#include <memory>

extern "C" {
#include <demangle.h>
}

namespace mlc::demangle {

bool is_mangled(std::string_view name) { return name.size() > 2 && name[0] == '_' && name[1] == 'Z'; }

std::string demangle(std::string_view mangled) {
  std::string name(mangled);
  std::unique_ptr<char, decltype(&std::free)> out(cplus_demangle(name.c_str(), DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE),
                                                  &std::free);
  return out ? std::string(out.get()) : name;
}

}  // namespace mlc::demangle
