// glibc's test for a file dlopen refuses as a program (program.h).
#include "loader/program.h"

namespace mlc::loader {

namespace {
constexpr uint64_t kDf1Pie = 0x08000000;  // elf.h DF_1_PIE
}

bool is_program(const elf::ElfObject& o) {
  return o.kind == elf::ObjectKind::Executable || (o.dt_flags_1 & kDf1Pie) != 0;
}

}  // namespace mlc::loader
