// An index of every declaration in the porting tree and the source roots, looked up by name. It is
// built in parallel and kept in a cache file; on the next run only files whose size or mtime
// changed are scanned again.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "source/scanner.h"

namespace mlc::source {

struct SourceFile {
  std::string path;  // absolute
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint16_t root = 0;  // index into IndexOptions::roots
};

// An #include directive of a translation unit: the name it includes as written ("fmt/format-inl.h") and
// its line.
struct IncludeLine {
  std::string header;
  uint32_t line = 0;
};

// The #include lines of a text, in order (`#include "x"` and `#include <x>`, with or without blanks).
std::vector<IncludeLine> scan_includes(std::string_view text);

struct IndexedEntity : Entity {
  uint32_t file = 0;
};

// The file kinds the scanner reads, by suffix: C, C++ and CUDA's own, to which a caller adds the
// dialects ports are written in (backend::file_kinds(): .mu .muh, .hip), facts of the backends.
struct FileKinds {
  std::vector<std::string> any = {".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hh", ".hpp", ".cuh", ".inl"};
  std::vector<std::string> kernel = {".cu", ".cuh"};                         // CUDA's and its ports' kernels
  std::vector<std::string> compiled = {".c", ".cc", ".cpp", ".cxx", ".cu"};  // translation units
};

struct IndexOptions {
  std::vector<std::string> roots;  // directories (or single files) to index
  std::string cache_file;          // empty: no persistent cache
  // The build's -D definitions: of a namespace macro defined in several #if branches, the branch they
  // select is taken (else the first definition).
  std::map<std::string, std::string> defines = {};
  // Roots the build suggested rather than the user named (its source directory...): each walk stops
  // after walk_limit files, so a source directory that turns out to be a home directory costs a bound.
  std::set<std::string> bounded_roots = {};
  size_t walk_limit = 200000;
  FileKinds kinds = {};  // which files are read
};

struct IndexStats {
  size_t files = 0;
  size_t scanned = 0;  // read and scanned in this run
  size_t reused = 0;   // taken from the cache
  size_t bytes_scanned = 0;
  bool cache_loaded = false;
  bool cache_written = false;
  std::vector<std::string> cut_short;  // bounded roots whose walk reached walk_limit
};

bool is_source_file(std::string_view path, const FileKinds& kinds);      // a source or header of those kinds
bool is_compiled_source(std::string_view path, const FileKinds& kinds);  // a translation unit, not a header

class SourceIndex {
 public:
  // macro_roots: directories whose headers are read only for their #defines (a build directory's
  // generated config/export headers): namespace macros used in the roots resolve against them.
  static SourceIndex build(const IndexOptions& options, IndexStats* stats = nullptr,
                           const std::vector<std::string>& macro_roots = {});

  const std::vector<SourceFile>& files() const { return files_; }
  const std::vector<IndexedEntity>& entities() const { return entities_; }
  const std::vector<std::string>& roots() const { return roots_; }
  // Entities whose last name component is `name`.
  std::vector<const IndexedEntity*> lookup(std::string_view name) const;
  // Normalized target of a typedef/using with this last component, or empty.
  std::string alias(std::string_view name) const;
  // The same, preferring the typedef declared in the innermost scope enclosing `scope` ("a::b").
  std::string alias(std::string_view name, std::string_view scope) const;
  // A normalized type with every alias it names replaced by its target, as seen from `scope`:
  // typedefs and using-aliases (class-scope ones included) inside compound types ("SelfType const&"),
  // alias templates with their arguments substituted ("buffer_context<char>"), and
  // conditional_t<is_same<A, B>::value, X, Y> decided. The result is normalized again.
  std::string expand_aliases(std::string_view type, std::string_view scope) const;
  const SourceFile& file_of(const IndexedEntity& e) const { return files_[e.file]; }
  // The #include lines of files()[file] when it is a translation unit (is_compiled_source), read when it
  // was scanned and cached with its entities: who includes a header is known without reading the tree.
  const std::vector<IncludeLine>& includes(size_t file) const { return includes_[file]; }

 private:
  const IndexedEntity* alias_entity(std::string_view name, std::string_view scope) const;
  void build_lookup();
  void resolve_macro_scopes(const std::map<std::string, std::string>& defines);
  void resolve_using_directives();
  std::vector<std::string> roots_;
  std::vector<SourceFile> files_;
  std::vector<IndexedEntity> entities_;
  std::vector<std::vector<IncludeLine>> includes_;  // per file
  std::unordered_map<std::string_view, std::vector<uint32_t>> by_name_;
};

}  // namespace mlc::source
