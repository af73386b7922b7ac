// The resident set of a run over a whole tree: the file mappings of the objects read natively can
// give their pages back while the objects stay usable (a directory of any size, bounded memory).
#pragma once

#include <cstddef>

namespace mlc::elf {

// `native` is ElfObject::native (opaque; null for an object read through libelf, which holds no
// mapping of ours). MADV_DONTNEED on the mapping: its pages leave the resident set and are read again from the page
// cache, unchanged, on the next access. Returns the bytes of the mapping.
size_t release_resident_pages(void* native);

}  // namespace mlc::elf
