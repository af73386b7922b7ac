// The one rule between the files a run writes and the files it reads: no output replaces a file the
// run reads or loads, and no two outputs are one file. Both tools call it where they open their outputs,
// with everything they read; a clobber is one line naming both uses, said before anything is written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlc {

// Why a run reads a file. The refusal names the use; an output may be a file of its own kind only
// where writing it is the point (musa-stubgen merges into its stub files, which the source index
// reads as sources; --apply patches the build files the build model read; --update-baseline rewrites
// the baseline it was given).
enum class ReadKind {
  Input,         // a named file, or an ELF file checked under a named directory
  Loaded,        // an object the load of an input brings in (--with's and the interpreter's included)
  Context,       // a file named as context: --mapping, --report, --codegen-yaml, --cmake-lists
  BaselineFile,  // the --baseline
  Source,        // a file the source index read
  BuildFile,     // a build file the build model read (CMakeLists.txt, CMakeCache.txt, compile_commands.json)
  Sdk,           // an SDK's or CUDA's library or header
};

struct FileRead {
  std::string path;  // absolute
  std::string what;  // how a refusal names it: "the input ./lib.so", "the --baseline bl.txt"
  ReadKind kind = ReadKind::Input;
  // Its size when the reader knows it from this run (the source index stats every file it walks): an
  // output of another size is another file, so the 10^5 files of a source tree need no stat(2) again.
  std::optional<uint64_t> size = std::nullopt;
};

struct FileWrite {
  std::string option;                 // "-o", "--out-cpp", "--apply"
  std::string shown;                  // the path as the user named it (or as the tool chose it)
  std::string path;                   // absolute
  std::vector<ReadKind> may_be = {};  // the reads it may coincide with: what writing it is for
};

// The refusal of the first write (in the order given) that is an earlier write or a file read, e.g.
// "-o bl.txt: it is the --baseline bl.txt; refusing to overwrite a file the run reads"; nothing
// when there is none. Files are the same when they have one device and inode once symbolic links are
// followed (an output that does not exist yet is compared by its resolved path, with the other
// outputs only). "" and "-" (standard output), a descriptor path (/dev/stdout, /dev/fd/N) and an
// existing node that is no regular file (/dev/null, a FIFO) are written in place and replace nothing.
std::optional<std::string> clobbered(const std::vector<FileWrite>& writes, const std::vector<FileRead>& reads);

}  // namespace mlc
