// glibc's test for a file dlopen refuses as a program (program.h).
#include "loader/program.h"

namespace mlc::loader {

bool is_program(const elf::ElfObject& o) { return o.kind == elf::ObjectKind::Executable || o.pie(); }

}  // namespace mlc::loader
