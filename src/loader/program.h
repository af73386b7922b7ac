// Which files are programs, not libraries: glibc's dlopen refuses them, so they are checked as a
// program's start is (the file is the main map, its closure the global scope: what `ldd -r` does).
#pragma once

#include "elf/elf_object.h"

namespace mlc::loader {

// dl-load.c _dl_map_object_from_fd: an ET_EXEC file is refused ("cannot dynamically load
// executable"), and so is an ET_DYN one flagged DF_1_PIE ("cannot dynamically load
// position-independent executable"). PT_INTERP alone does not make a program: libc.so.6 and ld.so
// carry one, to run as programs too, and are loaded as libraries every day.
bool is_program(const elf::ElfObject& o);

}  // namespace mlc::loader
